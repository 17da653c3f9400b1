// The chunk stage under a previous frame's plan, the confirm stage, and the redo of the
// chunks a plan changed or the strided pass refused.
#ifndef EXACTQ_ENGINE_EXACT_INTERNAL_SEGMENT_PLAN_REUSE_CUH_
#define EXACTQ_ENGINE_EXACT_INTERNAL_SEGMENT_PLAN_REUSE_CUH_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "engine/exact/internal/segment_chunk_stage.cuh"
#include "engine/exact/internal/segment_layout.cuh"

namespace exactq {
namespace exact {
namespace gpu {

// 3'. A stream's next frame under the previous frame's plan (EnqueueSegmentedSumReusingPlan).
//
// The plan (each chunk's frame, from the approximate prefix before it) changes little from
// one frame of a video to the next: only chunks near a place where the running sum crosses
// a binade move to another frame. So the chunk stage runs first, under the plan the
// previous frame left in ws.plan_before, in the same pass over the terms that forms this
// frame's approximate chunk sums (one read of the terms instead of two). Then, once this
// frame's prefix is known (formed as the fresh pipeline forms it, bit for bit), each chunk
// whose record this frame's plan would not have given is summarised again. The kept
// records are bit for bit those of the fresh pipeline (the same frame, the same run from
// the same terms, the same checks passed), so the walk, its steps and its result are the
// fresh pipeline's; a stale plan costs the chunks it changed.
//
// Measured on the H200 and not kept: a single pass for every sum, each chunk waiting for
// the sums published by the chunks before it (deterministic prefix, no plan needed). Its
// chunk stage took 76 us on a 4K plane against 25 + 41 for the two passes: a warp could
// start its summary only once every earlier chunk was loaded, so the grid's loads and
// summaries no longer overlapped.

// Chunk c's approximate sum from its tile, in ChunkApproximateSum's order (the same bits as
// SegmentApproximateSums gives; the tile holds zeros past the end, as that reads them).
__device__ inline double TileApproximateSum(ConstTileRows rows, int lane) {
  double x[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) x[i] = rows[i][lane];
  return WarpTreeSum(x);
}

// Chunk c's approximate sum into ws.chunk_sums; the last chunk of its run of 32 to arrive
// writes the run's sum (the butterfly of its 32 chunk sums: SegmentApproximateSums' bits)
// and leaves the run's count at 0 for the next frame. Whole warp.
__device__ inline void WriteChunkSum(int64_t c, double approximate_sum, int64_t chunks, const SegmentWorkspace& ws) {
  const int lane = LaneId();
  const int64_t super = c >> 5;
  const int64_t first = super << 5;
  const unsigned in_run = static_cast<unsigned>(chunks - first < 32 ? chunks - first : 32);
  bool last = false;
  if (lane == 0) {
    ws.chunk_sums[c] = approximate_sum;
    __threadfence();  // the sum is visible before the count that says it is there
    last = atomicAdd(ws.super_arrivals + super, 1u) == in_run - 1;
  }
  if (!__shfl_sync(kFullMask, last, 0)) return;
  __threadfence();  // every chunk of the run counted after its sum was visible
  const int64_t k = first + lane;
  const double chunk_sum = k < first + in_run ? __ldcg(ws.chunk_sums + k) : 0.0;
  const double run_sum = WarpSumDouble(chunk_sum);
  WriteRunPathExtremes(super, chunk_sum, ws);
  if (lane == 0) {
    ws.super_sums[super] = run_sum;
    ws.super_arrivals[super] = 0;
  }
}

// One warp per chunk: this frame's approximate chunk sum, and the chunk as one strided run
// under the frame planned from the previous frame's prefix. The record is marked planned
// when that run was taken; otherwise the confirm stage summarises the chunk (nothing
// here goes lane by lane: those chunks are near a crossing, where the old plan is the least
// likely to hold).
template <class TermSource>
__global__ void __launch_bounds__(kSegmentWarps * 32, 6)
    SegmentChunkUnderPreviousPlan(TermSource source, size_t n, int64_t chunks, PlanOptions options,
                                  SegmentWorkspace ws) {
  static_assert(std::is_same<TermSource, DeviceArrayTerms>::value,
                "TileApproximateSum reads stored terms: a mapped source would map the padding");
  __shared__ double tile[kSegmentWarps][kSubchunks][kTileStride];
  WaitForPriorKernel();
  const int lane = LaneId();
  TileRows rows = tile[threadIdx.x >> 5];
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kSegmentWarps;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * kSegmentWarps + (threadIdx.x >> 5); c < chunks; c += stride) {
    const size_t base = static_cast<size_t>(c) * kChunkTerms;
    const int count = TermsInChunk(n, base);
    __syncwarp();  // the previous chunk's readers are done with the tile
    StartChunkLoad(source, base, count, rows, lane);
    const double previous_before = __ldcg(ws.plan_before + c);  // its load overlaps the terms'
    FinishChunkLoad(source);
    __syncwarp();
    const double approximate_sum = TileApproximateSum(rows, lane);
    WriteChunkSum(c, approximate_sum, chunks, ws);
    const bool planned = TryStridedChunk(source, rows, count, c, previous_before, approximate_sum, options, ws);
    if (lane == 0) ws.records[c].planned = planned ? 1 : 0;
  }
}

// Whether chunk c's planned record is the one this frame's plan gives: the same frame, and
// TryStridedChunk's prefix-dependent checks pass from this frame's prefix `before` (its
// other checks depend only on the terms and the frame, and they passed).
__device__ inline bool PlannedRecordHolds(const ChunkRecord& rec, int64_t c, double before, double approximate_sum,
                                          const PlanOptions& options) {
  if (__ldcg(&rec.planned) == 0) return false;
  const int frame = __ldcg(&rec.head.frame);
  return frame == PlanFrame(before, options.mode, options.fixed_frame, static_cast<uint64_t>(c) * kSubchunks) &&
         ApproximateSumStaysInFrame(before, approximate_sum) &&
         StridedRunStaysInFrame(before, __ldcg(&rec.head.run.lo[0]), __ldcg(&rec.head.run.hi[0]), frame);
}

// One block, between the two: the exclusive prefix of the run sums, as SegmentApproximateSums'
// last block forms it (the same block size, so the same bits).
template <int kThreads = kApproximateThreads>
__global__ void __launch_bounds__(kThreads) SegmentRunSumsPrefix(int64_t chunks, SegmentWorkspace ws) {
  WaitForPriorKernel();
  if (threadIdx.x == 0) EmptySegmentPools(ws);
  SuperPrefixOfSums<kThreads>(SuperCount(chunks), ws);
  OrderRunsByCrossing<kThreads>(SuperCount(chunks), ws);
}

// The confirm stage, after SegmentRunSumsPrefix (or, for a batch, SegmentSuperPrefix), in
// two kernels.
//   SegmentConfirmRuns: one warp per run of 32 chunks, lane l for chunk 32s + l: this
//     frame's prefix before the chunk (ApproximatePrefix's bits: for each lane, the
//     butterfly of the run's chunk sums before it), kept as the next frame's plan; a
//     planned record that still holds stays, every other chunk is listed in ws.redo
//     (counted in replanned_chunks).
//   SegmentRedoChunks: the warps of a grid of about one resident wave take the listed
//     chunks in turn, each summarised from its terms as the fresh chunk stage would.
// (Measured and not kept: a warp and a tile per chunk that checked and then summarised was
// bound by the latency of its loads at 24 warps per SM: on the H200 its blocks kept every
// SM busy for 40 us of a 4K channel's six sums, a third of the fresh chunk stage.)
__device__ inline void SegmentConfirmRun(int64_t super, int64_t chunks, const PlanOptions& options,
                                         const SegmentWorkspace& ws) {
  const int lane = LaneId();
  const int64_t c = (super << 5) + lane;
  const bool in_chunks = c < chunks;
  const double own = in_chunks ? __ldcg(ws.chunk_sums + c) : 0.0;
  double in_run = 0.0;  // lane 0: no chunk of the run before it (ApproximatePrefix's +0)
#pragma unroll 4
  for (int j = 1; j < 32; ++j) {
    const double before_j = WarpSumDouble(lane < j ? own : 0.0);
    if (lane == j) in_run = before_j;
  }
  const double before = __dadd_rn(__ldcg(ws.super_prefix + super), in_run);
  bool redo = false;
  if (in_chunks) {
    ws.plan_before[c] = before;
    redo = !PlannedRecordHolds(ws.records[c], c, before, own, options);
  }
  const uint32_t listed = __ballot_sync(kFullMask, redo);
  if (listed == 0) return;
  int first = 0;
  if (lane == 0) first = atomicAdd(&ws.counters->replanned_chunks, __popc(listed));
  first = __shfl_sync(kFullMask, first, 0);
  if (redo) ws.redo[first + __popc(listed & ((1u << lane) - 1u))] = static_cast<int>(c);
}

inline constexpr int kConfirmWarps = 4;
template <int kWarps = kConfirmWarps>
__global__ void __launch_bounds__(kWarps * 32)
    SegmentConfirmRuns(int64_t chunks, PlanOptions options, SegmentWorkspace ws) {
  const int64_t block = blockIdx.x;
  const int64_t grid = gridDim.x;
  WaitForPriorKernel();
  const int64_t supers = SuperCount(chunks);
  for (int64_t s = block * kWarps + (threadIdx.x >> 5); s < supers; s += grid * kWarps) {
    SegmentConfirmRun(s, chunks, options, ws);
  }
}

// The redo grid of one sum: a warp per chunk of the plane, at most `cap` blocks. After
// the confirm stage, about one resident wave of the H200 (132 SMs, 6 blocks each): a
// changed plan can list many chunks. (A warp per run of 32 chunks, fewer blocks, was
// measured on the H200: slower, 476 against 491 fps at 4K and 1,440 against 1,588 at
// 1080p with 8 in flight; the chunks to form again cluster where a crossing moved, and
// one warp took several in turn.)
inline constexpr unsigned kRedoBlocksPerWave = 132 * 6;
inline unsigned RedoGrid(int64_t chunks, unsigned cap) {
  const unsigned all = WarpGrid(chunks, kSegmentWarps);
  return all < cap ? all : cap;
}

// kStridedTried: the chunks were listed by SegmentStridedChunksBatch, whose strided try
// on the same terms, prefix and plan refused them, so the tile path starts at once (the
// try from the tile, the same arithmetic on the same values, would refuse them again:
// about a tenth of a listed chunk's instructions on the H200 profile). After the confirm
// stage the chunks have not been tried under this frame's plan.
template <bool kStridedTried, class TermSource>
__device__ inline void SegmentRedoChunksBlock(const TermSource& source, size_t n, const PlanOptions& options,
                                              const SegmentWorkspace& ws, int64_t block, int64_t grid) {
  __shared__ double tile[kSegmentWarps][kSubchunks][kTileStride];
  WaitForPriorKernel();
  const int lane = LaneId();
  TileRows rows = tile[threadIdx.x >> 5];
  const int64_t listed = __ldcg(&ws.counters->replanned_chunks);
  for (int64_t i = block * kSegmentWarps + (threadIdx.x >> 5); i < listed; i += grid * kSegmentWarps) {
    const int64_t c = __ldcg(ws.redo + i);
    const double before = __ldcg(ws.plan_before + c);  // the prefix SegmentConfirmRun or SegmentStridedChunksBlock kept
    const size_t base = static_cast<size_t>(c) * kChunkTerms;
    const int count = TermsInChunk(n, base);
    __syncwarp();  // the previous chunk's readers are done with the tile
    StartChunkLoad(source, base, count, rows, lane);
    FinishChunkLoad(source);
    __syncwarp();
    if constexpr (kStridedTried) {
      SegmentChunkFromTile(source, rows, count, c, before, options, ws);
    } else {
      SegmentChunkInTile(source, rows, count, c, before, __ldcg(ws.chunk_sums + c), options, ws);
    }
  }
}

template <class TermSource>
__global__ void __launch_bounds__(kSegmentWarps * 32, 6)
    SegmentRedoChunks(TermSource source, size_t n, PlanOptions options, SegmentWorkspace ws) {
  SegmentRedoChunksBlock</*kStridedTried=*/false>(source, n, options, ws, blockIdx.x, gridDim.x);
}

}  // namespace gpu
}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_INTERNAL_SEGMENT_PLAN_REUSE_CUH_
