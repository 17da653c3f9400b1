// The chunk stage's fast form: a whole chunk as ONE run from strided columns
// (TryStridedChunk), ties applied by a warp scan; taken by nearly every chunk.
#ifndef EXACTQ_ENGINE_EXACT_INTERNAL_SEGMENT_STRIDED_CHUNK_CUH_
#define EXACTQ_ENGINE_EXACT_INTERNAL_SEGMENT_STRIDED_CHUNK_CUH_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "engine/exact/internal/segment_chunk_loads.cuh"
#include "engine/exact/internal/segment_layout.cuh"

namespace exactq {
namespace exact {
namespace gpu {

// A lane's strided sums over its column of a whole chunk; `first` is its first term's
// r (lane 0's is the chunk's first term).
template <class Column>
__device__ inline void StridedLaneSums(const Column& column, double scale, StridedSums& mine, double& first) {
  if constexpr (Column::kNonNegative) {
    first = AddNonNegativeStridedTerm(mine, column[0], scale);
#pragma unroll 4
    for (int i = 1; i < kSubchunks; ++i) AddNonNegativeStridedTerm(mine, column[i], scale);
    mine.magnitude = mine.sum;
  } else {
    first = AddStridedTerm(mine, column[0], scale);
#pragma unroll 4  // 8 or more: more registers (the strided batch pass is held to 40)
    for (int i = 1; i < kSubchunks; ++i) AddStridedTerm(mine, column[i], scale);
  }
}

// The second pass, for a chunk with a tie: its ties (warp-uniform result); false if some
// x/u is NaN or infinite, or the chunk has more than kMaxStridedTies ties (the tile
// path's lanes take a chunk of ties faster: on the H200 an all-tie plane's chunk stage
// took 0.25 ms this way, 0.07 through the tile). ssimulacra2's edge sums have ties in up
// to 70% of their chunks, a few each. The steps' masks come from independent ballots
// (lane i keeps step i's), each step is summarised on its own (SummarizeTieStep) and the
// summaries are applied in order by a warp scan (WarpApplyTieSteps): StridedTieStep's
// ties without its 32 dependent steps.
inline constexpr int kMaxStridedTies = 32;

// ApplyTieStep over the warp's 32 steps in order, lane i holding step i's summary; the
// result in every lane.
__device__ inline StridedTies WarpApplyTieSteps(const StridedTieStepSummary& step) {
  const int lane = LaneId();
  // The running parity after each step: the steps compose as p -> has_tie ? after : p ^
  // through (a reset or a flip), an associative scan from parity 0.
  bool reset = step.has_tie;
  uint32_t parity = step.has_tie ? step.parity_after : step.parity_through;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const bool reset_before = __shfl_up_sync(kFullMask, reset, d);
    const uint32_t parity_before = __shfl_up_sync(kFullMask, parity, d);
    if (lane >= d && (!reset || EXACTQ_MUTANT(5))) {
      reset = reset_before;
      parity ^= parity_before;
    }
  }
  const uint32_t parity_below = __shfl_up_sync(kFullMask, parity, 1);  // every lane: a _sync call is whole-warp
  const uint32_t parity_in = lane == 0 ? 0u : parity_below;
  const uint32_t tie_steps = __ballot_sync(kFullMask, step.has_tie);
  StridedTies ties;
  ties.parity = __shfl_sync(kFullMask, parity, 31);
  if (tie_steps == 0) return ties;
  const int first = __ffs(tie_steps) - 1;
  const uint32_t before = (parity_in ^ step.first_before) & 1u;
  const int correction =
      step.correction + (step.has_tie && lane != first && before != 0 && !EXACTQ_MUTANT(6) ? step.first_s : 0);
  ties.seen = true;
  ties.first_q = __shfl_sync(kFullMask, before, first);
  ties.first_s = __shfl_sync(kFullMask, step.first_s, first);
  ties.correction = WarpSum(correction);  // signed
  ties.count = static_cast<int>(WarpSum(static_cast<unsigned>(step.count)));
  return ties;
}

template <class Column>
__device__ inline bool StridedChunkTies(const Column& column, double scale, StridedTies& ties) {
  const int lane = LaneId();
  bool special = false;
  uint32_t tie = 0;  // lane i: step i's masks
  uint32_t odd = 0;
  uint32_t up = 0;
#pragma unroll 4
  for (int i = 0; i < kSubchunks; ++i) {
    const StridedTieTerm k = TieTermOf(column[i], scale);
    special = special | k.special;
    const uint32_t step_tie = __ballot_sync(kFullMask, k.tie);
    const uint32_t step_odd = __ballot_sync(kFullMask, k.odd);
    const uint32_t step_up = __ballot_sync(kFullMask, k.up);
    if (lane == i) {
      tie = step_tie;
      odd = step_odd;
      up = step_up;
    }
  }
  if (__any_sync(kFullMask, special)) return false;
  if (WarpSum(static_cast<unsigned>(__popc(tie))) > kMaxStridedTies) return false;
  ties = WarpApplyTieSteps(SummarizeTieStep(odd, tie, up));
  return true;
}

// A chunk that is one run under one frame.
__device__ inline void WriteUniformRecord(ChunkRecord& rec, const RunSummary& run, int frame) {
  rec.head.run = run;
  rec.head.frame = frame;
  rec.head.lane_terms = -1;
  rec.tail.frame = kNoRunFrame;
  rec.mixed = 0;
  rec.middle_base = 0;
  rec.middle_count = 0;
}

// TryStridedChunk's checks that depend on the plan's prefix `before` (the rest depend only
// on the chunk's terms and frame): the approximate path, from `before`, stays within
// PredictCrossing's margin of the frame's edges. First the chunk's approximate sum alone
// (cheap, before the run is formed); then the run's own extremes, within [lo u, hi u] of
// `before` (exact scalings: u is normal and |lo|, |hi| < 2^53; both parities have the same
// bounds), as the tile path predicts each lane's.
__device__ inline bool ApproximateSumStaysInFrame(double before, double approximate_sum) {
  return !PredictCrossing(before, fmin(0.0, approximate_sum), fmax(0.0, approximate_sum));
}
__device__ inline bool StridedRunStaysInFrame(double before, int64_t lo, int64_t hi, int frame) {
  const double u = Pow2(frame - 52);
  return !PredictCrossing(before, fmin(0.0, Int64ToDouble(lo) * u), fmax(0.0, Int64ToDouble(hi) * u));
}

// The chunk stage's first try (PlanOptions::strided_chunks): chunk c, its 1024 terms in
// the warp's tile (TryStridedChunk) or in device memory (TryStridedChunkFrom with
// MemoryColumns), as ONE run under the frame planned from `before`, each lane taking the
// chunk's column (terms l, l+32, ...: in a tile, the order the copies wrote them,
// conflict-free with the 33-double rows) and the chunk summarised by StridedChunkRun. True: the uniform
// record is written; a chunk with ties takes a second pass over the tile for them
// (StridedChunkTies). False, for the whole warp (a special term, a frame it does not
// take, a random plan, a short last chunk, or an approximate path within PredictCrossing's
// margin of the frame's edges: about one chunk per binade the sum crosses): the caller
// summarises the chunk lane by lane from the same tile, which finds the crossing lanes.
template <class Columns>
__device__ inline bool TryStridedChunkFrom(const Columns& columns, int count, int64_t c, double before,
                                           double approximate_sum, const PlanOptions& options,
                                           const SegmentWorkspace& ws) {
  const int frame = PlanFrame(before, options.mode, options.fixed_frame, static_cast<uint64_t>(c) * kSubchunks);
  // A random plan gives each sub-chunk its own frame: only the tile path follows it. The
  // last chunk of a sum, if short, too (one chunk: no loop with bounds for it; a bounded
  // copy of the loop, measured on the H200 in ssimulacra2's twin, made the whole
  // strided pass slower: 1080p 1,743 -> 1,674 fps with 16 in flight). A chunk
  // whose approximate sum already takes the path out of its frame goes to the tile at
  // once: those chunks (where the sum crosses a binade or zero) are the stage's slowest,
  // and one of them late in the grid ends the kernel after the others are done.
  if (!options.strided_chunks || options.mode == PlanMode::kRandom || !StridedFrame(frame) || count != kChunkTerms ||
      !ApproximateSumStaysInFrame(before, approximate_sum)) {
    return false;
  }
  const int lane = LaneId();
  const double scale = StridedScale(frame);
  StridedSums mine;
  double first = 0.0;
  columns.With(lane, [&](const auto& column) { StridedLaneSums(column, scale, mine, first); });
  StridedSums chunk;
  chunk.sum = WarpSumDouble(mine.sum);
  chunk.magnitude = WarpSumDouble(mine.magnitude);
  chunk.doubtful = __any_sync(kFullMask, mine.doubtful);
  chunk.nonzero = __any_sync(kFullMask, mine.nonzero);
  first = __shfl_sync(kFullMask, first, 0);
  StridedTies ties;
  if (chunk.doubtful) {
    bool fit = true;
    columns.With(lane, [&](const auto& column) { fit = StridedChunkTies(column, scale, ties); });
    if (!fit) return false;
  }
  RunSummary run;
  if (!StridedChunkRun(chunk, ties, first, run)) return false;
  if (!StridedRunStaysInFrame(before, run.lo[0], run.hi[0], frame)) return false;
  if (lane == 0) WriteUniformRecord(ws.records[c], run, frame);
  return true;
}
template <class TermSource>
__device__ inline bool TryStridedChunk(const TermSource& source, ConstTileRows rows, int count, int64_t c,
                                       double before, double approximate_sum, const PlanOptions& options,
                                       const SegmentWorkspace& ws) {
  return TryStridedChunkFrom(TileColumns<TermSource>{source, rows}, count, c, before, approximate_sum, options, ws);
}

}  // namespace gpu
}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_INTERNAL_SEGMENT_STRIDED_CHUNK_CUH_
