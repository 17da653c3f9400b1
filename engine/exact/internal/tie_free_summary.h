// A cheaper way to the same RunSummary (engine/exact/ordered_sum_algebra.h) for the common
// chunk: one whose terms are all finite, none a tie, and each small next to the unit of
// the planned frame. Host and device code; the device's block-level use is in
// engine/metrics/ssim/cuda/ssim_cuda_summaries.cuh, and tie_free_summary_test.cc holds the two forms equal on
// the host.
//
// Why it is the same summary. A term's pair of increments (d_even, d_odd) differs only
// when the term is a tie. Without ties every term moves N by one integer r_i whatever N's
// parity, so both parities follow the same path P_i = r_1 + ... + r_i, and the summary is
// d = P_n, lo = min P_i, hi = max P_i for both parities. The algebra marks a parity unfit
// only when a term is unfit or some prefix of some part leaves +-2^54 (kLimit); with
// |r_i| <= 2^43 and at most 1024 terms every prefix of every part stays within 2^53, so
// neither happens and Compose/AppendIncrement produce exactly these integers. Those
// integers come from a plain int64 prefix sum and a min/max, which a CUDA block forms with
// an exclusive scan and a commutative reduction instead of an ordered composition of
// 52-byte summaries.
//
// Chunks that do not qualify (any tie, inf, NaN, unfit or large term: in practice the
// first chunks of a frame, where the running sum is still small) take the general path.
//
//   exactq::exact::gpu::LaneRun lane = exactq::exact::gpu::LaneRunOf(x, valid, frame);
//   // block: any lane !fast -> general path; else exclusive scan of lane.d, then
//   // lo = min(base + lane.lo), hi = max(base + lane.hi), flags = OR(lane.flags)
//   exactq::exact::RunSummary run = exactq::exact::gpu::TieFreeSummary(d, lo, hi, flags);
#ifndef EXACTQ_ENGINE_EXACT_TIE_FREE_SUMMARY_H_
#define EXACTQ_ENGINE_EXACT_TIE_FREE_SUMMARY_H_

#include <cstdint>

#include "engine/exact/ordered_sum_algebra.h"

namespace exactq {
namespace exact {
namespace gpu {

// The largest |r| a term of a tie-free chunk may have: 1024 terms of 2^43 sum to 2^53,
// below kLimit = 2^54 (see above).
inline constexpr int64_t kTieFreeMaxIncrement = int64_t{1} << 43;
inline constexpr int kTieFreeMaxTerms = 1024;
static_assert(kTieFreeMaxIncrement * kTieFreeMaxTerms < exact::kLimit,
              "no prefix of a tie-free chunk may reach the saturation limit");

// One lane's consecutive terms under one frame, in the tie-free form.
struct LaneRun {
  int64_t d;       // sum of the increments
  int64_t lo;      // min prefix over the lane's non-empty prefixes (kEmptyLo if none)
  int64_t hi;      // max prefix (kEmptyHi if none)
  uint32_t flags;  // exact::kNonZero when some term is a non-zero finite double
  bool fast;       // every term is finite, fit, not a tie, and |r| <= kTieFreeMaxIncrement
};

// x[0..valid) are the lane's terms in order (the rest are ignored).
template <int kTerms>
EXACTQ_HD inline LaneRun LaneRunOf(const double (&x)[kTerms], int valid, int frame) {
  LaneRun lane;
  lane.d = 0;
  lane.lo = exact::kEmptyLo;
  lane.hi = exact::kEmptyHi;
  lane.flags = 0;
  lane.fast = true;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int j = 0; j < kTerms; ++j) {
    if (j < valid) {
      const exact::TermIncrement t = exact::IncrementOfTerm(exact::BitsOf(x[j]), frame);
      lane.flags |= t.flags & exact::kNonZero;
      // Unfit or special terms carry unfit bits; a tie has two different increments.
      const bool plain = (t.flags & (exact::kUnfitEven | exact::kUnfitOdd | exact::kSpecialTerms)) == 0 &&
                         t.d[0] == t.d[1] && t.d[0] <= kTieFreeMaxIncrement && t.d[0] >= -kTieFreeMaxIncrement;
      lane.fast = lane.fast && plain;
      // Only meaningful when fast; bounded by 4 * 2^54 otherwise, so no overflow either way.
      lane.d += t.d[0];
      lane.lo = lane.d < lane.lo ? lane.d : lane.lo;
      lane.hi = lane.d > lane.hi ? lane.d : lane.hi;
    }
  }
  return lane;
}

// The chunk's summary from the block-wide results of the tie-free path: d = total
// increment, lo/hi = min/max prefix over all the chunk's terms, flags = OR of lane flags.
EXACTQ_HD inline exact::RunSummary TieFreeSummary(int64_t d, int64_t lo, int64_t hi, uint32_t flags) {
  exact::RunSummary r;
  r.d[0] = r.d[1] = d;
  r.lo[0] = r.lo[1] = lo;
  r.hi[0] = r.hi[1] = hi;
  r.flags = flags & exact::kNonZero;
  return r;
}

}  // namespace gpu
}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_TIE_FREE_SUMMARY_H_
