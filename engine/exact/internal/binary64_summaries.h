// Faster ways to form the same RunSummary as ordered_sum_algebra.h, for host and device
// code alike. Nothing here changes a value or a decision: the tests compare each function
// with the algebra header's AppendTerm on every kind of term and frame.
//
// The algebra header derives a term's increment r = x/u (rounded) from x's bits with
// 64-bit shifts and masks. For frames in [-1022, 1023] the same number comes from binary64
// arithmetic that is exact by construction:
//   t = x * 2^(52-e)        a power-of-two scaling: exact unless it overflows (then |t| is
//                           inf, > 2^54: the term is unfit, as in the header) or underflows
//                           (then |t| < 2^-1022 and r = 0, as in the header's k > 54 case);
//                           for e < -970 the scale 2^(52-e) is split into two factors;
//   r_even = rint(t)        round half to even: on a tie (|t - r| = 1/2) the even of the two
//                           neighbours, which is the header's r_even; r_odd is the other;
//   t - r                   exact (|t - r| <= 1/2 and both are multiples of t's ulp or 1).
// On a GPU this moves most of the per-term work from the 64-bit integer emulation to the
// fp64 and conversion pipes. Frames outside [-1022, 1023] (never the frame of a sum; plans
// only use them to force a refusal) take the header's integer path.
//
// A lane of terms is then folded along ONE integer path while no term is a tie (the even
// and odd increments are equal, so both start parities see the same path), and along both
// parities only when a tie occurs.
//
//   exact::RunSummary run = exact::SummarizeTermsFast(x, /*len=*/32, frame);  // == SummarizeTerms(x, 32, frame)
#ifndef EXACTQ_ENGINE_EXACT_ORDERED_SUM_FAST_H_
#define EXACTQ_ENGINE_EXACT_ORDERED_SUM_FAST_H_

#include <cstdint>

#if !defined(__CUDA_ARCH__)
#include <cmath>
#endif

#include "engine/exact/ordered_sum_algebra.h"

#if defined(__CUDA_ARCH__)
#define EXACTQ_UNROLL4 _Pragma("unroll 4")
#else
#define EXACTQ_UNROLL4
#endif

namespace exactq {
namespace exact {

// The exact double 2^e for e in [-1022, 1023].
EXACTQ_HD inline double Pow2(int e) { return DoubleOf(static_cast<uint64_t>(e + 1023) << 52); }

EXACTQ_HD inline bool FastFrame(int frame) { return frame >= kTinyFrame && frame <= kHighestFrame; }

// The lowest frame whose unit u = 2^(frame-52) is a normal double (2^-1022).
inline constexpr int kLowestNormalUnitFrame = -970;

// x/u = x * scale_hi * scale_lo for a frame in [-1022, 1023].
struct FrameScale {
  double hi;
  double lo;
};

EXACTQ_HD inline FrameScale ScaleOfFrame(int frame) {
  const int up = 52 - frame;  // in [-971, 1074]
  FrameScale s;
  if (up > 1023) {
    s.hi = Pow2(up - 537);
    s.lo = Pow2(537);
  } else {
    s.hi = Pow2(up);
    s.lo = 1.0;
  }
  return s;
}

EXACTQ_HD inline double MulRn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

EXACTQ_HD inline double SubRn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}

// Round half to even to an integral double (NaN and infinities unchanged).
EXACTQ_HD inline double RoundHalfEven(double t) {
#if defined(__CUDA_ARCH__)
  return rint(t);
#else
  // Adding and subtracting 1.5 * 2^52 rounds |t| < 2^51 to an integer in two adds, in the
  // default rounding mode (to nearest, ties to even: the constant is even, so the sum is
  // even exactly when the rounded t is). std::nearbyint is the general case; on x86-64
  // without SSE4.1 glibc's saves and restores the floating-point environment around
  // the rounding, which made it most of the host summaries' time.
  constexpr double kRound = 0x1.8p52;
  if (t > -0x1p51 && t < 0x1p51) return (t + kRound) - kRound;
  return std::nearbyint(t);
#endif
}

// Round half to even to an integer; |t| <= 2^54.
EXACTQ_HD inline int64_t RintToInt64(double t) {
#if defined(__CUDA_ARCH__)
  return __double2ll_rn(t);
#else
  return static_cast<int64_t>(RoundHalfEven(t));
#endif
}

EXACTQ_HD inline double AddRn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

EXACTQ_HD inline double Int64ToDouble(int64_t v) {
#if defined(__CUDA_ARCH__)
  return __ll2double_rn(v);
#else
  return static_cast<double>(v);
#endif
}

// One term under a fast frame: the header's TermIncrement, plus whether it is a tie.
struct FastIncrement {
  int64_t d_even;
  int64_t d_odd;
  uint32_t flags;  // exactly IncrementOfTerm's flags
  bool tie;
};

EXACTQ_HD inline FastIncrement FastIncrementOfTerm(double x, FrameScale scale) {
  FastIncrement f;
  f.d_even = 0;
  f.d_odd = 0;
  f.flags = 0;
  f.tie = false;
  const uint64_t bits = BitsOf(x);
  if ((bits & kExponentMask) == kExponentMask) {
    const bool negative = (bits >> 63) != 0;
    f.flags = kUnfitEven | kUnfitOdd | ((bits & kFractionMask) != 0 ? kHasNaN : (negative ? kHasNegInf : kHasPosInf));
    return f;
  }
  if ((bits & ~kSignBit) == 0) return f;  // +0 and -0
  const double t = MulRn(MulRn(x, scale.hi), scale.lo);
  const double magnitude = t < 0 ? -t : t;
  if (!(magnitude <= 0x1p54)) {  // inf after an overflow is > 2^54 too
    f.flags = kNonZero | kUnfitEven | kUnfitOdd;
    return f;
  }
  f.flags = kNonZero;
  const int64_t r = RintToInt64(t);
  const double diff = SubRn(t, Int64ToDouble(r));
  f.d_even = r;
  f.d_odd = r;
  if (diff == 0.5 || diff == -0.5) {
    f.tie = true;
    f.d_odd = diff > 0 ? r + 1 : r - 1;
  }
  return f;
}

// d + inc modulo 2^64. A chunk of 1,024 terms of up to 2^54 units each can carry a
// prefix past 2^63 (signed overflow, undefined behaviour). Wrapping cannot change a
// result: every increment is below 2^55, so a prefix that leaves [-kLimit, kLimit] is
// first seen inside (-2^63, 2^63), where lo or hi records it, and the run is marked unfit
// whatever follows; the parity of a wrapped prefix is its true parity. Same instructions
// as the signed add.
EXACTQ_HD inline int64_t WrappingAdd(int64_t d, int64_t inc) {
  return static_cast<int64_t>(static_cast<uint64_t>(d) + static_cast<uint64_t>(inc));
}

// The summary of x[0..len) under `frame`, equal to SummarizeTerms (the header's left fold).
// `Terms` is anything with operator[](int) -> double (an array, a pointer, a shared-memory
// row). The loops are not unrolled in full: fully unrolled 32-term bodies made the device
// kernels hundreds of KB long and slow on instruction fetch.
template <class Terms>
EXACTQ_HD inline RunSummary SummarizeTermsFast(const Terms& x, int len, int frame) {
  if (!FastFrame(frame)) {
    RunSummary run = IdentityRun();
    for (int i = 0; i < len; ++i) AppendTerm(run, BitsOf(x[i]), frame);
    return run;
  }
  const FrameScale scale = ScaleOfFrame(frame);
  // One path, assuming no tie.
  int64_t d = 0;
  int64_t lo = kEmptyLo;
  int64_t hi = kEmptyHi;
  uint32_t flags = 0;
  bool tie = false;
  EXACTQ_UNROLL4
  for (int i = 0; i < len; ++i) {
    const FastIncrement f = FastIncrementOfTerm(x[i], scale);
    flags |= f.flags;
    tie = tie || f.tie;
    d = WrappingAdd(d, f.d_even);
    lo = lo < d ? lo : d;
    hi = hi > d ? hi : d;
  }
  RunSummary run = IdentityRun();
  run.flags = flags & kTermFlags;
  const bool any_unfit_term = (flags & kUnfitEven) != 0;
  if (!tie) {
    if (any_unfit_term || lo < -kLimit || hi > kLimit) {
      run.flags |= kUnfitEven | kUnfitOdd;
      return run;
    }
    EXACTQ_UNROLL
    for (int p = 0; p < 2; ++p) {
      run.d[p] = d;
      run.lo[p] = lo;
      run.hi[p] = hi;
    }
    return run;
  }
  // A tie: the two start parities may take different paths.
  if (any_unfit_term) {
    run.flags |= kUnfitEven | kUnfitOdd;
    return run;
  }
  int64_t dp[2] = {0, 0};
  int64_t lop[2] = {kEmptyLo, kEmptyLo};
  int64_t hip[2] = {kEmptyHi, kEmptyHi};
  for (int i = 0; i < len; ++i) {
    const FastIncrement f = FastIncrementOfTerm(x[i], scale);
    EXACTQ_UNROLL
    for (int p = 0; p < 2; ++p) {
      const int64_t inc = ((p + dp[p]) & 1) ? f.d_odd : f.d_even;
      dp[p] = WrappingAdd(dp[p], inc);
      lop[p] = lop[p] < dp[p] ? lop[p] : dp[p];
      hip[p] = hip[p] > dp[p] ? hip[p] : dp[p];
    }
  }
  EXACTQ_UNROLL
  for (int p = 0; p < 2; ++p) {
    if (lop[p] < -kLimit || hip[p] > kLimit) {
      MarkUnfit(run, p);
    } else {
      run.d[p] = dp[p];
      run.lo[p] = lop[p];
      run.hi[p] = hip[p];
    }
  }
  return run;
}

// The run of x[0..len) (with a tie) under the frame of `scale`, both start parities, in
// binary64; false, leaving `run` unset, when the integer fold must decide. Equality
// argument, per start parity p: the running integer's parity q (p at the start) is kept
// as a bit; a term that is not a tie adds r and flips q when r is odd; a tie adds r + s
// when q is odd and r when it is even (the fold's d_odd / d_even: r is the even
// neighbour) and leaves q even (round half to even). So the increments are the fold's,
// and each parity's path is exact, as in SummarizeTermsBinary64, while its prefixes stay
// strictly inside (-2^53, 2^53); a NaN or infinite t fails that check. In range, no term
// is unfit (|t| > 2^54) and no prefix near kLimit: no unfit mark; a tie is a non-zero
// term: the flags are kNonZero.
template <class Terms>
EXACTQ_HD inline bool TieRunBinary64(const Terms& x, int len, const FrameScale& scale, RunSummary& run) {
  double d[2] = {0.0, 0.0};
  double lo[2] = {0x1p60, 0x1p60};  // empty: no prefix yet
  double hi[2] = {-0x1p60, -0x1p60};
  uint32_t q[2] = {0u, 1u};
  EXACTQ_UNROLL4
  for (int i = 0; i < len; ++i) {
    const double t = MulRn(MulRn(x[i], scale.hi), scale.lo);
    const double r = RoundHalfEven(t);
    const double rest = SubRn(t, r);
    const bool tie = rest == 0.5 || rest == -0.5;
    const double toward = AddRn(r, rest > 0.0 ? 1.0 : -1.0);  // r + s, taken on a tie only
    const double half = MulRn(r, 0.5);                        // exact: r is an integer
    const uint32_t r_odd = RoundHalfEven(half) != half ? 1u : 0u;
    EXACTQ_UNROLL
    for (int p = 0; p < 2; ++p) {
      d[p] = AddRn(d[p], tie && q[p] != 0u ? toward : r);
      q[p] = tie ? 0u : (q[p] ^ r_odd);
      lo[p] = lo[p] < d[p] ? lo[p] : d[p];
      hi[p] = hi[p] > d[p] ? hi[p] : d[p];
    }
  }
  if (!(lo[0] > -0x1p53 && hi[0] < 0x1p53 && lo[1] > -0x1p53 && hi[1] < 0x1p53)) return false;
  run = IdentityRun();
  run.flags = kNonZero;
  EXACTQ_UNROLL
  for (int p = 0; p < 2; ++p) {
    run.d[p] = static_cast<int64_t>(d[p]);
    run.lo[p] = static_cast<int64_t>(lo[p]);
    run.hi[p] = static_cast<int64_t>(hi[p]);
  }
  return true;
}

// The same summary as SummarizeTermsFast, computed in binary64 only, for the common
// case; anything else is handed to SummarizeTermsFast. Equality argument:
//   - r = rint(t) is the term's increment, and t - r is exact (see the header comment);
//   - every r and every partial sum of them is an integer; a sum of two exact integers is
//     exact when its magnitude is below 2^53, and an integer of magnitude 2^53 or more
//     rounds to a double of magnitude 2^53 or more (2^53 + 1 rounds to 2^53 itself), so
//     while every rounded prefix stays strictly inside (-2^53, 2^53) all of them are
//     exact (by induction), and lo or hi shows the first that is not: then, and on a tie
//     (two parities), a non-finite t or a frame outside [-1022, 1023], the integer fold
//     decides instead;
//   - otherwise d, lo and hi are the integer fold's values exactly, both parities agree
//     (no tie), every |prefix| < 2^53 < kLimit (no unfit mark), and no term is unfit or
//     special (an unfit |t| > 2^54 would put a prefix beyond 2^53).
// On the device this is ~10 instructions a term (two multiplies, a round, three adds, a
// min, a max, two compares) instead of ~30 with 64-bit integer min/max emulated.
// `handed_over`, if given, says whether SummarizeTermsFast decided (for tests).
// kTiesInBinary64: SummarizeTermsBinary64WithTies, below.
template <bool kTiesInBinary64, class Terms>
EXACTQ_HD inline RunSummary SummarizeTermsBinary64Impl(const Terms& x, int len, int frame, bool* handed_over) {
  if (handed_over != nullptr) *handed_over = true;
  if (!FastFrame(frame)) return SummarizeTermsFast(x, len, frame);
  const FrameScale scale = ScaleOfFrame(frame);
  double d = 0.0;
  double lo = 0x1p60;  // empty: no prefix yet
  double hi = -0x1p60;
  bool tie = false;
  bool nonzero = false;
  EXACTQ_UNROLL4
  for (int i = 0; i < len; ++i) {
    const double xi = x[i];
    const double t = MulRn(MulRn(xi, scale.hi), scale.lo);
    const double r = RoundHalfEven(t);
    const double diff = SubRn(t, r);
    tie = tie || diff == 0.5 || diff == -0.5;
    nonzero = nonzero || xi != 0.0;
    d = AddRn(d, r);
    lo = lo < d ? lo : d;
    hi = hi > d ? hi : d;
  }
  // NaN anywhere (a NaN term, inf - inf) fails both comparisons; an infinity fails the bound.
  const bool in_range = len == 0 || (lo > -0x1p53 && hi < 0x1p53);  // strict: see above
  if (kTiesInBinary64 && tie) {
    RunSummary run;
    if (TieRunBinary64(x, len, scale, run)) {
      if (handed_over != nullptr) *handed_over = false;
      return run;
    }
  }
  if (tie || !in_range) return SummarizeTermsFast(x, len, frame);
  if (handed_over != nullptr) *handed_over = false;
  RunSummary run = IdentityRun();
  if (!nonzero) {
    // Only zeros: the fold's summary of zeros (prefixes all 0) and no flag.
    if (len > 0) {
      EXACTQ_UNROLL
      for (int p = 0; p < 2; ++p) {
        run.lo[p] = 0;
        run.hi[p] = 0;
      }
    }
    return run;
  }
  run.flags = kNonZero;
  const int64_t di = static_cast<int64_t>(d);
  const int64_t loi = static_cast<int64_t>(lo);
  const int64_t hii = static_cast<int64_t>(hi);
  EXACTQ_UNROLL
  for (int p = 0; p < 2; ++p) {
    run.d[p] = di;
    run.lo[p] = loi;
    run.hi[p] = hii;
  }
  return run;
}

template <class Terms>
EXACTQ_HD inline RunSummary SummarizeTermsBinary64(const Terms& x, int len, int frame, bool* handed_over = nullptr) {
  return SummarizeTermsBinary64Impl<false>(x, len, frame, handed_over);
}
// The same, and a run with a tie decided in binary64 too (TieRunBinary64) rather than
// handed over: for the device's tile path, where ties are common (ssimulacra2's edge sums:
// float-precision terms) and the integer fold's two-parity loop, with 64-bit min/max
// emulated, made a lane's chain several times longer. The CPU kernels
// (cpu_kernels.h) keep SummarizeTermsBinary64's hand-over decisions.
template <class Terms>
EXACTQ_HD inline RunSummary SummarizeTermsBinary64WithTies(const Terms& x, int len, int frame,
                                                           bool* handed_over = nullptr) {
  return SummarizeTermsBinary64Impl<true>(x, len, frame, handed_over);
}

// ---------------------------------------------------------------------------------
// A chunk of 1024 terms as ONE run from strided reads: the device's lane l of 32 takes
// terms l, l+32, ..., so step i of the warp holds terms 32i .. 32i+31 in lane order.
//
// Increments. Term x's increment under a frame is r = rint(x / u) (FastIncrementOfTerm:
// t = x/u exact, t - r exact) unless t is a tie (t - r = +-1/2): then it depends on the
// parity of the running integer N before it, r if N is even, r + s (s = +-1, toward t)
// if odd, and N is EVEN after it (round half to even), whatever it was.
//   - Without ties the chunk's d is the sum of the r_i in any order (integers: exact while
//     the magnitudes stay below 2^53, checked), for both start parities.
//   - With ties, only the first tie's increment depends on the start parity p (the
//     parity before it is p xor the parity of the r before it); every later tie's parity
//     is that of the r since the tie before it. So d(p) = sum r + the later ties'
//     corrections + the first tie's, found from per-step masks (StridedTieStep) in a
//     second pass, run only for chunks with ties.
// Path bounds. The extremes of the path depend on the order, but bounds do not: with P
// and N the sums of the positive and negative r, and T ties (each moves the path by at
// most 1), every prefix lies in [max(r_0, 0) + N - T, min(r_0, 0) + P + T].
//   - Without ties, when no r after the first is negative (or none positive), the bounds
//     ARE the extremes: the summary equals SummarizeTerms' bit for bit (unsigned terms).
//   - Otherwise they may be wider. A check on a wider path is stricter, never looser: a
//     step the walk accepts on these bounds it would accept on the extremes, with the
//     same d, so the sum is still the loop's; a wider path only risks a refusal.
// Refused here (the chunk is then summarised in order, lane by lane): a NaN or infinite
// x/u, a sum of |r| reaching 2^53 - 2^11, a frame outside StridedFrame.
//
//   StridedSums lane;                                  // per lane, over its strided terms
//   double r = AddStridedTerm(lane, x, StridedScale(frame));
//   StridedSums chunk = ... (the lanes' sums added, their flags or-ed)
//   StridedTies ties;  ... StridedTieStep(ties, masks of step i) for every step, if chunk.doubtful
//   RunSummary run;
//   if (StridedChunkRun(chunk, ties, /*first=*/r of the chunk's first term, run)) { ... }
struct StridedSums {
  double sum = 0.0;        // the sum of the r
  double magnitude = 0.0;  // the sum of |r|
  bool doubtful = false;   // a tie, or a term whose x/u is NaN or infinite
  bool nonzero = false;    // some term is not +-0
};

// The frames the strided form takes: x/u is ONE exact multiply and u = 2^(frame-52) is a
// normal double (so are the path's bounds in units of the sum: PredictCrossing's input).
EXACTQ_HD inline bool StridedFrame(int frame) { return frame >= kLowestNormalUnitFrame && frame <= kHighestFrame; }
EXACTQ_HD inline double StridedScale(int frame) { return Pow2(52 - frame); }

// Adds term x's r under the frame of `scale` (StridedScale) to s.sum and returns it, for a
// term that is >= 0 (or -0) if finite (MapGivesNonNegativeTerms): every r is then >= 0
// and the sum of |r| the same adds of the same values as the sum of r, so the caller sets
// magnitude = sum once at the end. |t - r| < 1/2 fails exactly on a tie and on a NaN or
// infinite t: s is doubtful then. `|`, not `||`, and |r| as an operand (not max/min,
// which the device emulates in five instructions each): no branch per term.
EXACTQ_HD inline double AddNonNegativeStridedTerm(StridedSums& s, double x, double scale) {
  const double t = MulRn(x, scale);
  const double r = RoundHalfEven(t);
  const double rest = SubRn(t, r);
  s.doubtful = s.doubtful | !(fabs(rest) < 0.5);
  s.nonzero = s.nonzero | (x != 0.0);
  s.sum = AddRn(s.sum, r);
  return r;
}

// The same for a term of any sign: the sum of |r| too.
EXACTQ_HD inline double AddStridedTerm(StridedSums& s, double x, double scale) {
  const double r = AddNonNegativeStridedTerm(s, x, scale);
  s.magnitude = AddRn(s.magnitude, fabs(r));
  return r;
}

// What the second pass knows of one term: whether it is a tie (and which way, s = +1 if
// t is above r), whether its r is odd, whether its t is NaN or infinite.
struct StridedTieTerm {
  bool tie;
  bool up;
  bool odd;
  bool special;
};
EXACTQ_HD inline StridedTieTerm TieTermOf(double x, double scale) {
  const double t = MulRn(x, scale);
  const double r = RoundHalfEven(t);
  const double rest = SubRn(t, r);
  const double half = MulRn(r, 0.5);  // exact: |r| < 2^53 wherever this is used
  StridedTieTerm k;
  k.tie = fabs(rest) == 0.5;
  k.up = rest > 0.0;
  k.odd = !k.tie && RoundHalfEven(half) != half;
  k.special = !(fabs(rest) <= 0.5);
  return k;
}

// The ties of a chunk, step by step in order.
struct StridedTies {
  bool seen = false;       // a tie was met: the running parity is known from there on
  uint32_t parity = 0;     // seen: the running integer's parity; else that of the r so far
  int64_t correction = 0;  // the later ties' increments minus their r
  uint32_t first_q = 0;    // the first tie: the parity of the r before it (p xor this is N's)
  int first_s = 0;         //            and its s
  int count = 0;           // ties so far
};

// Bits [from, 32) of a step's lanes.
EXACTQ_HD inline uint32_t LanesFrom(int from) { return from >= 32 ? 0u : (0xffffffffu << from); }
EXACTQ_HD inline int ParityOf(uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __popc(bits) & 1;
#else
  return __builtin_popcount(bits) & 1;
#endif
}
EXACTQ_HD inline int BitCount(uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __popc(bits);
#else
  return __builtin_popcount(bits);
#endif
}
EXACTQ_HD inline int LowestLane(uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __ffs(bits) - 1;
#else
  return __builtin_ctz(bits);
#endif
}

// One step (32 terms in order, lane l = bit l): `odd` the non-tie terms with an odd r,
// `tie` the ties, `up` the ties whose s is +1.
EXACTQ_HD inline void StridedTieStep(StridedTies& ties, uint32_t odd, uint32_t tie, uint32_t up) {
  int from = 0;
  while (tie != 0) {
    const int lane = LowestLane(tie);
    tie &= tie - 1;
    const uint32_t before = ties.parity ^ static_cast<uint32_t>(ParityOf(odd & LanesFrom(from) & ~LanesFrom(lane)));
    const int s = ((up >> lane) & 1u) ? 1 : -1;
    if (!ties.seen) {
      ties.seen = true;
      ties.first_q = before;
      ties.first_s = s;
    } else if (before != 0) {
      ties.correction += s;
    }
    ties.parity = 0;  // a tie leaves the running integer even
    ++ties.count;
    from = lane + 1;
  }
  ties.parity ^= static_cast<uint32_t>(ParityOf(odd & LanesFrom(from)));
}

// StridedTieStep in parallel: each step summarised on its own (SummarizeTieStep), as a
// function of the running parity before it, and the summaries applied in step order
// (ApplyTieStep) give StridedTieStep's ties; the device applies them with a warp scan
// over the steps (one lane per step) instead of 32 dependent steps.
//   - A step without a tie flips the running parity by the parity of its odd r.
//   - A step with ties: its first tie's `before` is the incoming parity xor that of the
//     odd r before it (first_before); every later tie's and the parity after the step
//     depend on this step's masks only (a tie leaves the running integer even).
struct StridedTieStepSummary {
  bool has_tie = false;
  uint32_t parity_through = 0;  // no tie: the parity of the step's odd r
  uint32_t first_before = 0;    // ties: the parity of the odd r before the first tie
  int first_s = 0;              //       the first tie's s
  int correction = 0;           //       the later ties' corrections
  uint32_t parity_after = 0;    //       the running parity after the step
  int count = 0;                //       ties in the step
};

EXACTQ_HD inline StridedTieStepSummary SummarizeTieStep(uint32_t odd, uint32_t tie, uint32_t up) {
  StridedTieStepSummary s;
  if (tie == 0) {
    s.parity_through = static_cast<uint32_t>(ParityOf(odd));
    return s;
  }
  s.has_tie = true;
  s.count = BitCount(tie);
  const int first = LowestLane(tie);
  s.first_before = static_cast<uint32_t>(ParityOf(odd & ~LanesFrom(first)));
  s.first_s = ((up >> first) & 1u) ? 1 : -1;
  uint32_t later = tie & (tie - 1);
  int from = first + 1;
  while (later != 0) {
    const int lane = LowestLane(later);
    later &= later - 1;
    if (ParityOf(odd & LanesFrom(from) & ~LanesFrom(lane)) != 0) s.correction += ((up >> lane) & 1u) ? 1 : -1;
    from = lane + 1;
  }
  s.parity_after = static_cast<uint32_t>(ParityOf(odd & LanesFrom(from)));
  return s;
}

EXACTQ_HD inline void ApplyTieStep(StridedTies& ties, const StridedTieStepSummary& s) {
  if (!s.has_tie) {
    ties.parity ^= s.parity_through;
    return;
  }
  const uint32_t before = ties.parity ^ s.first_before;
  if (!ties.seen) {
    ties.seen = true;
    ties.first_q = before;
    ties.first_s = s.first_s;
  } else if (before != 0) {
    ties.correction += s.first_s;
  }
  ties.correction += s.correction;
  ties.count += s.count;
  ties.parity = s.parity_after;
}

// The chunk's run from its lanes' sums (added in any order), its ties (all steps, when
// `chunk.doubtful`; else unused) and its first term's r; false when it must be summarised
// in order. Every value below is an integer of magnitude below 2^53: each add is exact.
EXACTQ_HD inline bool StridedChunkRun(const StridedSums& chunk, const StridedTies& ties, double first,
                                      RunSummary& run) {
  if (!(chunk.magnitude < 0x1p53 - 0x1p11)) return false;  // NaN fails too
  const int64_t sum = static_cast<int64_t>(chunk.sum);
  const int64_t positive = static_cast<int64_t>(MulRn(AddRn(chunk.magnitude, chunk.sum), 0.5));
  const int64_t negative = static_cast<int64_t>(MulRn(SubRn(chunk.sum, chunk.magnitude), 0.5));
  const int64_t r0 = static_cast<int64_t>(first);
  const int64_t tie_count = chunk.doubtful ? ties.count : 0;
  run = IdentityRun();
  run.flags = chunk.nonzero ? kNonZero : 0u;
  EXACTQ_UNROLL
  for (int p = 0; p < 2; ++p) {
    int64_t d = sum;
    if (chunk.doubtful) {
      d += ties.correction;
      if (ties.seen && ((static_cast<uint32_t>(p) ^ ties.first_q) & 1u)) d += ties.first_s;
    }
    run.d[p] = d;
    run.lo[p] = (r0 > 0 ? r0 : 0) + negative - tie_count;
    run.hi[p] = (r0 < 0 ? r0 : 0) + positive + tie_count;
  }
  return true;
}

// ---------------------------------------------------------------------------------
// The walk's check in binary64: TryApplyRun's common case (a normal sum in a frame whose
// unit u = 2^(frame-52) is a normal double, a run of finite terms with a non-zero one)
// with the sum's value on a chain of ONE dependent add instead of a dozen integer steps.
// Equality argument, for a sum S = sign * m * u of frame `frame` and parity p = m & 1:
//   - d, lo, hi (the run's values for p, integers) become D = d*u, LO = lo*u, HI = hi*u:
//     exact for |x| <= 2^53 (a power-of-two scaling of a normal double), and monotone in x
//     beyond (where the integer check's outcome no longer depends on the exact value);
//   - S + LO and S + HI are (N + lo)*u and (N + hi)*u with N = sign * m, exact while
//     |N + x| < 2^53 (a multiple of u below 2^53 u, u normal), and rounding is monotone
//     beyond: so comparing them with the inner bounds (2^52 + 1) u and (2^53 - 1) u (both
//     doubles, built from S's own bits) decides exactly as the integer comparisons do;
//   - when both pass, lo <= d <= hi keeps N + d strictly inside the binade: S + D is
//     exact, and it is the integer result N + d with S's exponent and sign.
// A refusal here only hands over: the caller asks TryApplyRun, which decides.
struct FloatRun {
  double d[2];
  double lo[2];  // NaN for an unfit parity: every comparison with it fails
  double hi[2];
  uint32_t biased;  // the exponent field a sum must have (frame + 1023); 0: never here
  uint32_t pad;     // explicit, and zeroed: no byte of a staged FloatRun is left undefined
};

EXACTQ_HD inline FloatRun FloatRunOf(const RunSummary& run, int frame) {
  FloatRun f;
  f.biased = 0;
  f.pad = 0;
  const bool eligible =
      frame >= kLowestNormalUnitFrame && frame <= kHighestFrame && (run.flags & (kSpecialTerms | kNonZero)) == kNonZero;
  const double u = eligible ? Pow2(frame - 52) : 1.0;
  EXACTQ_UNROLL
  for (int p = 0; p < 2; ++p) {
    const bool unfit = (run.flags & UnfitBit(p)) != 0;
    f.d[p] = MulRn(Int64ToDouble(run.d[p]), u);
    f.lo[p] = unfit ? DoubleOf(kCanonicalNaNBits) : MulRn(Int64ToDouble(run.lo[p]), u);
    f.hi[p] = unfit ? DoubleOf(kCanonicalNaNBits) : MulRn(Int64ToDouble(run.hi[p]), u);
  }
  if (eligible) f.biased = static_cast<uint32_t>(frame + 1023);
  return f;
}

// True: `s` is now the loop's value after the run (TryApplyRun would accept, with these
// bits). False: `s` is untouched and TryApplyRun decides.
EXACTQ_HD inline bool TryApplyFloatRun(double& s, const FloatRun& f) {
  const uint64_t bits = BitsOf(s);
  const uint32_t biased = static_cast<uint32_t>(bits >> 52) & 0x7ffu;
  const int p = static_cast<int>(bits & 1);  // m's parity: the hidden bit is above it
  const double d = p ? f.d[1] : f.d[0];
  const double lo = p ? f.lo[1] : f.lo[0];
  const double hi = p ? f.hi[1] : f.hi[0];
  const double next = AddRn(s, d);
  const double lowest = AddRn(s, lo);
  const double highest = AddRn(s, hi);
  const uint64_t top = bits & ~kFractionMask;  // sign and exponent
  const bool negative = (bits >> 63) != 0;
  // The inner bounds (2^52 + 1) u and (2^53 - 1) u, with S's sign.
  const double near_zero = DoubleOf(top | 1);
  const double far = DoubleOf(top | kFractionMask);
  const double bottom = negative ? far : near_zero;
  const double ceiling = negative ? near_zero : far;
  if (f.biased == 0 || biased != f.biased || !(lowest >= bottom) || !(highest <= ceiling)) return false;
  s = next;
  return true;
}

// Whether two summaries would make the same decisions with the same results: equal
// flags, and equal values for every fit parity. (Unfit parities hold (0, empty, empty).)
EXACTQ_HD inline bool SameRun(const RunSummary& a, const RunSummary& b) {
  if (a.flags != b.flags) return false;
  for (int p = 0; p < 2; ++p) {
    if (a.d[p] != b.d[p] || a.lo[p] != b.lo[p] || a.hi[p] != b.hi[p]) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------
// Prediction: advice on which chunks the walk will refuse. Wrong advice costs time only.

// Relative distance from a binade's edges under which a path counts as crossing: the
// approximate prefixes are off by far less (about 1e-13 relative on real frames).
inline constexpr double kPredictMargin = 0x1p-20;

// Whether a chunk whose summary under `frame` is `run` is expected to be accepted by the
// walk when the exact sum before it is near `approximate_prefix`. False for anything
// doubtful (unfit parts, special terms, a frame that is not the prefix's, a path within
// kPredictMargin of the binade's edges or through zero).
EXACTQ_HD inline bool PredictAccepted(const RunSummary& run, int frame, double approximate_prefix) {
  if (run.flags & kSpecialTerms) return false;
  if (!(run.flags & kNonZero)) return true;  // only zeros: accepted whatever the sum is
  if (run.flags & (kUnfitEven | kUnfitOdd)) return false;
  if (!FastFrame(frame)) return false;
  const FrameScale scale = ScaleOfFrame(frame);
  const double n0 = MulRn(MulRn(approximate_prefix, scale.hi), scale.lo);  // the prefix in units of the frame
  const double lo = static_cast<double>(run.lo[0] < run.lo[1] ? run.lo[0] : run.lo[1]);
  const double hi = static_cast<double>(run.hi[0] > run.hi[1] ? run.hi[0] : run.hi[1]);
  const double margin = 0x1p52 * kPredictMargin;
  const double lowest = n0 + lo;
  const double highest = n0 + hi;
  if (frame == kTinyFrame) {
    const double limit = 0x1p53 - margin;
    return lowest >= -limit && highest <= limit;  // false for NaN
  }
  if (n0 >= 0) return lowest >= 0x1p52 + margin && highest <= 0x1p53 - margin;
  return -highest >= 0x1p52 + margin && -lowest <= 0x1p53 - margin;  // false for NaN
}

// Whether an approximate path that starts at `start` and visits start + [low, high]
// (low <= 0 <= high, offsets from the start) may leave the frame of `start` (its binade
// and sign; for the tiny frame, |value| < 2^-1021). True for anything not finite.
EXACTQ_HD inline bool PredictCrossing(double start, double low, double high) {
  const double a = start + low;
  const double b = start + high;
  const int frame = FrameOfBits(BitsOf(start));
  if (frame == kNoFrame) return true;
  if (frame == kTinyFrame) {
    const double limit = 0x1p-1021 * (1.0 - kPredictMargin);
    return !(a > -limit && b < limit);
  }
  const double bottom = Pow2(frame) * (1.0 + kPredictMargin);
  const double top = frame + 1 <= kHighestFrame ? Pow2(frame + 1) * (1.0 - kPredictMargin) : 0x1.fffffp1023;
  if (start > 0) return !(a > bottom && b < top);
  return !(-b > bottom && -a < top);
}

}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_ORDERED_SUM_FAST_H_
