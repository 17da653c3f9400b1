#include "engine/platform/testing/cuda_device.h"

#include <cuda_runtime_api.h>

namespace exactq::testing {

std::string NoCudaDeviceReason() {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    cudaGetLastError();  // not sticky; do not leave it for the test
    return cudaGetErrorName(error);
  }
  return count == 0 ? "0 devices" : "";
}

}  // namespace exactq::testing
