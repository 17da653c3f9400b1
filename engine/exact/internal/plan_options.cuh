// What every device pipeline of the exact sum shares: the walk's output record, the plan
// options, and the chunk count of a sum.
#ifndef EXACTQ_ENGINE_EXACT_INTERNAL_PLAN_OPTIONS_CUH_
#define EXACTQ_ENGINE_EXACT_INTERNAL_PLAN_OPTIONS_CUH_

#include <cstddef>
#include <cstdint>

#include "engine/exact/internal/block_chunk.cuh"
#include "engine/exact/ordered_sum_algebra.h"

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
  // The segment pipeline launches its kernels after the first with programmatic
  // dependent launch where the device has it (sm_90+): each may be scheduled while the
  // one before it drains, and waits for it (griddepcontrol.wait) before touching memory.
  // Same results either way; false is for benchmarks (the plain launches).
  bool programmatic_launch = true;
  // The segment pipeline's chunk stage tries each chunk first as one run from strided
  // reads (TryStridedChunk; StridedChunkRun in binary64_summaries.h), and goes through the
  // tile only where that refuses. Same bits either way; false sends every chunk through
  // the tile (for tests and benchmarks).
  bool strided_chunks = true;
  // The segment pipeline's chunk stage takes first the runs of 32 chunks where the
  // approximate path comes near a frame's edge (the slowest chunks), then the others
  // (OrderRunsByCrossing). Same records, bits and steps either way; false: index order.
  // EnqueueSegmentedSum and the reuse pipeline only: the paths that start from a metric's
  // chunk sums (EnqueueSegmentedSum(s)FromChunkSums) take index order.
  bool crossings_first = true;
};

inline int64_t ChunkCount(size_t n) { return static_cast<int64_t>((n + kChunkTerms - 1) / kChunkTerms); }

// The terms of the chunk that starts at term `first` of n: kChunkTerms, or fewer for a
// sum's short last chunk.
__host__ __device__ inline int TermsInChunk(size_t n, size_t first) {
  return static_cast<int>(n - first < size_t{kChunkTerms} ? n - first : size_t{kChunkTerms});
}

// Grid size for the per-chunk kernels; they loop when there are more chunks.
inline unsigned ChunkGrid(int64_t chunks) {
  const int64_t kMaxGrid = 1 << 30;
  return static_cast<unsigned>(chunks < kMaxGrid ? chunks : kMaxGrid);
}

}  // namespace gpu
}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_INTERNAL_PLAN_OPTIONS_CUH_
