// Host bytes copied to the device, there when the call returns. cudaMemcpy from pageable
// memory may return before its DMA lands, and kernels on non-blocking streams (every
// twin's) do not wait for the legacy stream that carries it: a table a twin uploads when
// it is made must be whole before its first kernel reads it.
//
//   EXACTQ_RETURN_IF_CUDA_ERROR(kWho, CopyToDeviceAndWait(table, kTable, sizeof(kTable)));
#ifndef EXACTQ_ENGINE_PLATFORM_COPY_TO_DEVICE_H_
#define EXACTQ_ENGINE_PLATFORM_COPY_TO_DEVICE_H_

#include <cuda_runtime_api.h>

#include <cstddef>

namespace exactq {

cudaError_t CopyToDeviceAndWait(void* device, const void* host, size_t bytes);

}  // namespace exactq

#endif  // EXACTQ_ENGINE_PLATFORM_COPY_TO_DEVICE_H_
