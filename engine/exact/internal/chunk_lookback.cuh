// Device code: the approximate prefix of per-chunk sums within one kernel, by a decoupled
// look-back (each block publishes its chunk's sum, then reads its predecessors' published
// sums, stopping at the first one that already knows its full prefix).
//
// Used only to PLAN the exact sum (the binade each chunk's running sum is expected in),
// which is advice: any value, even a wrong one, leaves the result's bits unchanged and
// only costs time. So the float additions may happen in any order, and they do: which
// predecessors have published a full prefix depends on timing.
//
// Progress: chunks must be handed to blocks in increasing order by an atomic ticket
// (TakeTicket), never by blockIdx. A block then only waits for chunks whose tickets were
// taken before its own, i.e. by blocks already running, so the wait always ends.
//
// Per chunk the state is a flag (0 nothing yet, 1 its own sum, 2 its inclusive prefix) and
// the two values. Values are written before their flag with a fence between; readers load
// the flag with a volatile load, fence, then read the value from L2 (__ldcg: never a stale
// L1 line from an earlier frame on the same buffers). The flags and the ticket must be
// zero when the kernel starts (cudaMemsetAsync before each frame).
//
//   __shared__ int64_t chunk;
//   if (threadIdx.x == 0) chunk = TakeTicket(state);
//   __syncthreads();
//   ... sum = this chunk's sum, in thread 0 ...
//   if (threadIdx.x == 0) PublishAggregate(state, chunk, sum);
//   if (threadIdx.x < 32) {
//     const double before = ExclusivePrefix(state, chunk);   // all lanes of warp 0
//     if (threadIdx.x == 0) PublishInclusive(state, chunk, before + sum);
//   }
#ifndef EXACTQ_ENGINE_EXACT_CHUNK_LOOKBACK_CUH_
#define EXACTQ_ENGINE_EXACT_CHUNK_LOOKBACK_CUH_

#include <cuda_runtime.h>

#include <cstdint>

namespace exactq {
namespace exact {
namespace gpu {

struct LookbackState {
  unsigned* flags;    // [chunks], then the ticket counter at [chunks]
  double* aggregate;  // [chunks]: the chunk's own sum (flag >= 1)
  double* inclusive;  // [chunks]: the sum of chunks 0..c (flag == 2)
  int64_t chunks;
};

inline constexpr unsigned kFlagNone = 0;
inline constexpr unsigned kFlagAggregate = 1;
inline constexpr unsigned kFlagInclusive = 2;

__device__ inline int64_t TakeTicket(const LookbackState& s) {
  return static_cast<int64_t>(atomicAdd(s.flags + s.chunks, 1u));
}

__device__ inline void PublishFlag(const LookbackState& s, int64_t chunk, unsigned flag) {
  __threadfence();  // the value before the flag, for every reader
  *reinterpret_cast<volatile unsigned*>(s.flags + chunk) = flag;
}

__device__ inline void PublishAggregate(const LookbackState& s, int64_t chunk, double sum) {
  s.aggregate[chunk] = sum;
  PublishFlag(s, chunk, kFlagAggregate);
}

__device__ inline void PublishInclusive(const LookbackState& s, int64_t chunk, double prefix) {
  s.inclusive[chunk] = prefix;
  PublishFlag(s, chunk, kFlagInclusive);
}

// The approximate sum of chunks 0..chunk-1. Called by all 32 lanes of one warp; every lane
// gets the result.
__device__ inline double ExclusivePrefix(const LookbackState& s, int64_t chunk) {
  const unsigned lane = threadIdx.x & 31u;
  double prefix = 0.0;
  for (int64_t top = chunk - 1; top >= 0; top -= 32) {
    const int64_t j = top - static_cast<int64_t>(lane);  // lane 0 is the nearest predecessor
    // Before chunk 0 the prefix is known to be 0: such lanes act as a published prefix.
    const volatile unsigned* f = reinterpret_cast<const volatile unsigned*>(s.flags + (j >= 0 ? j : 0));
    unsigned flag = j >= 0 ? *f : kFlagInclusive;
    // Every lane takes part in the vote, so the loop stays outside any lane-dependent branch.
    while (__any_sync(0xffffffffu, flag == kFlagNone)) {
      if (flag == kFlagNone) flag = *f;
    }
    __threadfence();  // the values behind the flags we saw
    const unsigned inclusive_lanes = __ballot_sync(0xffffffffu, flag == kFlagInclusive);
    // Lanes nearer than the first full prefix add their own sums; that lane adds its prefix.
    const unsigned stop = inclusive_lanes != 0 ? static_cast<unsigned>(__ffs(inclusive_lanes) - 1) : 32u;
    double v = 0.0;
    if (j >= 0 && lane < stop) v = __ldcg(s.aggregate + j);
    if (j >= 0 && lane == stop) v = __ldcg(s.inclusive + j);
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    prefix += __shfl_sync(0xffffffffu, v, 0);
    if (inclusive_lanes != 0) break;
  }
  return prefix;
}

}  // namespace gpu
}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_CHUNK_LOOKBACK_CUH_
