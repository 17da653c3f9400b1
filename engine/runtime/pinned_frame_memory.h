// PinnedFrameMemory: the process's memory resource for frame buffers that the GPU
// reads, e.g. exactqd's frame assembler: Frame::Create(geometry, PinnedFrameMemory()).
//
// CUDA build: a PinnedFrameResource (pinned_frame_resource.h) over cudaHostAlloc
// (portable: page-locked for every device), limited to RuntimeConfig::pinned_frame_bytes;
// beyond the limit, or without a usable GPU or driver, frames get ordinary memory and
// nothing fails. The default resource when the limit is 0 or RuntimeConfig::gpus is
// empty (CPU only). Without CUDA: the default resource.
//
// Built on first use from the RuntimeConfig of that moment (set it first) and never
// destroyed, so frames freed during static destruction stay valid.
#ifndef EXACTQ_ENGINE_RUNTIME_PINNED_FRAME_MEMORY_H_
#define EXACTQ_ENGINE_RUNTIME_PINNED_FRAME_MEMORY_H_

#include <memory_resource>

#include "engine/runtime/pinned_frame_resource.h"

namespace exactq {

std::pmr::memory_resource* PinnedFrameMemory();
// Its counters (all zero when it is the default resource).
PinnedFrameStats PinnedFrameMemoryStats();

}  // namespace exactq

#endif  // EXACTQ_ENGINE_RUNTIME_PINNED_FRAME_MEMORY_H_
