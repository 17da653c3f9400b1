// The event walk's stage 1: an approximate sum per chunk (also the segment pipeline's
// first stage, through ChunkApproximateSum).
#ifndef EXACTQ_ENGINE_EXACT_INTERNAL_EVENT_WALK_CHUNK_SUMS_CUH_
#define EXACTQ_ENGINE_EXACT_INTERNAL_EVENT_WALK_CHUNK_SUMS_CUH_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "engine/exact/internal/event_walk_layout.cuh"
#include "engine/exact/internal/launch.cuh"
#include "engine/exact/internal/warp_scans.cuh"

namespace exactq {
namespace exact {
namespace gpu {

// 1. Approximate chunk sums: one warp per chunk, lane l adds terms l, l+32, ... (a fixed
// order: the plan is the same on every run), then a butterfly over the lanes.

// A chunk's approximate sum from the 32 terms each lane holds (lane l: terms l, l+32, ...,
// zeros past the end): pairwise within the lane, then a butterfly across lanes. One fixed
// order, so every kernel that forms a chunk's sum this way gets the same bits (the plan
// from a previous frame is confirmed against sums formed by another kernel).
__device__ inline double WarpTreeSum(double (&x)[32]) {
#pragma unroll
  for (int step = 1; step < 32; step <<= 1) {
#pragma unroll
    for (int i = 0; i < 32; i += 2 * step) x[i] = __dadd_rn(x[i], x[i + step]);
  }
  double s = x[0];
#pragma unroll
  for (int d = 16; d >= 1; d >>= 1) s = __dadd_rn(s, __shfl_xor_sync(kFullMask, s, d));
  return s;
}

// Chunk c's approximate sum, in every lane of the warp.
template <class TermSource>
__device__ inline double ChunkApproximateSum(const TermSource& source, size_t n, int64_t c) {
  const int lane = LaneId();
  const size_t base = static_cast<size_t>(c) * kChunkTerms;
  double x[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    const size_t idx = base + static_cast<size_t>(i * 32 + lane);
    x[i] = idx < n ? source(idx) : 0.0;
  }
  return WarpTreeSum(x);
}

template <class TermSource>
__global__ void __launch_bounds__(kSumWarps * 32)
    ChunkApproximateSumsWarp(TermSource source, size_t n, int64_t chunks, double* chunk_sums) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kSumWarps;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * kSumWarps + (threadIdx.x >> 5); c < chunks; c += stride) {
    const double s = ChunkApproximateSum(source, n, c);
    if (LaneId() == 0) chunk_sums[c] = s;
  }
}

}  // namespace gpu
}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_INTERNAL_EVENT_WALK_CHUNK_SUMS_CUH_
