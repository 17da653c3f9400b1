// PinnedFrameMemory of a CUDA build: a PinnedFrameResource over cudaHostAlloc.
#include <cuda_runtime_api.h>

#include "engine/runtime/pinned_frame_memory.h"
#include "engine/runtime/runtime_config.h"

namespace exactq {

namespace {

class CudaHostLocker final : public HostPageLocker {
 public:
  void* Allocate(size_t bytes, bool* permanent) override {
    void* block = nullptr;
    const cudaError_t error = cudaHostAlloc(&block, bytes, cudaHostAllocPortable);
    if (error == cudaSuccess) return block;
    cudaGetLastError();  // not sticky; do not leave it for an unrelated call
    *permanent = error == cudaErrorNoDevice || error == cudaErrorInsufficientDriver ||
                 error == cudaErrorInitializationError || error == cudaErrorNotPermitted ||
                 error == cudaErrorNotSupported;
    return nullptr;
  }
  void Free(void* block) override { cudaFreeHost(block); }
};

PinnedFrameResource* Pinned() {
  static PinnedFrameResource* const resource = []() -> PinnedFrameResource* {
    const RuntimeConfig& config = GetRuntimeConfig();
    if (config.pinned_frame_bytes == 0 || (config.gpus.has_value() && config.gpus->empty())) return nullptr;
    return new PinnedFrameResource(std::make_unique<CudaHostLocker>(), config.pinned_frame_bytes);
  }();
  return resource;
}

}  // namespace

std::pmr::memory_resource* PinnedFrameMemory() {
  PinnedFrameResource* pinned = Pinned();
  return pinned != nullptr ? pinned : std::pmr::get_default_resource();
}

PinnedFrameStats PinnedFrameMemoryStats() {
  PinnedFrameResource* pinned = Pinned();
  return pinned != nullptr ? pinned->stats() : PinnedFrameStats{};
}

}  // namespace exactq
