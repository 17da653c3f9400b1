// Device building blocks of the exact ordered sum: what one CUDA block does with one
// chunk of terms held in registers. (OrderedSumCuda's own pipeline forms its summaries one
// warp per chunk instead, see event_walk_summaries.cuh; both give the same RunSummary, since
// any ordered grouping of a chunk's terms composes to the same decisions.) A metric kernel that computes its per-pixel
// terms can call these directly and write one summary per chunk, so the terms never reach global memory (the walk asks
// for a refused chunk's terms again through a TermSource, see event_walk.cuh).
//
// Chunk layout (the same everywhere, host stats included): a chunk is kChunkTerms = 1024
// consecutive terms and one block of kBlockThreads = 256 threads; thread t holds the
// kTermsPerThread = 4 CONSECUTIVE terms 4t..4t+3 of its chunk, in order. Consecutive
// terms per lane keep the composition in raster order with no shuffling of terms; the
// block then combines the 256 lane summaries with an order-preserving CUB reduction
// (RunSummary composition is associative but not commutative, so strided lanes, atomics
// or commutative-only reductions would be wrong). A sub-chunk (the re-plan grain) is 32
// terms = 8 consecutive lanes.
//
//   __global__ void MyMetricSummaries(..., const int* plan, exact::RunSummary* out) {
//     using Chunk = exact::gpu::BlockOrderedChunk;
//     __shared__ Chunk::TempStorage temp;
//     double x[exact::gpu::kTermsPerThread];
//     int valid = 0;
//     for (int j = 0; j < exact::gpu::kTermsPerThread; ++j) {
//       const size_t i = blockIdx.x * size_t{exact::gpu::kChunkTerms} + threadIdx.x * 4 + j;
//       if (i < n) { x[j] = MyTerm(i); valid = j + 1; }
//     }
//     const exact::RunSummary run = Chunk::Summarize(temp, x, valid, plan[blockIdx.x]);
//     if (threadIdx.x == 0) out[blockIdx.x] = run;
//   }
#ifndef EXACTQ_ENGINE_EXACT_INTERNAL_BLOCK_CHUNK_CUH_
#define EXACTQ_ENGINE_EXACT_INTERNAL_BLOCK_CHUNK_CUH_

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <cub/block/block_reduce.cuh>

#include "engine/exact/ordered_sum_algebra.h"

namespace exactq {
namespace exact {
namespace gpu {

inline constexpr int kBlockThreads = 256;
inline constexpr int kTermsPerThread = 4;
inline constexpr int kChunkTerms = kBlockThreads * kTermsPerThread;  // 1024
inline constexpr int kSubchunkTerms = 32;
inline constexpr int kThreadsPerSubchunk = kSubchunkTerms / kTermsPerThread;  // 8

// Terms in device memory: the TermSource of OrderedSumCuda. A metric that recomputes
// terms instead supplies its own type with the same call operator.
struct DeviceArrayTerms {
  const double* terms;
  __device__ double operator()(size_t i) const { return terms[i]; }
};

// Term i is map(stored[i]): several sums over one stored array, each its own exact
// function of the stored double (ssimulacra2 sums d and d^4 from one plane of d). The
// segment pipeline copies `stored` as it copies a DeviceArrayTerms (asynchronously,
// straight to shared memory) and applies `map` as each lane reads its terms there; a map
// without branches keeps that loop straight-line (ssimulacra2's TermOfBase).
template <class Map>
struct MappedArrayTerms {
  const double* stored;
  Map map;
  __device__ double operator()(size_t i) const { return map(stored[i]); }
};

// A map whose run-time choice (ssimulacra2's kind k) is the same for every term of a sum
// can hand a loop a map with that choice fixed at compile time: the per-term loop then
// holds only that kind's arithmetic. A Map opts in with an overload of VisitMap found by
// argument-dependent lookup, which calls f(fixed) with an equivalent map (same value for
// every double); this default calls f(map) itself.
template <class Map, class F>
__device__ inline void VisitMap(const Map& map, F&& f) {
  f(map);
}

// A map may promise that every finite term it gives is >= 0 (or -0), for any stored
// double: `static constexpr bool kNonNegativeTerms = true;`. The strided form then takes
// a lane's sum of |r| as its sum of r, one add a term fewer (AddNonNegativeStridedTerm).
// A NaN or infinite term, of either sign, makes its chunk doubtful, and the tie pass then
// refuses the chunk, so only the finite terms need the promise. A map that breaks it can
// give wrong bits: its tests must check it for every kind of double.
template <class Map, class = void>
struct MapGivesNonNegativeTerms : std::false_type {};
template <class Map>
struct MapGivesNonNegativeTerms<Map, std::void_t<decltype(Map::kNonNegativeTerms)>>
    : std::bool_constant<Map::kNonNegativeTerms> {};

// Loads thread `lane`'s terms of chunk `chunk` from a TermSource; `valid` counts the ones
// inside [0, n) (they are always a prefix of the lane's terms).
template <class TermSource>
__device__ inline void LoadLaneTerms(const TermSource& source, size_t n, int64_t chunk, int lane,
                                     double (&x)[kTermsPerThread], int& valid) {
  const size_t first = static_cast<size_t>(chunk) * kChunkTerms + static_cast<size_t>(lane) * kTermsPerThread;
  valid = 0;
#pragma unroll
  for (int j = 0; j < kTermsPerThread; ++j) {
    x[j] = 0.0;
    if (first + j < n) {
      x[j] = source(first + j);
      valid = j + 1;
    }
  }
}

class BlockOrderedChunk {
 public:
  // BLOCK_REDUCE_RAKING: CUB documents it for non-commutative operators (it keeps the
  // lanes' order); the commutative-only variant must not be used here.
  using SummaryReduce = cub::BlockReduce<RunSummary, kBlockThreads, cub::BLOCK_REDUCE_RAKING>;
  using SumReduce = cub::BlockReduce<double, kBlockThreads>;
  union TempStorage {
    typename SummaryReduce::TempStorage summary;
    typename SumReduce::TempStorage sum;
  };

  // The chunk's summary under `frame`, valid in thread 0. Every thread of the block calls
  // it; thread t passes its terms 4t..4t+3 with the first `valid` of them real.
  __device__ static RunSummary Summarize(TempStorage& temp, const double (&x)[kTermsPerThread], int valid, int frame) {
    RunSummary lane = IdentityRun();
#pragma unroll
    for (int j = 0; j < kTermsPerThread; ++j) {
      if (j < valid) AppendTerm(lane, BitsOf(x[j]), frame);
    }
    return SummaryReduce(temp.summary).Reduce(lane, ComposeRuns());
  }

  // An approximate sum of the chunk (tree order), valid in thread 0: the plan's input.
  __device__ static double ApproximateSum(TempStorage& temp, const double (&x)[kTermsPerThread], int valid) {
    double lane = 0.0;
#pragma unroll
    for (int j = 0; j < kTermsPerThread; ++j) {
      if (j < valid) lane = __dadd_rn(lane, x[j]);
    }
    return SumReduce(temp.sum).Sum(lane);
  }
};

}  // namespace gpu
}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_INTERNAL_BLOCK_CHUNK_CUH_
