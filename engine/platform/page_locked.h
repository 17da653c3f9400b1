// Whether host memory is page-locked (cudaMallocHost/cudaHostAlloc, or registered by its
// owner): the DMA engine can then read it directly, so a twin uploads such a picture
// without first copying it into its own pinned staging buffer. The server's frame
// buffers come from page-locked memory where it can; a caller's ordinary vectors do not.
#ifndef EXACTQ_ENGINE_PLATFORM_PAGE_LOCKED_H_
#define EXACTQ_ENGINE_PLATFORM_PAGE_LOCKED_H_

#include <cstddef>

namespace exactq {

// [p, p + bytes) is page-locked host memory (checked at both ends; bytes >= 1).
bool IsPageLocked(const void* p, size_t bytes);

}  // namespace exactq

#endif  // EXACTQ_ENGINE_PLATFORM_PAGE_LOCKED_H_
