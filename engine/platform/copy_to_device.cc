#include "engine/platform/copy_to_device.h"

namespace exactq {

cudaError_t CopyToDeviceAndWait(void* device, const void* host, size_t bytes) {
  if (cudaError_t e = cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, cudaStreamLegacy);
      e != cudaSuccess) {
    return e;
  }
  return cudaStreamSynchronize(cudaStreamLegacy);
}

}  // namespace exactq
