// Warp-wide building blocks of the device pipelines: integer sums, shuffles of a
// RunSummary, and the ordered scans and totals of run summaries over a warp's lanes
// (composition is associative, not commutative: every scan keeps lane order).
#ifndef EXACTQ_ENGINE_EXACT_INTERNAL_WARP_SCANS_CUH_
#define EXACTQ_ENGINE_EXACT_INTERNAL_WARP_SCANS_CUH_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "engine/exact/internal/binary64_summaries.h"
#include "engine/exact/internal/block_chunk.cuh"
#include "engine/exact/internal/event_walk_layout.cuh"
#include "engine/exact/ordered_sum_algebra.h"

namespace exactq {
namespace exact {
namespace gpu {

// Warp helpers. Every lane of the warp must call them (full-mask shuffles).

inline constexpr unsigned kFullMask = 0xffffffffu;

__device__ inline int LaneId() { return static_cast<int>(threadIdx.x & 31); }

// The sum over the warp of every lane's v, modulo 2^32 (the bits of the int overload's
// two's-complement sum too). Integer addition is exact in any order, so the hardware
// reduction (sm_80 and newer) and the shuffle tree (sm_75, in --config=cuda_release)
// give the same bits.
__device__ inline unsigned WarpSum(unsigned v) {
#if __CUDA_ARCH__ >= 800
  return __reduce_add_sync(kFullMask, v);
#else
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(kFullMask, v, offset);
  return v;
#endif
}
__device__ inline int WarpSum(int v) {
#if __CUDA_ARCH__ >= 800
  return __reduce_add_sync(kFullMask, v);
#else
  return static_cast<int>(WarpSum(static_cast<unsigned>(v)));
#endif
}

__device__ inline RunSummary ShflRun(const RunSummary& r, int src) {
  RunSummary o;
#pragma unroll
  for (int p = 0; p < 2; ++p) {
    o.d[p] = __shfl_sync(kFullMask, static_cast<long long>(r.d[p]), src);
    o.lo[p] = __shfl_sync(kFullMask, static_cast<long long>(r.lo[p]), src);
    o.hi[p] = __shfl_sync(kFullMask, static_cast<long long>(r.hi[p]), src);
  }
  o.flags = __shfl_sync(kFullMask, r.flags, src);
  return o;
}

__device__ inline RunSummary ShflUpRun(const RunSummary& r, unsigned delta) {
  RunSummary o;
#pragma unroll
  for (int p = 0; p < 2; ++p) {
    o.d[p] = __shfl_up_sync(kFullMask, static_cast<long long>(r.d[p]), delta);
    o.lo[p] = __shfl_up_sync(kFullMask, static_cast<long long>(r.lo[p]), delta);
    o.hi[p] = __shfl_up_sync(kFullMask, static_cast<long long>(r.hi[p]), delta);
  }
  o.flags = __shfl_up_sync(kFullMask, r.flags, delta);
  return o;
}

// Lane k gets compose(v_0 .. v_k), in lane order.
__device__ inline RunSummary WarpInclusiveScan(RunSummary v) {
  const int lane = LaneId();
#pragma unroll
  for (unsigned d = 1; d < 32; d <<= 1) {
    const RunSummary other = ShflUpRun(v, d);
    if (lane >= static_cast<int>(d)) v = Compose(other, v);
  }
  return v;
}

// A summary whose two parities are equal (no tie in its terms): one path.
struct PathRun {
  int64_t d;
  int64_t lo;
  int64_t hi;
  uint32_t flags;  // term flags, and both unfit bits or neither
};

__device__ inline bool ParityUniform(const RunSummary& r) {
  return r.d[0] == r.d[1] && r.lo[0] == r.lo[1] && r.hi[0] == r.hi[1] &&
         ((r.flags & kUnfitEven) != 0) == ((r.flags & kUnfitOdd) != 0);
}

// Compose restricted to parity-uniform runs (both parities of the result are equal too).
__device__ inline PathRun ComposePaths(const PathRun& a, const PathRun& b) {
  PathRun r;
  r.flags = a.flags | b.flags;
  r.d = 0;
  r.lo = kEmptyLo;
  r.hi = kEmptyHi;
  if (r.flags & kUnfitEven) return r;
  const int64_t b_lo = a.d + b.lo;
  const int64_t b_hi = a.d + b.hi;
  const int64_t lo = a.lo < b_lo ? a.lo : b_lo;
  const int64_t hi = a.hi > b_hi ? a.hi : b_hi;
  if (lo < -kLimit || hi > kLimit) {
    r.flags |= kUnfitEven | kUnfitOdd;
    return r;
  }
  r.d = a.d + b.d;
  r.lo = lo;
  r.hi = hi;
  return r;
}

// The chunk total (compose of the 32 lanes in order), in every lane.
__device__ inline RunSummary WarpTotal(const RunSummary& mine) {
  const int lane = LaneId();
  if (__all_sync(kFullMask, ParityUniform(mine))) {
    PathRun v{mine.d[0], mine.lo[0], mine.hi[0], mine.flags};
#pragma unroll
    for (unsigned d = 1; d < 32; d <<= 1) {
      PathRun other;
      other.d = __shfl_up_sync(kFullMask, static_cast<long long>(v.d), d);
      other.lo = __shfl_up_sync(kFullMask, static_cast<long long>(v.lo), d);
      other.hi = __shfl_up_sync(kFullMask, static_cast<long long>(v.hi), d);
      other.flags = __shfl_up_sync(kFullMask, v.flags, d);
      if (lane >= static_cast<int>(d)) v = ComposePaths(other, v);
    }
    RunSummary r;
    r.flags = __shfl_sync(kFullMask, v.flags, 31);
    const int64_t d = __shfl_sync(kFullMask, static_cast<long long>(v.d), 31);
    const int64_t lo = __shfl_sync(kFullMask, static_cast<long long>(v.lo), 31);
    const int64_t hi = __shfl_sync(kFullMask, static_cast<long long>(v.hi), 31);
#pragma unroll
    for (int p = 0; p < 2; ++p) {
      r.d[p] = d;
      r.lo[p] = lo;
      r.hi[p] = hi;
    }
    return r;
  }
  return ShflRun(WarpInclusiveScan(mine), 31);
}

// The same scan as a loop (one Compose in the machine code instead of five): for code that
// runs once per kernel on a few SMs, where fetching cold instructions costs more than the
// loop.
__device__ inline RunSummary WarpInclusiveScanCompact(RunSummary v) {
  const int lane = LaneId();
#pragma unroll 1
  for (unsigned d = 1; d < 32; d <<= 1) {
    const RunSummary other = ShflUpRun(v, d);
    if (lane >= static_cast<int>(d)) v = Compose(other, v);
  }
  return v;
}

__device__ inline int WarpInclusiveSumInt(int v) {
  const int lane = LaneId();
#pragma unroll
  for (unsigned d = 1; d < 32; d <<= 1) {
    const int other = __shfl_up_sync(kFullMask, v, d);
    if (lane >= static_cast<int>(d)) v += other;
  }
  return v;
}

// Terms of lane k's sub-chunk, read from a TermSource (len <= 32 of them).
template <class TermSource>
__device__ inline RunSummary SubchunkSummaryFromSource(const TermSource& source, size_t first, int len, int frame) {
  double x[kSubchunkTerms];
#pragma unroll
  for (int t = 0; t < kSubchunkTerms; ++t) x[t] = t < len ? source(first + static_cast<size_t>(t)) : 0.0;
  return SummarizeTermsFast(x, len, frame);  // x goes to (L1-cached) local memory
}

__device__ inline int ClampLen(int64_t v) { return v < 0 ? 0 : (v > 32 ? 32 : static_cast<int>(v)); }

}  // namespace gpu
}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_INTERNAL_WARP_SCANS_CUH_
