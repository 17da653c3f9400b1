// Events a host thread waits on with cudaEventSynchronize. CUDA busy-waits on an event
// unless it was made with cudaEventBlockingSync, whatever cudaSetDeviceFlags says (the
// device flags cover stream and device waits only), so every event the host waits on
// is made here, under one process-wide choice: blocked on the driver (the default, as
// the server's --gpu_wait=block) or spinning (--gpu_wait=spin, lowest latency).
//
//   EXACTQ_RETURN_IF_CUDA_ERROR(kWho, CreateHostWaitEvent(&done));
//   ... cudaEventRecord(done, stream); ... cudaEventSynchronize(done);
#ifndef EXACTQ_ENGINE_PLATFORM_HOST_WAIT_EVENT_H_
#define EXACTQ_ENGINE_PLATFORM_HOST_WAIT_EVENT_H_

#include <cuda_runtime_api.h>

namespace exactq {

// Set before events are made (engine/runtime's ApplyGpuWait); events made earlier keep
// their way of waiting.
void SetHostWaitsBlock(bool block);
bool HostWaitsBlock();

// cudaEventCreateWithFlags: cudaEventBlockingSync when host waits block, and
// cudaEventDisableTiming unless `timing` (cudaEventElapsedTime reads the event).
cudaError_t CreateHostWaitEvent(cudaEvent_t* event, bool timing = false);

}  // namespace exactq

#endif  // EXACTQ_ENGINE_PLATFORM_HOST_WAIT_EVENT_H_
