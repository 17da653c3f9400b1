// The segment pipeline's stages 1 and 2: the approximate chunk sums (or a metric's), the
// 32-chunk run sums and their prefix, and the order the chunk stage takes the runs in.
#ifndef EXACTQ_ENGINE_EXACT_INTERNAL_SEGMENT_PREFIX_CUH_
#define EXACTQ_ENGINE_EXACT_INTERNAL_SEGMENT_PREFIX_CUH_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "engine/exact/internal/event_walk_chunk_sums.cuh"
#include "engine/exact/internal/segment_layout.cuh"

namespace exactq {
namespace exact {
namespace gpu {

// 2. One block: the 32-chunk sums and their exclusive prefix (for ApproximatePrefix).
// Also starts the pools empty.

inline constexpr int kSuperPrefixThreads = 1024;

__device__ inline double WarpSumDouble(double v) {
#pragma unroll
  for (int d = 16; d >= 1; d >>= 1) v = __dadd_rn(v, __shfl_xor_sync(kFullMask, v, d));
  return v;
}

// The runs of 32 chunks a thread of a kThreads block takes in the one-block passes over
// them (SuperPrefixOfSums, OrderRunsByCrossing): consecutive, [begin, end).
struct RunRange {
  int64_t begin;
  int64_t end;
};
template <int kThreads>
__device__ inline RunRange RunRangeOfThread(int64_t supers) {
  const int64_t per = (supers + kThreads - 1) / kThreads;
  const int tid = static_cast<int>(threadIdx.x);
  const int64_t begin = tid * per < supers ? tid * per : supers;
  return {begin, begin + per < supers ? begin + per : supers};
}

// The exclusive prefix of the 32-chunk sums, by one block of kThreads (a fixed order: the
// same advice on every run).
// Runs first .. first + supers - 1 only, from `carry`, the prefix before run `first` (a
// slab of the chunk stage: EnqueueSegmentedSumsChunkStage).
template <int kThreads>
__device__ inline void SuperPrefixOfSums(int64_t supers, const SegmentWorkspace& ws, int64_t first = 0,
                                         double carry = 0.0) {
  using Scan = cub::BlockScan<double, kThreads, cub::BLOCK_SCAN_WARP_SCANS>;
  __shared__ typename Scan::TempStorage scan_temp;
  auto [begin, end] = RunRangeOfThread<kThreads>(supers);
  begin += first;
  end += first;
  double mine = 0.0;
  for (int64_t j = begin; j < end; ++j) mine = __dadd_rn(mine, __ldcg(ws.super_sums + j));
  double before = 0.0;
  Scan(scan_temp).ExclusiveScan(mine, before, 0.0, [](double a, double b) { return __dadd_rn(a, b); });
  if (first > 0) before = __dadd_rn(carry, before);
  for (int64_t j = begin; j < end; ++j) {
    ws.super_prefix[j] = before;
    before = __dadd_rn(before, __ldcg(ws.super_sums + j));
  }
}

// Crossings first (PlanOptions::crossings_first). The chunk stage's slowest chunks are the
// few where the sum crosses a binade or zero (summarised lane by lane, 10-20 us for one
// warp on the H200); taken in index order, the last of them start late and end the stage
// while most SMs are idle. So the stage takes first the runs of 32 chunks whose
// approximate path, chunk by chunk, comes near a frame's edge, then the others: the
// same records in another order (the bits and the steps do not depend on it).

// The extremes of the approximate path through run `super` at chunk ends, from its start
// (lane k holds chunk k's approximate sum, 0 past the end). Whole warp; lane 0 writes.
__device__ inline void WriteRunPathExtremes(int64_t super, double chunk_sum, const SegmentWorkspace& ws) {
  const int lane = LaneId();
  double incl = chunk_sum;
#pragma unroll
  for (unsigned d = 1; d < 32; d <<= 1) {
    const double other = __shfl_up_sync(kFullMask, incl, d);
    if (lane >= static_cast<int>(d)) incl = __dadd_rn(other, incl);
  }
  double low = fmin(0.0, incl);
  double high = fmax(0.0, incl);
#pragma unroll
  for (int d = 16; d >= 1; d >>= 1) {
    low = fmin(low, __shfl_xor_sync(kFullMask, low, d));
    high = fmax(high, __shfl_xor_sync(kFullMask, high, d));
  }
  if (lane == 0) {
    ws.super_low[super] = low;
    ws.super_high[super] = high;
  }
}

// ws.super_order: the runs whose path may leave the frame of the prefix before them
// (PredictCrossing), then the others, each in index order. One block of kThreads, after
// SuperPrefixOfSums (each thread reads the prefixes it wrote).
template <int kThreads>
__device__ inline void OrderRunsByCrossing(int64_t supers, const SegmentWorkspace& ws) {
  using Scan = cub::BlockScan<int, kThreads, cub::BLOCK_SCAN_WARP_SCANS>;
  __shared__ typename Scan::TempStorage scan_temp;
  const auto [begin, end] = RunRangeOfThread<kThreads>(supers);
  const auto crossing = [&](int64_t j) {
    return PredictCrossing(ws.super_prefix[j], __ldcg(ws.super_low + j), __ldcg(ws.super_high + j));
  };
  int mine = 0;
  for (int64_t j = begin; j < end; ++j) mine += crossing(j) ? 1 : 0;
  int first = 0;
  int total = 0;
  Scan(scan_temp).ExclusiveSum(mine, first, total);
  int64_t plain = total + (begin - first);  // the runs before `begin` that do not cross come after all that do
  int64_t crossed = first;
  for (int64_t j = begin; j < end; ++j) ws.super_order[crossing(j) ? crossed++ : plain++] = static_cast<int>(j);
}

// The chunk that the chunk stage's warp `slot` takes: slots cover SuperCount(chunks) runs
// of 32, taken in ws.super_order; a chunk >= chunks means none.
__device__ inline int64_t ChunkOfSlot(int64_t slot, const SegmentWorkspace& ws) {
  return (static_cast<int64_t>(__ldcg(ws.super_order + (slot >> 5))) << 5) + (slot & 31);
}
inline unsigned ChunkStageGrid(int64_t chunks) { return WarpGrid(SuperCount(chunks) * 32, kSegmentWarps); }

// Chunks [first_chunk, end_chunk) of `chunks` (first_chunk a multiple of 32): their runs'
// sums and prefix, after those of the slabs before ([0, chunks): the whole sum). The first
// slab starts the pools empty.
template <int kThreads = kSuperPrefixThreads>
__device__ inline void SegmentSuperPrefixBlock(int64_t chunks, const SegmentWorkspace& ws, int64_t first_chunk,
                                               int64_t end_chunk) {
  WaitForPriorKernel();
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = LaneId();
  const int64_t first_run = first_chunk >> 5;
  const int64_t end_run = SuperCount(end_chunk);
  if (tid == 0 && first_run == 0) EmptySegmentPools(ws);
  for (int64_t s = first_run + (tid >> 5); s < end_run; s += kThreads / 32) {
    const int64_t c = (s << 5) + lane;
    const double v = WarpSumDouble(c < chunks ? __ldcg(ws.chunk_sums + c) : 0.0);
    if (lane == 0) ws.super_sums[s] = v;
  }
  __syncthreads();  // the block's writes above are visible to the whole block
  const double carry =
      first_run > 0 ? __dadd_rn(__ldcg(ws.super_prefix + first_run - 1), __ldcg(ws.super_sums + first_run - 1)) : 0.0;
  SuperPrefixOfSums<kThreads>(end_run - first_run, ws, first_run, carry);
  // No run order here: with chunk sums from a metric's kernel (ssimulacra2, SSIM) the
  // order's extra work in this one block cost more than it saved (ssimulacra2 at 4K, 8
  // in flight: 422 against 447 fps; SSIM's segment sums 76 against 69 us on the H200).
}

template <int kThreads = kSuperPrefixThreads>
__global__ void __launch_bounds__(kThreads) SegmentSuperPrefix(int64_t chunks, SegmentWorkspace ws) {
  SegmentSuperPrefixBlock<kThreads>(chunks, ws, 0, chunks);
}

// 1 + 2 in one kernel, for terms the pipeline reads itself: one block per run of 32 chunks
// (kApproximateWarps warps, 32 / kApproximateWarps chunks each) writes each chunk's approximate sum
// (ChunkApproximateSum, as ChunkApproximateSumsWarp) and the run's sum (its 32 chunk sums
// by a butterfly: a fixed order); the last block to finish forms the prefix of the run
// sums and empties the pools. (As two kernels, the second, one block, took 8 us of a
// 4K plane's 115 on the H200: mostly waiting for its loads, one warp-iteration at a time.)
inline constexpr int kApproximateWarps = 16;
inline constexpr int kApproximateThreads = kApproximateWarps * 32;

template <class TermSource>
__global__ void __launch_bounds__(kApproximateThreads)
    SegmentApproximateSums(TermSource source, size_t n, int64_t chunks, SegmentWorkspace ws) {
  static_assert(32 % kApproximateWarps == 0, "a block's warps share its 32 chunks evenly");
  __shared__ double run_sums[32];
  __shared__ int is_last;
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const int lane = LaneId();
  const int64_t super = blockIdx.x;
#pragma unroll 1
  for (int k = warp; k < 32; k += kApproximateWarps) {
    const int64_t c = (super << 5) + k;
    double v = 0.0;
    if (c < chunks) {
      v = ChunkApproximateSum(source, n, c);
      if (lane == 0) ws.chunk_sums[c] = v;
    }
    if (lane == 0) run_sums[k] = v;
  }
  __syncthreads();
  if (warp == 0) {
    const double v = WarpSumDouble(run_sums[lane]);
    WriteRunPathExtremes(super, run_sums[lane], ws);
    if (lane == 0) {
      ws.super_sums[super] = v;
      __threadfence();  // the run's sum before the count that says it is there
      is_last = atomicAdd(&ws.counters->supers_done, 1) == static_cast<int>(gridDim.x) - 1;
    }
  }
  __syncthreads();
  if (!is_last) return;
  __threadfence();  // every block's run sum is visible here (their fences came before their counts)
  SuperPrefixOfSums<kApproximateThreads>(SuperCount(chunks), ws);
  OrderRunsByCrossing<kApproximateThreads>(SuperCount(chunks), ws);
  if (threadIdx.x == 0) EmptySegmentPools(ws);
}

}  // namespace gpu
}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_INTERNAL_SEGMENT_PREFIX_CUH_
