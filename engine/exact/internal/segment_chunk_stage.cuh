// The segment pipeline's stage 3, one warp per chunk: the chunk's record, from the strided
// form or lane by lane from the tile (crossing lanes, segments composed by a warp scan).
#ifndef EXACTQ_ENGINE_EXACT_INTERNAL_SEGMENT_CHUNK_STAGE_CUH_
#define EXACTQ_ENGINE_EXACT_INTERNAL_SEGMENT_CHUNK_STAGE_CUH_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "engine/exact/internal/segment_chunk_loads.cuh"
#include "engine/exact/internal/segment_layout.cuh"
#include "engine/exact/internal/segment_strided_chunk.cuh"

namespace exactq {
namespace exact {
namespace gpu {

// A sum's first chunk, its terms in the warp's tile: the exact sum before it is +0, so it
// needs no plan. The warp maps the terms in place (each lane its row: the map's arithmetic
// in parallel), then lane 0 adds the plain terms in order from +0, the loop's own adds, so
// its chain is the adds alone (adding through the map in lane 0 made the redo's launches
// longer on the H200: 270p median 19 -> 26 us). The record is one step of one term, that
// sum s: the walk's first add, +0 + s, gives s's own bits (a left fold from +0 never
// gives -0 in round to nearest). The lane-by-lane form crossed a binade in nearly every
// lane of this chunk (the sum rises from 0), and its crossing lanes' terms went through
// the groups and the walk one by one. The record is the form the lane-by-lane path gives
// a chunk whose every lane crosses: mixed, no head or tail run, its steps in the middle
// pool.
template <class TermSource>
__device__ inline void FirstChunkAsOneTerm(const TermSource& source, TileRows rows, int count,
                                           const SegmentWorkspace& ws) {
  const int lane = LaneId();
  const int nsub = (count + kSubchunkTerms - 1) / kSubchunkTerms;
  if (lane < nsub) {
    const auto row = RowOf(source, rows[lane]);
    const int len = ClampLen(count - lane * kSubchunkTerms);
#pragma unroll 4
    for (int t = 0; t < len; ++t) rows[lane][t] = row[t];
  }
  __syncwarp();
  if (lane != 0) return;
  double s = 0.0;
  for (int l = 0; l < nsub; ++l) {
    const double* row = rows[l];
    const int len = ClampLen(count - l * kSubchunkTerms);
#pragma unroll 8
    for (int t = 0; t < len; ++t) s = __dadd_rn(s, row[t]);
  }
  const int middle_base = atomicAdd(&ws.counters->middle_taken, 1);
  const int lane_base = atomicAdd(&ws.counters->lanes_taken, 1);
  const bool overflow = middle_base + 1 > ws.middle_capacity || lane_base + 1 > ws.lane_capacity;
  if (overflow) atomicExch(&ws.counters->overflow, 1);
  ChunkRecord& rec = ws.records[0];
  rec.mixed = 1;
  rec.middle_base = middle_base;
  rec.middle_count = overflow ? 0 : 1;
  rec.head.frame = kNoRunFrame;
  rec.tail.frame = kNoRunFrame;
  if (overflow) return;
  double* out = ws.lane_terms + static_cast<size_t>(lane_base) * 32;
  out[0] = s;
  for (int t = 1; t < 32; ++t) out[t] = 0.0;  // the walk stages all 32
  SegmentStep step;
  step.run = IdentityRun();
  step.frame = 1;  // a terms step: frame holds the count
  step.lane_terms = lane_base;
  ws.middle[middle_base] = step;
}

// Chunk c of one sum, its terms in the warp's tile (`rows`, loaded and visible to the
// whole warp): the approximate prefix `before`, each lane's approximate path and frame,
// the crossing lanes, and the other lanes composed per segment into ws.records[c]. The
// tile is the warp's own: a sum's first chunk (FirstChunkAsOneTerm) leaves its mapped
// terms there. Counted in ws.counters->tile_chunks.
template <class TermSource>
__device__ inline void SegmentChunkFromTile(const TermSource& source, TileRows rows, int count, int64_t c,
                                            double before, const PlanOptions& options, const SegmentWorkspace& ws) {
  const int lane = LaneId();
  if (lane == 0) atomicAdd(&ws.counters->tile_chunks, 1);
  if (c == 0) {
    FirstChunkAsOneTerm(source, rows, count, ws);
    return;
  }
  const uint32_t lanes_below = (1u << lane) - 1u;
  const auto row = RowOf(source, rows[lane]);
  const int len = ClampLen(count - lane * 32);
  const int nsub = (count + kSubchunkTerms - 1) / kSubchunkTerms;
  const bool in_chunk = lane < nsub;
  const uint32_t valid_mask = nsub >= 32 ? 0xffffffffu : ((1u << nsub) - 1u);

  // Each lane's sum and the extremes of its path, relative to its start: from the lane's
  // summary under the chunk's frame (its exact rounded path, in units of that frame)
  // where every lane has a usable one, the common case; else from plain adds.
  // A chunk planned from a prefix of 0 (after chunks that sum to about 0; a sum's first
  // chunk went to FirstChunkAsOneTerm) gets the frame of 0, the
  // tiny frame, where no term above 2^-1021 or so fits: its summary there would be formed
  // lane by lane (two loops over the row) only to be dropped, on a chunk that is always
  // formed here. Each lane's own frame below is summarised anew instead: the same function
  // of the same terms, so the same runs and records.
  // The summaries take a lane with a tie in binary64 too (SummarizeTermsBinary64WithTies,
  // not the integer fold): ties are common in ssimulacra2's edge sums, and the fold's
  // two-parity loop was the longest part of a listed chunk's chain.
  const int chunk_frame = PlanFrame(before, options.mode, options.fixed_frame, static_cast<uint64_t>(c) * kSubchunks);
  const bool chunk_frame_tried = before != 0.0;
  RunSummary chunk_run = IdentityRun();
  if (in_chunk && chunk_frame_tried) chunk_run = SummarizeTermsBinary64WithTies(row, len, chunk_frame);
  const bool usable = chunk_frame_tried && !(chunk_run.flags & (kSpecialTerms | kUnfitEven | kUnfitOdd));
  double s = 0.0;
  double low = 0.0;
  double high = 0.0;
  const bool from_summaries = FastFrame(chunk_frame) && __all_sync(kFullMask, usable);
  if (from_summaries) {
    if (chunk_run.flags & kNonZero) {
      const int shift = chunk_frame - 52;
      const int64_t lo = chunk_run.lo[0] < chunk_run.lo[1] ? chunk_run.lo[0] : chunk_run.lo[1];
      const int64_t hi = chunk_run.hi[0] > chunk_run.hi[1] ? chunk_run.hi[0] : chunk_run.hi[1];
      // x * 2^shift: one exact multiply unless the power is below the normal range.
      const auto scale = [shift](double x) { return shift >= -1022 ? x * Pow2(shift) : scalbn(x, shift); };
      s = scale(Int64ToDouble(chunk_run.d[0]));
      low = fmin(0.0, scale(Int64ToDouble(lo)));
      high = fmax(0.0, scale(Int64ToDouble(hi)));
    }
  } else {
#pragma unroll 4
    for (int t = 0; t < len; ++t) {
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
  const double excl = __shfl_up_sync(kFullMask, incl, 1);
  const double start = lane == 0 ? before : __dadd_rn(before, excl);
  const int frame = PlanFrame(start, options.mode, options.fixed_frame, static_cast<uint64_t>(c) * kSubchunks + lane);
  bool crossing = in_chunk && (PredictCrossing(start, low, high) || !isfinite(s));
  RunSummary run = IdentityRun();
  if (in_chunk && !crossing) {
    run = frame == chunk_frame && chunk_frame_tried ? chunk_run : SummarizeTermsBinary64WithTies(row, len, frame);
    // Special terms and unfit parts are refused by any check: add them one by one.
    if (run.flags & (kSpecialTerms | kUnfitEven | kUnfitOdd)) crossing = true;
  }
  const uint32_t cross_mask = __ballot_sync(kFullMask, crossing);
  const int prev_frame = __shfl_up_sync(kFullMask, frame, 1);
  const bool prev_crossing = lane > 0 && ((cross_mask >> (lane - 1)) & 1u) != 0;
  const bool starts_segment = lane == 0 || crossing || prev_crossing || frame != prev_frame;
  const uint32_t start_mask = __ballot_sync(kFullMask, in_chunk && starts_segment) & valid_mask;
  ChunkRecord& rec = ws.records[c];

  if (cross_mask == 0 && start_mask == 1u) {
    // Uniform: one run under one frame.
    const RunSummary total = WarpTotal(run);  // lanes past the end hold the identity
    if (lane == 0) WriteUniformRecord(rec, total, frame);
    return;
  }

  // Mixed: a segmented inclusive scan over the lanes (a segment starts at a set bit).
  RunSummary v = run;
  bool head_of_segment = !in_chunk || starts_segment;
  WarpSegmentedScan(v, head_of_segment);
  // Items, in lane order: every crossing lane, and every lane that ends a segment.
  const bool next_starts = lane + 1 >= nsub || ((start_mask >> (lane + 1)) & 1u) != 0;
  const bool ends_segment = in_chunk && !crossing && next_starts;
  const uint32_t item_mask = __ballot_sync(kFullMask, in_chunk && (crossing || ends_segment));
  const int items = __popc(item_mask);
  const int item = __popc(item_mask & lanes_below);
  const int has_head = (cross_mask & 1u) == 0 ? 1 : 0;
  const int has_tail = (((cross_mask >> (nsub - 1)) & 1u) == 0 && !(has_head && items == 1)) ? 1 : 0;
  const int middle_count = items - has_head - has_tail;
  const int crossing_lanes = __popc(cross_mask & valid_mask);
  int middle_base = 0;
  int lane_base = 0;
  bool overflow = false;
  if (lane == 0) {
    middle_base = middle_count > 0 ? atomicAdd(&ws.counters->middle_taken, middle_count) : 0;
    lane_base = atomicAdd(&ws.counters->lanes_taken, crossing_lanes);
    overflow = middle_base + middle_count > ws.middle_capacity || lane_base + crossing_lanes > ws.lane_capacity;
    if (overflow) atomicExch(&ws.counters->overflow, 1);
  }
  middle_base = __shfl_sync(kFullMask, middle_base, 0);
  lane_base = __shfl_sync(kFullMask, lane_base, 0);
  overflow = __shfl_sync(kFullMask, overflow, 0);
  if (lane == 0) {
    rec.mixed = 1;
    rec.middle_base = middle_base;
    rec.middle_count = overflow ? 0 : middle_count;
    if (!has_head) rec.head.frame = kNoRunFrame;
    if (!has_tail) rec.tail.frame = kNoRunFrame;
  }
  if (overflow || !in_chunk || !(crossing || ends_segment)) return;
  SegmentStep step;
  if (crossing) {
    const int index = lane_base + __popc(cross_mask & lanes_below);
    double* out = ws.lane_terms + static_cast<size_t>(index) * 32;
#pragma unroll 4
    for (int t = 0; t < 32; ++t) out[t] = t < len - (EXACTQ_MUTANT(2) ? 1 : 0) ? row[t] : 0.0;
    step.run = IdentityRun();
    step.frame = len;  // a terms step: frame holds the count
    step.lane_terms = index;
  } else {
    step.run = v;
    step.frame = frame;
    step.lane_terms = -1;
  }
  if (has_head && item == 0) {
    rec.head = step;
  } else if (has_tail && item == items - 1) {
    rec.tail = step;
  } else {
    ws.middle[middle_base + item - (EXACTQ_MUTANT(1) ? 0 : has_head)] = step;
  }
}

// Chunk c's record from its terms in the warp's tile, planned from `before`: one strided
// run where TryStridedChunk takes it, else lane by lane.
template <class TermSource>
__device__ inline void SegmentChunkInTile(const TermSource& source, TileRows rows, int count, int64_t c, double before,
                                          double approximate_sum, const PlanOptions& options,
                                          const SegmentWorkspace& ws) {
  if (TryStridedChunk(source, rows, count, c, before, approximate_sum, options, ws)) return;
  SegmentChunkFromTile(source, rows, count, c, before, options, ws);
}

// Block `block` of `grid` (the kernels below pass their own index, or a batch's). One
// tile per warp and one chunk per warp in the launch of EnqueueSegmentedSum (the loop is
// for grids that are smaller). Measured on the H200 and not kept: two tiles per warp in
// a resident grid, the next chunk's copies in flight while a chunk is summarised (4K
// plane 38 against 33 us; ssimulacra2 at 4K 435 against 445 fps with 8 in flight): the
// summaries then ran beside the copies, three times slower per chunk.
// kCrossingsFirst: the chunks in ws.super_order's runs (a separate instantiation: the
// slot mapping in the batched kernel, even switched off, made it spill on sm_90 and cost
// ssimulacra2 6% at 4K).
template <bool kCrossingsFirst, class TermSource>
__device__ inline void SegmentChunkWarpBlock(const TermSource& source, size_t n, int64_t chunks,
                                             const PlanOptions& options, const SegmentWorkspace& ws, int64_t block,
                                             int64_t grid) {
  __shared__ double tile[kSegmentWarps][kSubchunks][kTileStride];
  WaitForPriorKernel();
  const int lane = LaneId();
  TileRows rows = tile[threadIdx.x >> 5];
  const int64_t stride = grid * kSegmentWarps;
  const int64_t slots = kCrossingsFirst ? SuperCount(chunks) * 32 : chunks;
  for (int64_t slot = block * kSegmentWarps + (threadIdx.x >> 5); slot < slots; slot += stride) {
    const int64_t c = kCrossingsFirst ? ChunkOfSlot(slot, ws) : slot;
    if (kCrossingsFirst && c >= chunks) continue;
    const size_t base = static_cast<size_t>(c) * kChunkTerms;
    const int count = TermsInChunk(n, base);
    // Coalesced reads (lane l: terms l, l+32, ...), transposed so that lane k holds sub-chunk k.
    __syncwarp();  // the previous chunk's readers are done with the tile
    StartChunkLoad(source, base, count, rows, lane);
    double approximate_sum;
    const double before = ApproximatePrefix(c, ws, &approximate_sum);  // its loads overlap the terms'
    if (lane == 0) ws.plan_before[c] = before;                         // the next frame's plan, where it is reused
    FinishChunkLoad(source);
    __syncwarp();
    SegmentChunkInTile(source, rows, count, c, before, approximate_sum, options, ws);
  }
}

template <bool kCrossingsFirst, class TermSource>
__global__ void __launch_bounds__(kSegmentWarps * 32, 6)  // 6 blocks: 24 warps per SM
    SegmentChunkWarp(TermSource source, size_t n, int64_t chunks, PlanOptions options, SegmentWorkspace ws) {
  SegmentChunkWarpBlock<kCrossingsFirst>(source, n, chunks, options, ws, blockIdx.x, gridDim.x);
}

}  // namespace gpu
}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_INTERNAL_SEGMENT_CHUNK_STAGE_CUH_
