// The composition algebra of the exact ordered sum, for host and device code alike.
//
// The loop `double s = 0; for (i) s = s + x[i];` cannot be re-associated, but while the
// running sum S stays in one binade it is integer arithmetic. Write S = N * u with
// u = 2^(e-52) and 2^52 <= |N| < 2^53 (the "frame" e). Adding x rounds the exact
// N + x/u to the nearest integer, ties to an even N. So, from x's bits alone and with
// integer operations only, a term becomes a pair of signed increments (one for an even
// N, one for an odd N), and a run of terms becomes a RunSummary: per start parity the
// total increment and the smallest and largest prefix of the integer path. Runs compose
// in order (associative, NOT commutative), so any ordered tree or scan of summaries
// gives the summary of the whole run.
//
// The walk then takes the exact S before a run and asks TryApplyRun whether the whole
// run stayed inside S's binade and sign with one unit of margin: every prefix N_i in
// [2^52+1, 2^53-1] in magnitude. If so, S + run is S's significand plus the increment
// for S's parity, bit for bit what the loop gives. If not (another binade, a zero
// crossing, an inf or NaN, a wrong plan), the caller adds that run's terms with real
// double adds. A wrong frame can only cost time, never a bit.
//
// Frame -1022 is the "tiny frame": u = 2^-1074 covers zero, subnormal sums and the
// binade [2^-1022, 2^-1021) on one uniform grid, where every add is exact, so a run
// there may cross zero. The design, its invariants (I1-I7) and pitfalls are in
// docs/ordered-sum.md; names below follow it.
//
//   // The sum of a run, applied to the exact running sum when the check allows it:
//   uint64_t s = exact::BitsOf(running_sum);
//   const int frame = exact::FrameOfBits(s);
//   exact::RunSummary run = exact::IdentityRun();
//   for (size_t i = begin; i < end; ++i) exact::AppendTerm(run, exact::BitsOf(x[i]), frame);
//   if (!exact::TryApplyRun(s, run, frame)) {
//     for (size_t i = begin; i < end; ++i) running_sum = running_sum + x[i];  // fallback
//   } else {
//     running_sum = exact::DoubleOf(s);
//   }
//
// Everything here is integer work on bit patterns; the only floating-point operation is
// in the callers' fallback, which must be a true binary64 add (no x87, no FMA).
#ifndef EXACTQ_ENGINE_EXACT_ORDERED_SUM_ALGEBRA_H_
#define EXACTQ_ENGINE_EXACT_ORDERED_SUM_ALGEBRA_H_

#include <cstdint>
#include <cstring>

#include "engine/platform/host_device.h"  // EXACTQ_HD; EXACTQ_UNROLL keeps RunSummary fields in registers

namespace exactq {
namespace exact {

// ---------------------------------------------------------------------------------
// Bits of a double.

EXACTQ_HD inline uint64_t BitsOf(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint64_t>(__double_as_longlong(x));
#else
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
#endif
}

EXACTQ_HD inline double DoubleOf(uint64_t bits) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(bits));
#else
  double x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
#endif
}

inline constexpr uint64_t kSignBit = uint64_t{1} << 63;
inline constexpr uint64_t kExponentMask = uint64_t{0x7ff} << 52;
inline constexpr uint64_t kFractionMask = (uint64_t{1} << 52) - 1;
inline constexpr uint64_t kHiddenBit = uint64_t{1} << 52;
// The quiet NaN the walk writes when it forms a NaN itself (inf + -inf). Callers compare
// NaNs as a class: GPUs do not propagate payloads the way x86 does.
inline constexpr uint64_t kCanonicalNaNBits = uint64_t{0x7ff8} << 48;

EXACTQ_HD inline bool IsNaNBits(uint64_t b) { return (b & kExponentMask) == kExponentMask && (b & kFractionMask) != 0; }
EXACTQ_HD inline bool IsInfBits(uint64_t b) { return (b & ~kSignBit) == kExponentMask; }

// ---------------------------------------------------------------------------------
// Frames.

// The tiny frame: u = 2^-1074 for every |S| < 2^-1021 (zero, subnormals, binade -1022).
inline constexpr int kTinyFrame = -1022;
inline constexpr int kHighestFrame = 1023;
// A frame no finite sum is in: plans use it for "add these terms one by one" (and when the
// approximate prefix is inf or NaN). Increments under it are all 0, and the walk always
// rejects it for a finite sum, so it needs no special case.
inline constexpr int kNoFrame = 4096;

// The frame the walk uses for a running sum with these bits; kNoFrame for inf and NaN.
EXACTQ_HD inline int FrameOfBits(uint64_t b) {
  const int biased = static_cast<int>((b >> 52) & 0x7ff);
  if (biased == 0x7ff) return kNoFrame;
  if (biased <= 1) return kTinyFrame;
  return biased - 1023;
}

// ---------------------------------------------------------------------------------
// Run summaries.

// |prefix| beyond this marks a run unfit for that parity. An acceptable run moves N by
// less than 2^52 in a normal frame and less than 2^54 in the tiny frame (I4), so a
// saturated part never changes a decision, and int64 never overflows (values stay
// below 2^55 before the test; the empty sentinels below 2^61).
inline constexpr int64_t kLimit = int64_t{1} << 54;
// min/max over no prefixes. Far outside +-kLimit, and adding any fit increment keeps them
// far outside, so they never trip the limit test and never win a min/max against a real
// prefix.
inline constexpr int64_t kEmptyLo = int64_t{1} << 60;
inline constexpr int64_t kEmptyHi = -(int64_t{1} << 60);

// Flags of a run.
inline constexpr uint32_t kUnfitEven = 1u << 0;  // no usable summary when N starts even
inline constexpr uint32_t kUnfitOdd = 1u << 1;   // ... when N starts odd
inline constexpr uint32_t kNonZero = 1u << 2;    // some finite term is not +-0
inline constexpr uint32_t kHasNaN = 1u << 3;
inline constexpr uint32_t kHasPosInf = 1u << 4;
inline constexpr uint32_t kHasNegInf = 1u << 5;
inline constexpr uint32_t kSpecialTerms = kHasNaN | kHasPosInf | kHasNegInf;
// Flags that describe the terms (OR-ed under composition); unfit bits follow the path.
inline constexpr uint32_t kTermFlags = kNonZero | kSpecialTerms;

EXACTQ_HD inline constexpr uint32_t UnfitBit(int parity) { return parity ? kUnfitOdd : kUnfitEven; }

// A run of terms under one frame. Index p is the parity of N at the run's start.
// d[p]: total increment of N; lo[p], hi[p]: min and max of the prefixes P_1..P_n
// (N_i - N_0), over the non-empty prefixes only. The empty run is (0, kEmptyLo, kEmptyHi).
// An unfit parity holds (0, kEmptyLo, kEmptyHi) so that composing it is harmless.
struct RunSummary {
  int64_t d[2];
  int64_t lo[2];
  int64_t hi[2];
  uint32_t flags;
};

EXACTQ_HD inline RunSummary IdentityRun() {
  RunSummary r;
  EXACTQ_UNROLL
  for (int p = 0; p < 2; ++p) {
    r.d[p] = 0;
    r.lo[p] = kEmptyLo;
    r.hi[p] = kEmptyHi;
  }
  r.flags = 0;
  return r;
}

EXACTQ_HD inline void MarkUnfit(RunSummary& r, int p) {
  r.d[p] = 0;
  r.lo[p] = kEmptyLo;
  r.hi[p] = kEmptyHi;
  r.flags |= UnfitBit(p);
}

// v[parity] without indexing by a run-time value: on the device an indexed array goes to
// local memory, a select stays in registers.
EXACTQ_HD inline int64_t AtParity(const int64_t (&v)[2], int parity) { return parity ? v[1] : v[0]; }

// The parity of N after a run that moved it by `moved`, from start parity p. `& 1`, not
// `%`: a negative odd increment must give 1.
EXACTQ_HD inline int ParityAfter(int p, int64_t moved) { return static_cast<int>((p + moved) & 1); }

// Stores one parity's values, or marks it unfit when a prefix left +-kLimit.
EXACTQ_HD inline void StoreOrMarkUnfit(RunSummary& r, int p, int64_t d, int64_t lo, int64_t hi) {
  if (lo < -kLimit || hi > kLimit) {
    MarkUnfit(r, p);
    return;
  }
  r.d[p] = d;
  r.lo[p] = lo;
  r.hi[p] = hi;
}

// One term's increments: d[p] is what N moves by when N has parity p before the add.
struct TermIncrement {
  int64_t d[2];
  uint32_t flags;  // kNonZero, special-term flags, and both unfit bits for unusable terms
};

// The increment of the term with bits `x` in frame `frame` (any int; frames outside
// [-1022, 1023] never match a sum, so their increments only need to be well defined).
//
// x = sign * M * 2^E with M the significand (hidden bit included), E = biased - 1075
// (a subnormal: M = fraction, E = -1074). With u = 2^(frame-52), x/u = sign*M*2^-k where
// k = frame - 52 - E.
//   k <= 0:      exact, r = M << -k (unfit at 2^54 or more);
//   1 <= k <= 54: r = M / 2^k rounded to nearest; on an exact half the add rounds to the
//                 even RESULT, so r depends on N's parity: r_even is the even choice, r_odd
//                 the odd one (N + s*r is even exactly when r has N's parity);
//   k > 54:      |x| < u/4, r = 0 (inexact; shifting by 64 or more would be undefined).
EXACTQ_HD inline TermIncrement IncrementOfTerm(uint64_t x, int frame) {
  TermIncrement t;
  t.d[0] = 0;
  t.d[1] = 0;
  t.flags = 0;
  const bool negative = (x >> 63) != 0;
  const int biased = static_cast<int>((x >> 52) & 0x7ff);
  const uint64_t fraction = x & kFractionMask;
  if (biased == 0x7ff) {
    t.flags = kUnfitEven | kUnfitOdd | (fraction != 0 ? kHasNaN : (negative ? kHasNegInf : kHasPosInf));
    return t;
  }
  if (biased == 0 && fraction == 0) return t;  // +0 and -0: no move, no flag (I6)
  t.flags = kNonZero;
  const uint64_t significand = biased == 0 ? fraction : (fraction | kHiddenBit);
  const int exponent = biased == 0 ? -1074 : biased - 1075;
  const int k = frame - 52 - exponent;
  uint64_t r_even;
  uint64_t r_odd;
  if (k <= 0) {
    const int up = -k;
    // r = significand * 2^up must stay within kLimit = 2^54.
    if (up > 54 || significand > (uint64_t{1} << (54 - up))) {
      t.flags |= kUnfitEven | kUnfitOdd;
      return t;
    }
    r_even = r_odd = significand << up;
  } else if (k <= 54) {
    const uint64_t whole = significand >> k;
    const uint64_t rest = significand & ((uint64_t{1} << k) - 1);
    const uint64_t half = uint64_t{1} << (k - 1);
    if (rest < half) {
      r_even = r_odd = whole;
    } else if (rest > half) {
      r_even = r_odd = whole + 1;
    } else {
      // A tie: the even and the odd neighbour of whole + 1/2.
      r_even = whole + (whole & 1);
      r_odd = whole + 1 - (whole & 1);
    }
  } else {
    r_even = r_odd = 0;
  }
  t.d[0] = negative ? -static_cast<int64_t>(r_even) : static_cast<int64_t>(r_even);
  t.d[1] = negative ? -static_cast<int64_t>(r_odd) : static_cast<int64_t>(r_odd);
  return t;
}

// run := run followed by one term. The same map as Compose(run, summary of the term),
// written out because it is the inner loop of every summary pass.
EXACTQ_HD inline void AppendIncrement(RunSummary& run, const TermIncrement& t) {
  run.flags |= t.flags & kTermFlags;
  const bool term_unfit = (t.flags & kUnfitEven) != 0;  // terms are unfit for both or neither
  EXACTQ_UNROLL
  for (int p = 0; p < 2; ++p) {
    if (run.flags & UnfitBit(p)) continue;
    if (term_unfit) {
      MarkUnfit(run, p);
      continue;
    }
    const int q = ParityAfter(p, run.d[p]);
    const int64_t d = run.d[p] + AtParity(t.d, q);
    const int64_t lo = run.lo[p] < d ? run.lo[p] : d;
    const int64_t hi = run.hi[p] > d ? run.hi[p] : d;
    StoreOrMarkUnfit(run, p, d, lo, hi);
  }
}

EXACTQ_HD inline void AppendTerm(RunSummary& run, uint64_t x, int frame) {
  AppendIncrement(run, IncrementOfTerm(x, frame));
}

// The summary of run a followed by run b (both under the same frame). Associative, not
// commutative: b's values are read on the parity path a leaves, q = parity after a.
EXACTQ_HD inline RunSummary Compose(const RunSummary& a, const RunSummary& b) {
  RunSummary r;
  r.flags = (a.flags | b.flags) & kTermFlags;
  EXACTQ_UNROLL
  for (int p = 0; p < 2; ++p) {
    r.d[p] = 0;
    r.lo[p] = kEmptyLo;
    r.hi[p] = kEmptyHi;
    if (a.flags & UnfitBit(p)) {
      MarkUnfit(r, p);
      continue;
    }
    const int q = ParityAfter(p, a.d[p]);
    if (b.flags & UnfitBit(q)) {
      MarkUnfit(r, p);
      continue;
    }
    const int64_t d = a.d[p] + AtParity(b.d, q);
    const int64_t b_lo = a.d[p] + AtParity(b.lo, q);
    const int64_t b_hi = a.d[p] + AtParity(b.hi, q);
    const int64_t lo = a.lo[p] < b_lo ? a.lo[p] : b_lo;
    const int64_t hi = a.hi[p] > b_hi ? a.hi[p] : b_hi;
    StoreOrMarkUnfit(r, p, d, lo, hi);
  }
  return r;
}

// For scans and reductions (CUB's BlockScan/BlockReduce take a functor).
struct ComposeRuns {
  EXACTQ_HD RunSummary operator()(const RunSummary& a, const RunSummary& b) const { return Compose(a, b); }
};

// ---------------------------------------------------------------------------------
// The check: apply a run to the exact running sum, or refuse.

inline constexpr int64_t kLowestInnerSignificand = (int64_t{1} << 52) + 1;  // one unit of margin
inline constexpr int64_t kHighestInnerSignificand = (int64_t{1} << 53) - 1;
inline constexpr int64_t kTinyFrameMaxMagnitude = (int64_t{1} << 53) - 1;

// `s_bits` is the exact running sum (never -0: the loop starts at +0 and only -0 + -0
// gives -0). `run` was summarised under `frame`. Returns true and sets s_bits to the
// loop's value after the run when one step is exact; false leaves s_bits untouched and
// the caller adds the run's terms by smaller pieces or one by one.
//
// Walk steps (signed design, section 1): a NaN sum stays NaN; an infinite sum becomes NaN
// if the run holds a NaN or the opposite infinity and is otherwise unchanged; a finite sum
// refuses runs with infinities or NaN; a run of zeros changes nothing; otherwise the
// frame, the sign and every prefix of the integer path are checked.
EXACTQ_HD inline bool TryApplyRun(uint64_t& s_bits, const RunSummary& run, int frame) {
  const uint64_t s = s_bits;
  const bool negative = (s >> 63) != 0;
  if (IsNaNBits(s)) return true;
  if (IsInfBits(s)) {
    if ((run.flags & kHasNaN) || (run.flags & (negative ? kHasPosInf : kHasNegInf))) {
      s_bits = kCanonicalNaNBits;
    }
    return true;
  }
  if (run.flags & kSpecialTerms) return false;
  if (!(run.flags & kNonZero)) return true;  // every term is +-0: S + 0 = S for S != -0
  // The binade check: the summary is only meaningful in the frame it was formed under.
  if (FrameOfBits(s) != frame) return false;

  if (frame == kTinyFrame) {
    // Uniform grid through zero: every add is exact while |N| stays below 2^53.
    const int64_t magnitude = static_cast<int64_t>(s & ~kSignBit);  // N's bits, hidden bit included
    const int64_t n0 = negative ? -magnitude : magnitude;
    const int p = static_cast<int>(n0 & 1);
    if (run.flags & UnfitBit(p)) return false;
    const int64_t lowest = n0 + AtParity(run.lo, p);
    const int64_t highest = n0 + AtParity(run.hi, p);
    if (lowest < -kTinyFrameMaxMagnitude || highest > kTinyFrameMaxMagnitude) return false;
    const int64_t n1 = n0 + AtParity(run.d, p);
    // An exact cancellation gives +0 (I6); otherwise the magnitude is the bit pattern.
    s_bits = n1 == 0 ? 0 : (n1 < 0 ? (kSignBit | static_cast<uint64_t>(-n1)) : static_cast<uint64_t>(n1));
    return true;
  }

  // A normal frame: S = sign * m * u. Work on the magnitude; a term of S's sign moves m by
  // +r, an opposite one by -r, so the path of m is +-P_i.
  const int64_t m = static_cast<int64_t>((s & kFractionMask) | kHiddenBit);
  const int p = static_cast<int>(m & 1);
  if (run.flags & UnfitBit(p)) return false;
  int64_t m_lowest;
  int64_t m_highest;
  int64_t m1;
  const int64_t lo = AtParity(run.lo, p);
  const int64_t hi = AtParity(run.hi, p);
  const int64_t d = AtParity(run.d, p);
  if (!negative) {
    m_lowest = m + lo;
    m_highest = m + hi;
    m1 = m + d;
  } else {
    m_lowest = m - hi;
    m_highest = m - lo;
    m1 = m - d;
  }
  // The lower margin: a prefix at exactly 2^52 may have come from a value just below 2^e,
  // which the loop rounds on the finer grid of the binade below (pitfall 2).
  if (m_lowest < kLowestInnerSignificand) return false;
  // The upper bound: 2^53 would be the next binade (or overflow in binade 1023).
  if (m_highest > kHighestInnerSignificand) return false;
  const uint64_t exponent_bits = static_cast<uint64_t>(frame + 1022) << 52;  // + m's hidden bit = e + 1023
  s_bits = (s & kSignBit) | (exponent_bits + static_cast<uint64_t>(m1));
  return true;
}

// ---------------------------------------------------------------------------------
// Plans: advice on which frame a chunk's running sum will be in.

// How a plan is formed. Only kApproximatePrefix is for production; the others are wrong
// on purpose so tests can show that a plan only costs time.
enum class PlanMode : int {
  kApproximatePrefix = 0,  // frame of the approximate prefix before the chunk
  kOneBinadeHigh = 1,      // that frame + 1
  kAllZero = 2,            // as if every prefix were 0: the tiny frame everywhere
  kFixedFrame = 3,         // one given frame everywhere
  kAllTermByTerm = 4,      // kNoFrame everywhere: every non-zero chunk is re-planned
  kRandom = 5,             // a pseudo-random frame per chunk
};

// The planned frame of a chunk from the approximate sum of every term before it.
EXACTQ_HD inline int PlanFrame(double approximate_prefix, PlanMode mode, int fixed_frame, uint64_t chunk) {
  const int frame = FrameOfBits(BitsOf(approximate_prefix));
  switch (mode) {
    case PlanMode::kApproximatePrefix:
      return frame;
    case PlanMode::kOneBinadeHigh:
      return frame == kNoFrame ? kNoFrame : frame + 1;
    case PlanMode::kAllZero:
      return kTinyFrame;
    case PlanMode::kFixedFrame:
      return fixed_frame;
    case PlanMode::kAllTermByTerm:
      return kNoFrame;
    case PlanMode::kRandom: {
      uint64_t h = (chunk + 1) * 0x9e3779b97f4a7c15ull;  // splitmix64 finaliser
      h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
      h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
      h ^= h >> 31;
      // Mostly near the true frame (so some chunks are accepted), sometimes anywhere.
      if (frame != kNoFrame && (h & 3) != 0) return frame + static_cast<int>((h >> 8) % 5) - 2;
      return static_cast<int>((h >> 16) % 2047) - 1022;
    }
  }
  return frame;
}

}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_ORDERED_SUM_ALGEBRA_H_
