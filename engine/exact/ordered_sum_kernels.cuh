// The device pipeline of the exact ordered sum, templated on where the terms come from
// (a TermSource: `__device__ double operator()(size_t i) const`). OrderedSumCuda
// instantiates it for terms in device memory; a metric can instantiate it with a source
// that recomputes term i, so that only summaries and the few refused chunks are formed.
//
// Four kernels on one stream:
//   ChunkApproximateSums  grid = chunks: an approximate (tree) sum per chunk;
//   PlanFromPrefix        one block: deterministic prefix of those sums -> a frame per
//                         chunk (advice only; the same plan on every run);
//   ChunkSummaries        grid = chunks: each chunk's RunSummary under its planned frame;
//   OrderedWalk           one block: the exact walk. It takes windows of up to 1024
//                         consecutive chunks that share a planned frame, composes them with
//                         an ordered BlockScan, checks every prefix against the exact sum
//                         and applies the longest accepted prefix in one step. A refused
//                         chunk is re-planned: its 32 sub-chunks are summarised under the
//                         exact sum's frame, scanned and checked the same way, and only a
//                         refused sub-chunk is added term by term (on one lane, from shared
//                         memory, with __dadd_rn).
// The walk is sequential only in the number of windows and refused pieces (about one per
// binade the sum crosses), not in the number of chunks.
//
//   exact::gpu::Workspace ws = ...;  // WorkspaceBytes(ChunkCount(n)) of device memory
//   exact::gpu::EnqueueOrderedSum(exact::gpu::DeviceArrayTerms{d_terms}, n, ws, options, stream);
//   // ws.output->sum_bits holds the loop's bits once the stream reaches this point.
#ifndef EXACTQ_ENGINE_EXACT_ORDERED_SUM_KERNELS_CUH_
#define EXACTQ_ENGINE_EXACT_ORDERED_SUM_KERNELS_CUH_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda/functional>

#include "engine/exact/ordered_sum_algebra.h"
#include "engine/exact/ordered_sum_block.cuh"

namespace exactq {
namespace exact {
namespace gpu {

// What the walk writes: the sum's bits and the fallback counts (OrderedSumStats fields).
struct WalkOutput {
  uint64_t sum_bits;
  int64_t chunks_rejected;
  int64_t subchunks_rejected;
  int64_t terms_one_by_one;
  int64_t walk_windows;
};

struct PlanOptions {
  PlanMode mode = PlanMode::kApproximatePrefix;
  int fixed_frame = 0;
};

// Device memory the pipeline needs for n terms, carved from one allocation.
struct Workspace {
  double* chunk_sums;       // [chunks]
  int* plan;                // [chunks]
  RunSummary* summaries;    // [chunks]
  WalkOutput* output;       // [1]
};

inline int64_t ChunkCount(size_t n) { return static_cast<int64_t>((n + kChunkTerms - 1) / kChunkTerms); }

inline size_t AlignUp(size_t bytes) { return (bytes + 255) & ~size_t{255}; }

inline size_t WorkspaceBytes(int64_t chunks) {
  const size_t c = static_cast<size_t>(chunks);
  return AlignUp(c * sizeof(double)) + AlignUp(c * sizeof(int)) + AlignUp(c * sizeof(RunSummary)) +
         AlignUp(sizeof(WalkOutput));
}

inline Workspace CarveWorkspace(void* base, int64_t chunks) {
  const size_t c = static_cast<size_t>(chunks);
  char* p = static_cast<char*>(base);
  Workspace ws;
  ws.chunk_sums = reinterpret_cast<double*>(p);
  p += AlignUp(c * sizeof(double));
  ws.plan = reinterpret_cast<int*>(p);
  p += AlignUp(c * sizeof(int));
  ws.summaries = reinterpret_cast<RunSummary*>(p);
  p += AlignUp(c * sizeof(RunSummary));
  ws.output = reinterpret_cast<WalkOutput*>(p);
  return ws;
}

// Grid size for the per-chunk kernels; they loop when there are more chunks.
inline unsigned ChunkGrid(int64_t chunks) {
  const int64_t kMaxGrid = 1 << 30;
  return static_cast<unsigned>(chunks < kMaxGrid ? chunks : kMaxGrid);
}

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
  const int count = static_cast<int>(n - first < size_t{kChunkTerms} ? n - first : size_t{kChunkTerms});
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

// Enqueues the whole pipeline for n >= 1 terms on `stream`. The result is in
// ws.output once the stream gets there; nothing is copied to the host.
template <class TermSource>
cudaError_t EnqueueOrderedSum(const TermSource& source, size_t n, const Workspace& ws, PlanOptions options,
                              cudaStream_t stream) {
  const int64_t chunks = ChunkCount(n);
  const unsigned grid = ChunkGrid(chunks);
  ChunkApproximateSums<TermSource><<<grid, kBlockThreads, 0, stream>>>(source, n, chunks, ws.chunk_sums);
  PlanFromPrefix<kPlanThreads><<<1, kPlanThreads, 0, stream>>>(ws.chunk_sums, chunks, options, ws.plan);
  ChunkSummaries<TermSource><<<grid, kBlockThreads, 0, stream>>>(source, n, chunks, ws.plan, ws.summaries);
  OrderedWalk<TermSource><<<1, kBlockThreads, 0, stream>>>(source, n, chunks, ws.plan, ws.summaries, ws.output);
  return cudaGetLastError();
}

}  // namespace gpu
}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_ORDERED_SUM_KERNELS_CUH_
