// Which chunks of a segment sum the slabs of its chunk stage have staged (device_slabs.cuh).
//
// A workspace's chunk records outlive the frame that wrote them, so a slab left out (or
// staged out of order) would leave an earlier frame's records in place, and the groups
// and the walk would compose them as this frame's: a wrong sum with no refusal. So each
// slab records itself here, and the batch's walk refuses (kSegmentUnstaged) unless the
// slabs covered [0, chunks) in order. Host and device code: the decisions are tested on
// the host (slab_staging_test.cc); the device applies them in one thread per sum.
#ifndef EXACTQ_ENGINE_EXACT_INTERNAL_SLAB_STAGING_H_
#define EXACTQ_ENGINE_EXACT_INTERNAL_SLAB_STAGING_H_

#include <cstdint>

#include "engine/platform/host_device.h"

namespace exactq {
namespace exact {
namespace gpu {

struct SlabStaging {
  int32_t staged_chunks;  // chunks [0, staged_chunks) staged, slab after slab
  int32_t out_of_order;   // 1: a slab did not start where the one before it ended
};

// The staging after slab [first, end). A slab at chunk 0 starts the sum afresh (it also
// empties the pools); any other slab must start where the one before it ended.
EXACTQ_HD inline SlabStaging AfterSlab(SlabStaging s, int64_t first, int64_t end) {
  if (first == 0) return {static_cast<int32_t>(end), 0};
  if (first != s.staged_chunks) return {s.staged_chunks, 1};
  return {static_cast<int32_t>(end), s.out_of_order};
}

// Whether the walk may compose the records of a sum of `chunks` chunks.
EXACTQ_HD inline bool EveryChunkStaged(SlabStaging s, int64_t chunks) {
  return s.out_of_order == 0 && s.staged_chunks == chunks;
}

}  // namespace gpu
}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_INTERNAL_SLAB_STAGING_H_
