#include <cuda_runtime_api.h>

#include "bench/runtime/host_pinning.h"

namespace exactq {
namespace bench {

PinnedHost::PinnedHost(void* data, size_t bytes) : data_(data) {
  pinned_ = cudaHostRegister(data, bytes, cudaHostRegisterDefault) == cudaSuccess;
  if (!pinned_) cudaGetLastError();  // not sticky; do not leave it for the next call
}

PinnedHost::~PinnedHost() {
  if (pinned_) cudaHostUnregister(data_);
}

std::string CudaPciBusId(int device) {
  char id[32] = {};
  if (cudaDeviceGetPCIBusId(id, sizeof id, device) != cudaSuccess) {
    cudaGetLastError();
    return "";
  }
  return id;
}

}  // namespace bench
}  // namespace exactq
