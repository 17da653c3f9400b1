#include "engine/platform/page_locked.h"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace exactq {

bool IsPageLocked(const void* p, size_t bytes) {
  if (p == nullptr || bytes == 0) return false;
  const void* ends[] = {p, static_cast<const uint8_t*>(p) + (bytes - 1)};
  for (const void* q : ends) {
    cudaPointerAttributes attributes;
    if (cudaPointerGetAttributes(&attributes, q) != cudaSuccess) {
      cudaGetLastError();  // not sticky; do not leave it for the next call
      return false;
    }
    // Pageable memory answers cudaMemoryTypeUnregistered.
    if (attributes.type != cudaMemoryTypeHost) return false;
  }
  return true;
}

}  // namespace exactq
