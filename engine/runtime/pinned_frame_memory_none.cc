// PinnedFrameMemory of a build without CUDA: nothing reads frames by DMA.
#include "engine/runtime/pinned_frame_memory.h"

namespace exactq {

std::pmr::memory_resource* PinnedFrameMemory() { return std::pmr::get_default_resource(); }

PinnedFrameStats PinnedFrameMemoryStats() { return {}; }

}  // namespace exactq
