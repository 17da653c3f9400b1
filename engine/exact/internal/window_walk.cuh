// The window walk, for callers that form the chunk
// summaries themselves and only need a walk over (plan, summaries): one block steps over
// windows of up to 1024 same-plan chunks, composes each window with an ordered BlockScan,
// and re-plans a refused chunk in sub-chunks on the spot. It is exact, but its sequential
// steps cost several microseconds each (global loads and block scans on the critical
// path); OrderedSumCuda uses the event walk (event_walk.cuh) instead, which
// prepares the refused chunks in parallel.
//
//   ChunkApproximateSums  grid = chunks: an approximate (tree) sum per chunk;
//   PlanFromPrefix        one block: deterministic prefix of those sums -> a frame per chunk;
//   ChunkSummaries        grid = chunks: each chunk's RunSummary under its planned frame;
//   OrderedWalk           one block: the exact walk (windows, longest accepted prefix, re-plan).
#ifndef EXACTQ_ENGINE_EXACT_INTERNAL_WINDOW_WALK_CUH_
#define EXACTQ_ENGINE_EXACT_INTERNAL_WINDOW_WALK_CUH_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cuda/functional>

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "engine/exact/internal/block_chunk.cuh"
#include "engine/exact/internal/plan_options.cuh"
#include "engine/exact/ordered_sum_algebra.h"

namespace exactq {
namespace exact {
namespace gpu {

template <class TermSource>
__global__ void __launch_bounds__(kBlockThreads)
    ChunkApproximateSums(TermSource source, size_t n, int64_t chunks, double* chunk_sums) {
  __shared__ BlockOrderedChunk::TempStorage temp;
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    double x[kTermsPerThread];
    int valid;
    LoadLaneTerms(source, n, c, threadIdx.x, x, valid);
    const double sum = BlockOrderedChunk::ApproximateSum(temp, x, valid);
    if (threadIdx.x == 0) chunk_sums[c] = sum;
    __syncthreads();  // temp is reused by the next chunk
  }
}

inline constexpr int kPlanThreads = 512;

// The approximate prefix before each chunk, tile by tile with a carry: one block, so the
// association (and the plan) is the same on every run. (A template only so that the
// header can be included by several .cu files.)
template <int kThreads = kPlanThreads>
__global__ void __launch_bounds__(kThreads)
    PlanFromPrefix(const double* chunk_sums, int64_t chunks, PlanOptions options, int* plan) {
  using Scan = cub::BlockScan<double, kThreads>;
  __shared__ typename Scan::TempStorage temp;
  double carry = 0.0;
  for (int64_t tile = 0; tile < chunks; tile += kThreads) {
    const int64_t c = tile + threadIdx.x;
    const double x = c < chunks ? chunk_sums[c] : 0.0;
    double before;
    double tile_total;
    Scan(temp).ExclusiveSum(x, before, tile_total);
    if (c < chunks) {
      plan[c] = PlanFrame(__dadd_rn(carry, before), options.mode, options.fixed_frame, static_cast<uint64_t>(c));
    }
    carry = __dadd_rn(carry, tile_total);
    __syncthreads();  // temp is reused by the next tile
  }
}

template <class TermSource>
__global__ void __launch_bounds__(kBlockThreads)
    ChunkSummaries(TermSource source, size_t n, int64_t chunks, const int* plan, RunSummary* summaries) {
  __shared__ BlockOrderedChunk::TempStorage temp;
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    double x[kTermsPerThread];
    int valid;
    LoadLaneTerms(source, n, c, threadIdx.x, x, valid);
    const RunSummary run = BlockOrderedChunk::Summarize(temp, x, valid, plan[c]);
    if (threadIdx.x == 0) summaries[c] = run;
    __syncthreads();
  }
}

// ---------------------------------------------------------------------------------
// The walk.

inline constexpr int kWindowChunks = kBlockThreads * kTermsPerThread;  // chunks per scan window

struct WalkShared {
  using Scan = cub::BlockScan<RunSummary, kBlockThreads>;
  using IntReduce = cub::BlockReduce<int, kBlockThreads>;
  union {
    typename Scan::TempStorage scan;
    typename IntReduce::TempStorage reduce;
  } temp;
  double staged[kChunkTerms];  // a refused chunk's terms, for the one-by-one adds
  uint64_t sum_bits;           // the exact running sum
  int window;                  // broadcasts from thread 0
  int accepted;
};

// Smallest value over the block, in every thread. Ends with the block synchronised, so
// temp may be reused right after.
__device__ inline int BlockMin(WalkShared& sh, int* slot, int value) {
  __syncthreads();  // the previous user of temp is done
  const int m = WalkShared::IntReduce(sh.temp.reduce).Reduce(value, ::cuda::minimum<>{});
  if (threadIdx.x == 0) *slot = m;
  __syncthreads();
  return *slot;
}

// Adds chunk c (refused as a whole) to the exact sum: sub-chunks under the exact frame,
// scanned and checked like the chunks; a refused sub-chunk goes term by term on lane 0.
template <class TermSource>
__device__ void AddChunkByReplan(WalkShared& sh, const TermSource& source, size_t n, int64_t c, WalkOutput& counts) {
  const int lane = threadIdx.x;
  double x[kTermsPerThread];
  int valid;
  LoadLaneTerms(source, n, c, lane, x, valid);
#pragma unroll
  for (int j = 0; j < kTermsPerThread; ++j) sh.staged[lane * kTermsPerThread + j] = x[j];
  const size_t first = static_cast<size_t>(c) * kChunkTerms;
  const int count = TermsInChunk(n, first);
  const int subchunks = (count + kSubchunkTerms - 1) / kSubchunkTerms;
  const int my_subchunk = lane / kThreadsPerSubchunk;
  const bool ends_subchunk = lane % kThreadsPerSubchunk == kThreadsPerSubchunk - 1;
  __syncthreads();  // staged terms and sum_bits visible to all

  int sub = 0;
  while (sub < subchunks) {
    const uint64_t s = sh.sum_bits;
    const int frame = FrameOfBits(s);  // the exact sum's frame: the right plan from here on
    RunSummary mine = IdentityRun();
    if (my_subchunk >= sub) {
#pragma unroll
      for (int j = 0; j < kTermsPerThread; ++j) {
        if (j < valid) AppendTerm(mine, BitsOf(x[j]), frame);
      }
    }
    RunSummary prefix;  // sub-chunks sub .. mine, composed in order
    __syncthreads();
    WalkShared::Scan(sh.temp.scan).InclusiveScan(mine, prefix, ComposeRuns());
    int refused = subchunks;
    if (ends_subchunk && my_subchunk >= sub && my_subchunk < subchunks) {
      uint64_t trial = s;
      if (!TryApplyRun(trial, prefix, frame)) refused = my_subchunk;
    }
    refused = BlockMin(sh, &sh.accepted, refused);
    if (refused > sub && my_subchunk == refused - 1 && ends_subchunk) {
      uint64_t applied = s;
      TryApplyRun(applied, prefix, frame);  // checked above: accepted
      sh.sum_bits = applied;
    }
    __syncthreads();
    if (refused < subchunks) {
      if (lane == 0) {
        double acc = DoubleOf(sh.sum_bits);
        const int begin = refused * kSubchunkTerms;
        const int end = begin + kSubchunkTerms < count ? begin + kSubchunkTerms : count;
        for (int j = begin; j < end; ++j) acc = __dadd_rn(acc, sh.staged[j]);
        sh.sum_bits = BitsOf(acc);
        counts.subchunks_rejected += 1;
        counts.terms_one_by_one += end - begin;
      }
      __syncthreads();
    }
    sub = refused + 1;
  }
}

template <class TermSource>
__global__ void __launch_bounds__(kBlockThreads)
    OrderedWalk(TermSource source, size_t n, int64_t chunks, const int* plan, const RunSummary* summaries,
                WalkOutput* output) {
  __shared__ WalkShared sh;
  const int lane = threadIdx.x;
  WalkOutput counts{0, 0, 0, 0, 0};  // maintained by lane 0
  if (lane == 0) sh.sum_bits = 0;    // +0: the loop's start
  __syncthreads();

  int64_t c = 0;
  while (c < chunks) {
    const uint64_t s = sh.sum_bits;
    const int frame = plan[c];
    // The window: chunks c, c+1, ... with the same planned frame, at most kWindowChunks.
    int first_other = kWindowChunks;
#pragma unroll
    for (int j = kTermsPerThread - 1; j >= 0; --j) {
      const int k = lane * kTermsPerThread + j;
      if (c + k >= chunks || plan[c + k] != frame) first_other = k;
    }
    const int window = BlockMin(sh, &sh.window, first_other);

    RunSummary items[kTermsPerThread];
#pragma unroll
    for (int j = 0; j < kTermsPerThread; ++j) {
      const int k = lane * kTermsPerThread + j;
      items[j] = k < window ? summaries[c + k] : IdentityRun();
    }
    RunSummary prefix[kTermsPerThread];  // chunks c .. c+k, composed in order
    WalkShared::Scan(sh.temp.scan).InclusiveScan(items, prefix, ComposeRuns());
    int refused = window;
#pragma unroll
    for (int j = kTermsPerThread - 1; j >= 0; --j) {
      const int k = lane * kTermsPerThread + j;
      uint64_t trial = s;
      if (k < window && !TryApplyRun(trial, prefix[j], frame)) refused = k;
    }
    const int accepted = BlockMin(sh, &sh.accepted, refused);
    // The lane holding the longest accepted prefix applies it (checked above: accepted).
    // Unrolled with constant indices so that prefix[] stays in registers.
#pragma unroll
    for (int j = 0; j < kTermsPerThread; ++j) {
      if (lane * kTermsPerThread + j == accepted - 1) {
        uint64_t applied = s;
        TryApplyRun(applied, prefix[j], frame);
        sh.sum_bits = applied;
      }
    }
    __syncthreads();
    if (lane == 0) counts.walk_windows += 1;
    c += accepted;
    if (accepted < window) {
      if (lane == 0) counts.chunks_rejected += 1;
      AddChunkByReplan(sh, source, n, c, counts);
      c += 1;
    }
  }
  __syncthreads();
  if (lane == 0) {
    counts.sum_bits = sh.sum_bits;
    *output = counts;
  }
}

}  // namespace gpu
}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_INTERNAL_WINDOW_WALK_CUH_
