// How the device pipelines launch their kernels: after the prior kernel of the stream
// (programmatic dependent launch where the device has it), with a shared-memory allowance
// set once per kernel and device, and with optional events after each stage.
#ifndef EXACTQ_ENGINE_EXACT_INTERNAL_LAUNCH_CUH_
#define EXACTQ_ENGINE_EXACT_INTERNAL_LAUNCH_CUH_

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <utility>

#include "engine/exact/internal/device_mutants.cuh"

namespace exactq {
namespace exact {
namespace gpu {

// Programmatic dependent launch (sm_90+; a no-op elsewhere and in kernels launched
// without it). A kernel launched with LaunchAfterPrior's attribute must call
// WaitForPriorKernel before it reads or writes memory that earlier kernels of the stream
// touch: it returns once the kernel before it has completed and its writes are visible.
// (No kernel triggers its dependents early: on the H200 an early trigger in every stage
// made the segment pipeline 10 us slower, the waiting blocks taking the SMs' room, and
// one in the small stages only (prefix, chunk, groups) still 3 us slower than without
// PDL, with ssimulacra2's 4K throughput down from 358-363 to 344 fps.)
__device__ inline void WaitForPriorKernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Whether the current device has programmatic dependent launch (compute capability 9+),
// asked once per device.
inline bool ProgrammaticLaunchAvailable() {
  static std::atomic<uint64_t> known{0};
  static std::atomic<uint64_t> available{0};
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= 64) return false;
  const uint64_t bit = uint64_t{1} << device;
  if ((known.load(std::memory_order_acquire) & bit) == 0) {
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) return false;
    if (major >= 9) available.fetch_or(bit, std::memory_order_relaxed);
    known.fetch_or(bit, std::memory_order_release);
  }
  return (available.load(std::memory_order_relaxed) & bit) != 0;
}

// kernel<<<grid, block, smem, stream>>>(args...), with programmatic dependent launch
// when `programmatic` and the device has it.
template <class... Params, class... Args>
cudaError_t LaunchAfterPrior(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                             bool programmatic, Args&&... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attribute;
  config.numAttrs = programmatic && ProgrammaticLaunchAvailable() ? 1 : 0;
  return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

// A kernel's dynamic shared-memory allowance above 48 KB, set once per process, device and
// kernel (`done` is the kernel's own flag word): a call per enqueue would cost the
// caller's thread a driver call each time.
template <class Kernel>
cudaError_t AllowSharedMemoryOnce(Kernel kernel, int bytes, std::atomic<uint64_t>& done) {
  int device = 0;
  if (cudaError_t err = cudaGetDevice(&device); err != cudaSuccess) return err;
  const uint64_t bit = device >= 0 && device < 64 ? (uint64_t{1} << device) : 0;
  if (bit != 0 && (done.load(std::memory_order_relaxed) & bit) != 0) return cudaSuccess;
  const cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  if (err == cudaSuccess && bit != 0) done.fetch_or(bit, std::memory_order_relaxed);
  return err;
}

// Where EnqueueOrderedSum records events (each may be null): after each of the five kernels.
struct StageEvents {
  cudaEvent_t after[5] = {nullptr, nullptr, nullptr, nullptr, nullptr};
};

// Records stages->after[k] on `stream`, if the caller asked for stage events.
inline cudaError_t RecordStage(const StageEvents* stages, int k, cudaStream_t stream) {
  if (stages == nullptr || stages->after[k] == nullptr) return cudaSuccess;
  return cudaEventRecord(stages->after[k], stream);
}

}  // namespace gpu
}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_INTERNAL_LAUNCH_CUH_
