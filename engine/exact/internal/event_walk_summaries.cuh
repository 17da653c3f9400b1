// The event walk's stage 3: each chunk's summary under its plan and the prediction of the
// walk's refusals, with the sub-chunk scans a refused chunk will need.
#ifndef EXACTQ_ENGINE_EXACT_INTERNAL_EVENT_WALK_SUMMARIES_CUH_
#define EXACTQ_ENGINE_EXACT_INTERNAL_EVENT_WALK_SUMMARIES_CUH_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "engine/exact/internal/event_walk_layout.cuh"
#include "engine/exact/internal/launch.cuh"
#include "engine/exact/internal/warp_scans.cuh"

namespace exactq {
namespace exact {
namespace gpu {

// 3. Summaries and predictions: one warp per chunk. The warp reads the chunk coalesced
// (lane l: terms l, l+32, ...) and transposes it through shared memory so that lane k
// holds sub-chunk k (terms 32k..32k+31, in order); the chunk summary is the ordered
// composition of the 32 lane summaries.

template <class TermSource>
__global__ void __launch_bounds__(kSummaryWarps * 32)
    ChunkSummariesWarp(TermSource source, size_t n, int64_t chunks, const int* plan, const double* approximate_prefix,
                       RunSummary* summaries, uint8_t* predicted_refused, TransitionInfo* transitions, ScanSlot* slots,
                       int* slot_pool, int slot_capacity) {
  __shared__ double tile[kSummaryWarps][kSubchunks][kSubchunkTerms + 1];  // +1: no bank conflicts
  const int lane = LaneId();
  double(*rows)[kSubchunkTerms + 1] = tile[threadIdx.x >> 5];
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kSummaryWarps;
  for (int64_t w = static_cast<int64_t>(blockIdx.x) * kSummaryWarps + (threadIdx.x >> 5); w < chunks; w += stride) {
    // The last chunks first: the approximate pass read them last, so they may still be in L2.
    const int64_t c = chunks - 1 - w;
    const size_t base = static_cast<size_t>(c) * kChunkTerms;
    const int count = TermsInChunk(n, base);
    double x[32];
#pragma unroll
    for (int i = 0; i < 32; ++i) {
      const int k = i * 32 + lane;
      x[i] = k < count ? source(base + static_cast<size_t>(k)) : 0.0;
    }
    __syncwarp();  // the previous chunk's readers are done with the tile
#pragma unroll
    for (int i = 0; i < 32; ++i) rows[i][lane] = x[i];
    __syncwarp();
    const int frame = plan[c];
    const int len = ClampLen(count - lane * 32);
    const double* row = rows[lane];
    const RunSummary mine = SummarizeTermsFast(row, len, frame);
    const RunSummary total = WarpTotal(mine);
    const double before = approximate_prefix[c];
    const bool accepted = PredictAccepted(total, frame, before);  // the same in every lane
    if (lane == 0) {
      summaries[c] = total;
      predicted_refused[c] = accepted ? 0 : 1;
    }
    if (!accepted) {
      // The approximate path through the sub-chunks: where it may leave its binade.
      double s = 0.0;
      double low = 0.0;
      double high = 0.0;
#pragma unroll
      for (int t = 0; t < kSubchunkTerms; ++t) {
        if (t < len) {
          s = __dadd_rn(s, row[t]);
          low = fmin(low, s);
          high = fmax(high, s);
        }
      }
      double incl = s;
#pragma unroll
      for (unsigned d = 1; d < 32; d <<= 1) {
        const double other = __shfl_up_sync(kFullMask, incl, d);
        if (lane >= static_cast<int>(d)) incl = __dadd_rn(other, incl);
      }
      double excl = __shfl_up_sync(kFullMask, incl, 1);
      const double start = lane == 0 ? before : __dadd_rn(before, excl);
      const int nsub = (count + kSubchunkTerms - 1) / kSubchunkTerms;
      const bool in_chunk = lane < nsub;
      const bool crossing = in_chunk && (PredictCrossing(start, low, high) || !isfinite(s));
      const uint32_t crossing_mask = __ballot_sync(kFullMask, crossing);
      const uint32_t valid_mask = nsub >= 32 ? 0xffffffffu : ((1u << nsub) - 1u);
      TransitionInfo& info = transitions[c];
      const int16_t my_frame = static_cast<int16_t>(FrameOfBits(BitsOf(start)));
      info.frame[lane] = my_frame;
      const uint32_t starts = (1u | (crossing_mask << 1)) & valid_mask;
      // The sub-chunk scans the walk will need, from the terms already in shared memory:
      // for the first kMaxSlotsPerChunk predicted round starts j (frame F_j predicted at
      // sub-chunk j), scan[k] = compose(sub_j .. sub_k) under F_j. Slots come from a pool;
      // where it is exhausted the chunk gets none (the walk then forms them itself).
      int slot_count = __popc(starts);
      if (slot_count > kMaxSlotsPerChunk) slot_count = kMaxSlotsPerChunk;
      int slot_base = 0;
      if (lane == 0) {
        slot_base = atomicAdd(slot_pool, slot_count);
        if (slot_base + slot_count > slot_capacity) slot_count = 0;
      }
      slot_base = __shfl_sync(kFullMask, slot_base, 0);
      slot_count = __shfl_sync(kFullMask, slot_count, 0);
      if (lane == 0) {
        info.starts = starts;
        info.crossing = crossing_mask;
        info.slot_base = slot_base;
        info.slot_count = slot_count;
      }
      uint32_t remaining = starts;
#pragma unroll 1
      for (int t = 0; t < slot_count; ++t) {
        const int j = __ffs(remaining) - 1;
        remaining &= remaining - 1;
        const int slot_frame = __shfl_sync(kFullMask, static_cast<int>(my_frame), j);
        RunSummary part = IdentityRun();
        if (lane >= j && in_chunk) part = SummarizeTermsFast(row, len, slot_frame);
        const RunSummary scan = WarpInclusiveScanCompact(part);
        ScanSlot& out = slots[slot_base + t];
        out.scan[lane] = scan;
        if (lane == 0) {
          out.frame = slot_frame;
          out.start = j;
          out.chunk = static_cast<int32_t>(c);
          out.pad = 0;
        }
      }
    }
  }
}

}  // namespace gpu
}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_INTERNAL_EVENT_WALK_SUMMARIES_CUH_
