// Device code: one ordered-sum chunk's RunSummary, by the tie-free path when every lane
// qualifies (engine/exact/internal/tie_free_summary.h says why that is the same summary), otherwise by
// engine/exact's BlockOrderedChunk::Summarize. Same chunk layout as device_chunk_summaries.cuh:
// 256 threads, thread t holding the chunk's terms 4t..4t+3.
//
// The tie-free path needs an int64 exclusive scan and a min/max reduction, both of which
// CUB may do in any association (integer sums, min and max are associative and
// commutative), instead of the ordered composition of 52-byte summaries.
//
//   __shared__ ssim::gpu::BlockChunkSummary::TempStorage temp;
//   exact::RunSummary run = ssim::gpu::BlockChunkSummary::Summarize(temp, x, valid, frame, false);
//   if (threadIdx.x == 0) out[chunk] = run;
#ifndef EXACTQ_ENGINE_METRICS_SSIM_CUDA_SSIM_CUDA_SUMMARIES_CUH_
#define EXACTQ_ENGINE_METRICS_SSIM_CUDA_SSIM_CUDA_SUMMARIES_CUH_

#include <cstdint>

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "engine/exact/device_chunk_summaries.cuh"
#include "engine/exact/ordered_sum_algebra.h"

namespace exactq {
namespace ssim {
namespace gpu {

using exact::gpu::LaneRun;
using exact::gpu::LaneRunOf;
using exact::gpu::TieFreeSummary;

class BlockChunkSummary {
 public:
  struct Extremes {
    int64_t lo;
    int64_t hi;
  };
  struct MinMax {
    __device__ Extremes operator()(const Extremes& a, const Extremes& b) const {
      return Extremes{a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi};
    }
  };
  using Scan = cub::BlockScan<int64_t, exact::gpu::kBlockThreads>;
  using Reduce = cub::BlockReduce<Extremes, exact::gpu::kBlockThreads>;
  union TempStorage {
    exact::gpu::BlockOrderedChunk::TempStorage general;
    typename Scan::TempStorage scan;
    typename Reduce::TempStorage reduce;
  };

  // The summary of the chunk under `frame`, valid in thread 0. Every thread calls it with
  // its terms x[0..valid). `force_general` takes the general path (for tests that compare
  // the two). `took_tie_free` (may be null) is set in every thread. `temp` may be reused
  // after a __syncthreads().
  __device__ static exact::RunSummary Summarize(TempStorage& temp, const double (&x)[exact::gpu::kTermsPerThread],
                                                int valid, int frame, bool force_general,
                                                bool* took_tie_free = nullptr) {
    const LaneRun lane = LaneRunOf(x, valid, frame);
    // Block-uniform: either every lane qualifies, or the whole chunk takes the general path.
    const bool general = __syncthreads_or(force_general || !lane.fast) != 0;
    if (took_tie_free != nullptr) *took_tie_free = !general;
    if (general) return exact::gpu::BlockOrderedChunk::Summarize(temp.general, x, valid, frame);

    int64_t base;   // increments of the lanes before this one
    int64_t total;  // of the whole chunk
    Scan(temp.scan).ExclusiveSum(lane.d, base, total);
    // A lane without terms keeps its sentinels (|base| <= 2^53, far from 2^60): it never
    // wins the min or the max. Lane 0 always has a term, so the result is a real prefix.
    const Extremes mine{base + lane.lo, base + lane.hi};
    const uint32_t flags = __syncthreads_or((lane.flags & exact::kNonZero) != 0) ? exact::kNonZero : 0u;
    // (__syncthreads_or also separates the scan's use of temp from the reduction's.)
    const Extremes all = Reduce(temp.reduce).Reduce(mine, MinMax());
    return TieFreeSummary(total, all.lo, all.hi, flags);
  }
};

}  // namespace gpu
}  // namespace ssim
}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_SSIM_CUDA_SSIM_CUDA_SUMMARIES_CUH_
