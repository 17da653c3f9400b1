// The fast (binary64-based) increments and lane summaries of binary64_summaries.h against the
// algebra header's integer rule, value for value and flag for flag, over every kind of
// term (ties, near-ties, subnormals, huge, zeros, infinities, NaN) and every frame.
#include "engine/exact/internal/binary64_summaries.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "engine/exact/ordered_sum_algebra.h"
#include "engine/exact/testing/ordered_sum_test_rng.h"
#include "gtest/gtest.h"

namespace exactq {
namespace exact {
namespace {

// A term chosen relative to `frame` (u = 2^(frame-52)): ties, near-ties, exact multiples,
// tiny, huge, subnormal, special.
double TermFor(TestRng& rng, int frame) {
  const int kind = static_cast<int>(rng.Range(0, 11));
  const double sign = (rng.Next() & 1) ? -1.0 : 1.0;
  const int unit_exp = frame - 52;
  switch (kind) {
    case 0: {  // (k + 1/2) u: a tie
      const double k = static_cast<double>(rng.Range(0, (int64_t{1} << rng.Range(0, 52)) - 1));
      return sign * std::ldexp(2 * k + 1, unit_exp - 1);
    }
    case 1: {  // a full-mantissa term k binades below the unit, k in [-3, 60]
      const int k = static_cast<int>(rng.Range(-3, 60));
      const double m = static_cast<double>((rng.Next() >> 11) | (uint64_t{1} << 52));
      return sign * std::ldexp(m, unit_exp - 52 - k);
    }
    case 2: {  // near 2^54 u (the unfit limit)
      const double m = std::ldexp(1.0, 54) + static_cast<double>(rng.Range(-8, 8)) * 4.0;
      return sign * std::ldexp(m, unit_exp);
    }
    case 3:  // zeros
      return sign * 0.0;
    case 4: {  // subnormal
      return sign * std::ldexp(static_cast<double>(rng.Range(1, (int64_t{1} << 52) - 1)), -1074);
    }
    case 5:
      return sign * std::numeric_limits<double>::infinity();
    case 6:
      return std::numeric_limits<double>::quiet_NaN();
    case 7: {  // any finite double
      uint64_t b;
      do {
        b = rng.Next();
      } while (((b >> 52) & 0x7ff) == 0x7ff);
      return DoubleOf(b);
    }
    case 8: {  // near-ties: (k + 1/2) u +- one ulp of the term
      const double k = static_cast<double>(rng.Range(0, 1 << 20));
      const double t = std::ldexp(2 * k + 1, unit_exp - 1);
      return sign * ((rng.Next() & 1) ? std::nextafter(t, 0.0) : std::nextafter(t, 1e308));
    }
    case 9: {  // exact quarter units: ties at 1/2, others not
      return sign * std::ldexp(static_cast<double>(rng.Range(0, 4096)), unit_exp - 2);
    }
    case 10:  // the largest finite
      return sign * 1.7976931348623157e308;
    default: {  // the smallest normal and neighbours
      return sign * std::ldexp(1.0 + static_cast<double>(rng.Range(0, 3)) * 0x1p-52, -1022);
    }
  }
}

int FrameFor(TestRng& rng) {
  switch (rng.Range(0, 5)) {
    case 0:
      return kTinyFrame;
    case 1:
      return static_cast<int>(rng.Range(-1022, -960));
    case 2:
      return static_cast<int>(rng.Range(1000, 1023));
    case 3:
      return static_cast<int>(rng.Range(-60, 60));
    default:
      return static_cast<int>(rng.Range(-1022, 1023));
  }
}

// The host's two-add rounding against the library's, on ties, near-ties, the edges of its
// range (2^51) and beyond, signs, zeros and specials. (Values compare with ==: for t in
// (-1/2, 0] the two-add form gives +0 where nearbyint gives -0; both callers only use
// the value.)
TEST(OrderedSumFast, RoundHalfEvenEqualsNearbyint) {
  TestRng rng{4};
  std::vector<double> ts = {0.0,
                            -0.0,
                            0.5,
                            -0.5,
                            1.5,
                            -1.5,
                            2.5,
                            -2.5,
                            0x1p51,
                            -0x1p51,
                            0x1p51 - 0.5,
                            -0x1p51 + 0.5,
                            0x1p51 + 1,
                            0x1p52,
                            0x1p52 + 1,
                            0x1p53,
                            0x1p54,
                            -0x1p54,
                            0x1.fffffffffffffp50,
                            std::numeric_limits<double>::infinity(),
                            -std::numeric_limits<double>::infinity(),
                            std::numeric_limits<double>::denorm_min(),
                            -std::numeric_limits<double>::denorm_min()};
  for (int i = 0; i < 2000000; ++i) {
    const double sign = (rng.Next() & 1) ? -1.0 : 1.0;
    switch (rng.Range(0, 3)) {
      case 0:  // a tie k + 1/2 of any size up to 2^52
        ts.push_back(sign * (static_cast<double>(rng.Range(0, int64_t{1} << rng.Range(0, 51))) + 0.5));
        break;
      case 1:  // a full mantissa at magnitudes 2^-3 .. 2^55
        ts.push_back(sign * std::ldexp(static_cast<double>((rng.Next() >> 11) | (uint64_t{1} << 52)),
                                       static_cast<int>(rng.Range(-55, 3))));
        break;
      case 2: {  // the neighbours of a tie
        const double t = static_cast<double>(rng.Range(0, int64_t{1} << 40)) + 0.5;
        ts.push_back(sign * ((rng.Next() & 1) ? std::nextafter(t, 0.0) : std::nextafter(t, 1e300)));
        break;
      }
      default:  // near the edge of the two-add range
        ts.push_back(sign * (0x1p51 + static_cast<double>(rng.Range(-64, 64)) * 0.25));
        break;
    }
  }
  for (double t : ts) ASSERT_EQ(RoundHalfEven(t), std::nearbyint(t)) << std::hexfloat << t;
  EXPECT_TRUE(std::isnan(RoundHalfEven(std::numeric_limits<double>::quiet_NaN())));
}

TEST(OrderedSumFast, IncrementEqualsTheIntegerRule) {
  TestRng rng{1};
  int64_t ties = 0;
  for (int i = 0; i < 3000000; ++i) {
    const int frame = FrameFor(rng);
    const double x = TermFor(rng, frame);
    const TermIncrement want = IncrementOfTerm(BitsOf(x), frame);
    const FastIncrement got = FastIncrementOfTerm(x, ScaleOfFrame(frame));
    ASSERT_EQ(got.flags, want.flags) << std::hexfloat << x << " frame " << frame;
    if (want.flags & kUnfitEven) continue;  // the values of an unfit term are not used
    ASSERT_EQ(got.d_even, want.d[0]) << std::hexfloat << x << " frame " << frame;
    ASSERT_EQ(got.d_odd, want.d[1]) << std::hexfloat << x << " frame " << frame;
    ASSERT_EQ(got.tie, want.d[0] != want.d[1]) << std::hexfloat << x << " frame " << frame;
    ties += got.tie;
  }
  EXPECT_GT(ties, 100000);
}

TEST(OrderedSumFast, LaneSummaryEqualsTheLeftFold) {
  TestRng rng{2};
  int64_t fit = 0;
  int64_t parity_dependent = 0;
  int64_t own_path = 0;       // runs the binary64 fold decided itself
  int64_t own_ties_path = 0;  // the same for SummarizeTermsBinary64WithTies
  int64_t tie_runs_own = 0;   // runs with a tie it decided (SummarizeTermsBinary64 hands them over)
  for (int i = 0; i < 300000; ++i) {
    const int frame = (rng.Next() % 16 == 0) ? static_cast<int>(rng.Range(-1100, 1100)) : FrameFor(rng);
    double x[32];
    // Mostly "ordinary" runs (no special value), where the fast path's single path matters.
    const int mode = static_cast<int>(rng.Range(0, 3));
    const int len = static_cast<int>(rng.Range(0, 32));
    for (double& v : x) {
      if (mode == 0) {
        v = TermFor(rng, frame);
      } else {
        const int k = static_cast<int>(rng.Range(-2, 30));
        const double m = static_cast<double>((rng.Next() >> 11) | (uint64_t{1} << 52));
        v = ((rng.Next() & 1) ? -1.0 : 1.0) * std::ldexp(m, frame - 104 - k);
        if (mode == 2 && rng.Next() % 4 == 0)
          v = std::ldexp(static_cast<double>(rng.Range(-9, 9)), frame - 53);  // ties
      }
      if (!std::isfinite(v) && rng.Next() % 4 != 0) v = 1.0;
    }
    RunSummary want = IdentityRun();
    for (int j = 0; j < len; ++j) AppendTerm(want, BitsOf(x[j]), frame);
    const RunSummary got = SummarizeTermsFast(x, len, frame);
    ASSERT_TRUE(SameRun(got, want)) << "frame " << frame << " len " << len << " mode " << mode << " flags " << got.flags
                                    << " vs " << want.flags;
    bool handed_over = true;
    const RunSummary got64 = SummarizeTermsBinary64(x, len, frame, &handed_over);
    own_path += handed_over ? 0 : 1;
    if (!SameRun(got64, want)) {
      for (int j = 0; j < len; ++j) std::printf("x[%d] = %a\n", j, x[j]);
      std::printf("got d %lld lo %lld hi %lld | want d %lld/%lld lo %lld/%lld hi %lld/%lld\n", (long long)got64.d[0],
                  (long long)got64.lo[0], (long long)got64.hi[0], (long long)want.d[0], (long long)want.d[1],
                  (long long)want.lo[0], (long long)want.lo[1], (long long)want.hi[0], (long long)want.hi[1]);
    }
    ASSERT_TRUE(SameRun(got64, want)) << "binary64: frame " << frame << " len " << len << " mode " << mode << " flags "
                                      << got64.flags << " vs " << want.flags;
    bool ties_handed_over = true;
    const RunSummary got_ties = SummarizeTermsBinary64WithTies(x, len, frame, &ties_handed_over);
    ASSERT_TRUE(SameRun(got_ties, want)) << "binary64 with ties: frame " << frame << " len " << len << " mode " << mode
                                         << " flags " << got_ties.flags << " vs " << want.flags;
    // It decides at least every run SummarizeTermsBinary64 decides.
    if (!handed_over) {
      ASSERT_FALSE(ties_handed_over) << "frame " << frame << " len " << len;
    }
    own_ties_path += ties_handed_over ? 0 : 1;
    tie_runs_own += (!ties_handed_over && handed_over) ? 1 : 0;
    fit += (want.flags & (kUnfitEven | kUnfitOdd)) == 0 && (want.flags & kNonZero);
    parity_dependent += (want.flags & (kUnfitEven | kUnfitOdd)) == 0 && want.d[0] != want.d[1];
  }
  std::printf("binary64 with ties decided %lld runs itself, %lld of them with a tie\n",
              static_cast<long long>(own_ties_path), static_cast<long long>(tie_runs_own));
  EXPECT_GT(tie_runs_own, 5000);
  std::printf("fit runs %lld, parity-dependent %lld\n", static_cast<long long>(fit),
              static_cast<long long>(parity_dependent));
  EXPECT_GT(fit, 50000);
  EXPECT_GT(parity_dependent, 5000);
  std::printf("binary64 fold decided %lld runs itself\n", static_cast<long long>(own_path));
  EXPECT_GT(own_path, 50000);
}

// A chunk of 1,024 terms of 2^54 units each (the fixture of a review: chunk 0 = {1.5,
// 1023 zeros} sets the frame, chunk 1 = 1,024 x 4.0) carries its prefix to 2^64 units:
// the fold must mark it unfit as the left fold does, without signed overflow (the
// sanitizer runs of CI build this test with -fsanitize=undefined). Both signs, with and
// without a tie in front (the tie path folds both parities).
TEST(OrderedSumFast, PrefixesPastTheInt64RangeAreUnfitWithoutOverflow) {
  const int frame = FrameOfBits(BitsOf(1.5));
  const double unit = std::ldexp(1.0, frame - 52);
  for (const double sign : {1.0, -1.0}) {
    for (const bool tie : {false, true}) {
      std::vector<double> x(1024, sign * 4.0);
      ASSERT_EQ(sign * 4.0, sign * std::ldexp(1.0, 54) * unit);  // 2^54 units: the largest fit term
      if (tie) x[0] = 0.5 * unit;
      RunSummary want = IdentityRun();
      for (double v : x) AppendTerm(want, BitsOf(v), frame);
      const RunSummary got = SummarizeTermsFast(x.data(), static_cast<int>(x.size()), frame);
      EXPECT_TRUE(SameRun(got, want)) << "sign " << sign << " tie " << tie << " flags " << got.flags << " vs "
                                      << want.flags;
      EXPECT_EQ(want.flags & (kUnfitEven | kUnfitOdd), kUnfitEven | kUnfitOdd);
    }
  }
}

// Paths whose prefixes end near +-2^53 units, where the binary64 fold must hand over
// exactly when a partial sum leaves the exactly representable integers.
TEST(OrderedSumFast, Binary64FoldAtItsBound) {
  TestRng rng{3};
  int64_t own = 0;
  int64_t handed = 0;
  int64_t ties_own = 0;  // parity-dependent runs (a tie) decided by SummarizeTermsBinary64WithTies
  int64_t ties_handed = 0;
  for (int i = 0; i < 200000; ++i) {
    const int frame = static_cast<int>(rng.Range(-60, 60));
    double x[32];
    const int len = static_cast<int>(rng.Range(1, 32));
    for (int j = 0; j < 32; ++j) {
      // Steps of about 2^(48..53) units, mostly one sign, with fractions.
      const double m = static_cast<double>((rng.Next() >> 11) | (uint64_t{1} << 52));
      const int e = static_cast<int>(rng.Range(48, 53));
      const double sign = rng.Next() % 5 == 0 ? -1.0 : 1.0;
      x[j] = sign * std::ldexp(m, frame - 52 + e - 52 - static_cast<int>(rng.Range(0, 3)));
    }
    RunSummary want = IdentityRun();
    for (int j = 0; j < len; ++j) AppendTerm(want, BitsOf(x[j]), frame);
    bool handed_over = true;
    ASSERT_TRUE(SameRun(SummarizeTermsBinary64(x, len, frame, &handed_over), want))
        << "frame " << frame << " len " << len;
    (handed_over ? handed : own) += 1;
    // The same path with ties (terms of k + 1/2 units, some of them): both parities' paths
    // near the bound, decided in binary64 or handed over.
    for (int j = 0; j < 32; ++j) {
      if (rng.Next() % 3 == 0) x[j] = std::ldexp(std::rint(std::ldexp(x[j], 52 - frame)) + 0.5, frame - 52);
    }
    RunSummary want_ties = IdentityRun();
    for (int j = 0; j < len; ++j) AppendTerm(want_ties, BitsOf(x[j]), frame);
    bool ties_handed_over = true;
    ASSERT_TRUE(SameRun(SummarizeTermsBinary64WithTies(x, len, frame, &ties_handed_over), want_ties))
        << "with ties: frame " << frame << " len " << len;
    const bool parity_dependent = (want_ties.flags & (kUnfitEven | kUnfitOdd)) == 0 && want_ties.d[0] != want_ties.d[1];
    if (parity_dependent) (ties_handed_over ? ties_handed : ties_own) += 1;
  }
  std::printf("near the bound with ties: %lld decided in binary64, %lld handed over\n",
              static_cast<long long>(ties_own), static_cast<long long>(ties_handed));
  EXPECT_GT(ties_own, 10000);
  EXPECT_GT(ties_handed, 1000);
  // Both sides of the bound must be exercised.
  std::printf("near the bound: %lld decided by the binary64 fold, %lld handed over\n", static_cast<long long>(own),
              static_cast<long long>(handed));
  EXPECT_GT(own, 10000);
  EXPECT_GT(handed, 10000);
}

TEST(OrderedSumFast, LongPathsReachTheSaturationLimit) {
  // Terms of about 2^52 units: 32 of them leave +-2^54 on the way, and a path that goes
  // out and comes back must still be unfit.
  for (int frame : {0, 300, -1000, kTinyFrame}) {
    for (int variant = 0; variant < 4; ++variant) {
      double x[32];
      for (int j = 0; j < 32; ++j) {
        const double sign = (variant == 0) ? 1.0 : (variant == 1 ? (j < 16 ? 1.0 : -1.0) : (j % 2 ? -1.0 : 1.0));
        x[j] = sign * std::ldexp(1.5 + (variant == 3 ? 0x1p-52 * j : 0.0), frame);  // 1.5 * 2^52 units
        if (variant == 3 && j % 3 == 0) x[j] = std::ldexp(3.0, frame - 53);         // 1.5 u: a tie
      }
      RunSummary want = IdentityRun();
      for (int j = 0; j < 32; ++j) AppendTerm(want, BitsOf(x[j]), frame);
      EXPECT_TRUE(SameRun(SummarizeTermsFast(x, 32, frame), want)) << "frame " << frame << " variant " << variant;
      EXPECT_TRUE(SameRun(SummarizeTermsBinary64(x, 32, frame), want)) << "frame " << frame << " variant " << variant;
      EXPECT_TRUE(SameRun(SummarizeTermsBinary64WithTies(x, 32, frame), want))
          << "frame " << frame << " variant " << variant;
    }
  }
}

// A sum of the given frame and sign whose significand m is near the binade's edges or
// anywhere in it.
double SumFor(TestRng& rng, int frame, bool negative) {
  int64_t m;
  switch (rng.Range(0, 2)) {
    case 0:
      m = (int64_t{1} << 52) + rng.Range(0, 40);
      break;
    case 1:
      m = (int64_t{1} << 53) - 1 - rng.Range(0, 40);
      break;
    default:
      m = (int64_t{1} << 52) | static_cast<int64_t>(rng.Next() >> 12);
      break;
  }
  const uint64_t bits = (negative ? kSignBit : 0) | (static_cast<uint64_t>(frame + 1023) << 52) |
                        (static_cast<uint64_t>(m) & kFractionMask);
  return DoubleOf(bits);
}

// A run whose extreme prefixes put N + lo and N + hi within a few units of the checks'
// bounds (2^52 + 1, 2^53 - 1 in magnitude), or anywhere up to the saturation limit.
int64_t OffsetNear(TestRng& rng, int64_t target) {
  switch (rng.Range(0, 3)) {
    case 0:
      return target + rng.Range(-3, 3);
    case 1:
      return static_cast<int64_t>(rng.Range(-kLimit, kLimit));
    case 2:
      return rng.Range(-40, 40);
    default:
      return target + rng.Range(-(int64_t{1} << 20), int64_t{1} << 20);
  }
}

// TryApplyFloatRun accepts exactly what TryApplyRun accepts wherever it decides (a
// normal sum, its own frame with a normal unit, finite terms with a non-zero one), with
// the same bits, and hands everything else over.
TEST(OrderedSumFast, FloatRunDecidesAsTheIntegerCheck) {
  TestRng rng{5};
  int64_t accepted = 0;
  int64_t refused = 0;
  int64_t handed_over = 0;
  for (int i = 0; i < 3000000; ++i) {
    const bool negative = (rng.Next() & 1) != 0;
    int frame = FrameFor(rng);
    if (frame == kTinyFrame) frame = -1021;
    const double s = SumFor(rng, frame, negative);
    const int64_t n = negative ? -static_cast<int64_t>((BitsOf(s) & kFractionMask) | kHiddenBit)
                               : static_cast<int64_t>((BitsOf(s) & kFractionMask) | kHiddenBit);
    // The run's frame: mostly the sum's, sometimes a neighbour or anywhere.
    int run_frame = frame;
    if (rng.Next() % 8 == 0) run_frame = frame + static_cast<int>(rng.Range(-1, 1));
    if (rng.Next() % 32 == 0) run_frame = FrameFor(rng);
    RunSummary run = IdentityRun();
    if (rng.Next() % 4 == 0) {
      // From terms, as the chunk stage forms them.
      double x[32];
      const int len = static_cast<int>(rng.Range(1, 32));
      for (int j = 0; j < len; ++j) {
        const int k = static_cast<int>(rng.Range(-1, 60));
        const double m = static_cast<double>((rng.Next() >> 11) | (uint64_t{1} << 52));
        x[j] = ((rng.Next() & 1) ? -1.0 : 1.0) * std::ldexp(m, run_frame - 104 - k);
        if (rng.Next() % 8 == 0) x[j] = std::ldexp(static_cast<double>(rng.Range(-9, 9)), run_frame - 53);  // ties
        if (rng.Next() % 200 == 0) x[j] = TermFor(rng, run_frame);
      }
      run = SummarizeTermsFast(x, len, run_frame);
    } else {
      // Built at the bounds: for each parity, lo <= d <= hi near where the checks flip.
      const int64_t low_target = (negative ? -((int64_t{1} << 53) - 1) : (int64_t{1} << 52) + 1) - n;
      const int64_t high_target = (negative ? -((int64_t{1} << 52) + 1) : (int64_t{1} << 53) - 1) - n;
      run.flags = kNonZero;
      for (int p = 0; p < 2; ++p) {
        int64_t lo = OffsetNear(rng, low_target);
        int64_t hi = OffsetNear(rng, high_target);
        if (lo > hi) std::swap(lo, hi);
        const int64_t d = lo + static_cast<int64_t>(rng.Next() % static_cast<uint64_t>(hi - lo + 1));
        if (rng.Next() % 16 == 0) {
          MarkUnfit(run, p);
        } else {
          run.d[p] = d;
          run.lo[p] = lo;
          run.hi[p] = hi;
        }
      }
      if (rng.Next() % 2 == 0) {  // no tie: one path for both parities, as most runs
        run.d[1] = run.d[0];
        run.lo[1] = run.lo[0];
        run.hi[1] = run.hi[0];
        run.flags = (run.flags & kUnfitEven) ? (run.flags | kUnfitOdd) : (run.flags & ~kUnfitOdd);
      }
      if (rng.Next() % 64 == 0) run.flags |= kHasPosInf;
      if (rng.Next() % 64 == 0) run.flags &= ~kNonZero;
    }
    uint64_t want_bits = BitsOf(s);
    const bool want = TryApplyRun(want_bits, run, run_frame);
    double got = s;
    const bool decided = TryApplyFloatRun(got, FloatRunOf(run, run_frame));
    if (decided) {
      ASSERT_TRUE(want) << std::hexfloat << s << " frame " << run_frame;
      ASSERT_EQ(BitsOf(got), want_bits) << std::hexfloat << s << " frame " << run_frame;
    } else {
      ASSERT_EQ(BitsOf(got), BitsOf(s));
    }
    const bool its_case =
        run_frame == frame && frame >= kLowestNormalUnitFrame && (run.flags & (kSpecialTerms | kNonZero)) == kNonZero;
    if (its_case) {
      ASSERT_EQ(decided, want) << std::hexfloat << s << " frame " << run_frame;
      (want ? accepted : refused) += 1;
    } else {
      handed_over += 1;
    }
  }
  std::printf("binary64 check: %lld accepted, %lld refused, %lld handed over\n", static_cast<long long>(accepted),
              static_cast<long long>(refused), static_cast<long long>(handed_over));
  EXPECT_GT(accepted, 100000);
  EXPECT_GT(refused, 100000);
  EXPECT_GT(handed_over, 100000);
}

// The device's strided chunk form, lane for lane: lane l of 32 takes terms l, l+32, ...
// (a whole chunk of 1024), then the lanes' sums are added (any order: see the header);
// with a tie, the second pass's masks step by step, as the ballots form them.
bool StridedChunkRunOf(const double* x, int frame, RunSummary& run) {
  const double scale = StridedScale(frame);
  StridedSums chunk;
  double first = 0.0;
  for (int lane = 0; lane < 32; ++lane) {
    StridedSums mine;
    for (int i = 0; i < 32; ++i) {
      const double r = AddStridedTerm(mine, x[i * 32 + lane], scale);
      if (i == 0 && lane == 0) first = r;
    }
    chunk.sum += mine.sum;
    chunk.magnitude += mine.magnitude;
    chunk.doubtful = chunk.doubtful || mine.doubtful;
    chunk.nonzero = chunk.nonzero || mine.nonzero;
  }
  StridedTies ties;
  if (chunk.doubtful) {
    bool special = false;
    for (int i = 0; i < 32; ++i) {
      uint32_t tie = 0, odd = 0, up = 0;
      for (int lane = 0; lane < 32; ++lane) {
        const StridedTieTerm k = TieTermOf(x[i * 32 + lane], scale);
        special = special || k.special;
        tie |= uint32_t{k.tie} << lane;
        odd |= uint32_t{k.odd} << lane;
        up |= uint32_t{k.up} << lane;
      }
      StridedTieStep(ties, odd, tie, up);
    }
    if (special) return false;
  }
  return StridedChunkRun(chunk, ties, first, run);
}

// The steps' summaries (SummarizeTieStep) applied in order (ApplyTieStep) give
// StridedTieStep's ties field for field, step after step, on random masks of every
// density (no tie, a few, all ties; odd r everywhere or nowhere), for 32-step chunks.
TEST(OrderedSumFast, TieStepSummariesGiveTheStepByStepTies) {
  TestRng rng{20261203};
  int chunks_with_ties = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const int tie_density = static_cast<int>(rng.Next() % 5);  // 0: none .. 4: every lane
    const int odd_density = static_cast<int>(rng.Next() % 5);
    const auto mask = [&](int density) {
      uint32_t m = 0;
      for (int lane = 0; lane < 32; ++lane) {
        if (static_cast<int>(rng.Next() % 4) < density) m |= 1u << lane;
      }
      return m;
    };
    StridedTies serial;
    StridedTies summarised;
    for (int step = 0; step < 32; ++step) {
      const uint32_t tie = trial % 3 == 0 && rng.Next() % 8 != 0 ? 0u : mask(tie_density);
      const uint32_t odd = mask(odd_density) & ~tie;  // a tie's r is not counted as odd
      const uint32_t up = static_cast<uint32_t>(rng.Next()) & tie;
      StridedTieStep(serial, odd, tie, up);
      ApplyTieStep(summarised, SummarizeTieStep(odd, tie, up));
      ASSERT_EQ(summarised.seen, serial.seen) << "trial " << trial << " step " << step;
      ASSERT_EQ(summarised.parity, serial.parity) << "trial " << trial << " step " << step;
      ASSERT_EQ(summarised.correction, serial.correction) << "trial " << trial << " step " << step;
      ASSERT_EQ(summarised.first_q, serial.first_q) << "trial " << trial << " step " << step;
      ASSERT_EQ(summarised.first_s, serial.first_s) << "trial " << trial << " step " << step;
      ASSERT_EQ(summarised.count, serial.count) << "trial " << trial << " step " << step;
    }
    chunks_with_ties += serial.seen ? 1 : 0;
  }
  EXPECT_GT(chunks_with_ties, 5000);
}

// The strided form against the left fold (AppendTerm) on whole chunks of 1024: where it
// accepts, the same flags and d for both start parities (ties included), path bounds
// that contain the fold's extremes, and the fold's summary bit for bit when there is no
// tie and no increment after the first has the other sign (unsigned terms); where it
// refuses, a reason (a special term, or a sum of |r| of 2^53 - 2^11 or more), computed
// here from the integer rule.
TEST(OrderedSumFast, StridedChunkRunBoundsTheLeftFold) {
  TestRng rng{6};
  int64_t same = 0;              // accepted, equal to the fold
  int64_t wider = 0;             // accepted, signed, bounds wider than the fold's extremes
  int64_t with_ties = 0;         // accepted with ties
  int64_t parity_dependent = 0;  // of them, d differs between the start parities
  int64_t refused = 0;
  std::vector<double> x(1024);
  for (int iter = 0; iter < 12000; ++iter) {
    int frame = FrameFor(rng);
    if (!StridedFrame(frame)) frame = static_cast<int>(rng.Range(-60, 60));
    const int mode = static_cast<int>(rng.Range(0, 6));
    const int tie_rate = 1 << rng.Range(0, 9);  // one term in tie_rate is a tie (mode 4)
    for (int j = 0; j < 1024; ++j) {
      const int k = static_cast<int>(rng.Range(-30, 30));
      const double m = static_cast<double>((rng.Next() >> 11) | (uint64_t{1} << 52));
      const double ordinary = std::ldexp(m, frame - 104 - k);  // 2^-k units or so: ties are rare
      switch (mode) {
        case 0:  // anything, specials included
          x[j] = rng.Next() % 64 == 0 ? TermFor(rng, frame) : ordinary;
          break;
        case 1:  // unsigned
          x[j] = ordinary;
          break;
        case 2:  // signed
          x[j] = (rng.Next() & 1) ? -ordinary : ordinary;
          break;
        case 3:  // mostly positive, a few negative (SSIM-like)
          x[j] = rng.Next() % 50 == 0 ? -ordinary : ordinary;
          break;
        case 4:  // exact ties (and exact integers) at a chosen rate, both signs sometimes
          x[j] = rng.Next() % static_cast<uint64_t>(tie_rate) == 0
                     ? std::ldexp(static_cast<double>(rng.Range(-9, 99)), frame - 53)
                     : ordinary;
          break;
        case 5:  // float-precision terms: few significant bits, ties wherever one sits at u/2
          x[j] =
              std::ldexp(static_cast<double>(rng.Range(1, 1 << 24)), frame - 52 - static_cast<int>(rng.Range(20, 26)));
          break;
        default:  // increments of about 2^43: sums around 2^53
          x[j] = std::ldexp(m, frame - 52 + static_cast<int>(rng.Range(42, 43)) - 52);
          break;
      }
    }
    RunSummary want = IdentityRun();
    __int128 magnitude = 0;
    bool tie = false;
    bool special = false;
    bool one_sign_after_first = true;
    int after_first_sign = 0;
    for (int j = 0; j < 1024; ++j) {
      AppendTerm(want, BitsOf(x[j]), frame);
      const FastIncrement f = FastIncrementOfTerm(x[j], ScaleOfFrame(frame));
      tie = tie || f.tie;
      special = special || (f.flags & kSpecialTerms) != 0;
      magnitude += f.d_even < 0 ? -__int128{f.d_even} : __int128{f.d_even};
      if (f.flags & kUnfitEven) magnitude += __int128{1} << 60;  // |x/u| > 2^54
      if (j > 0 && f.d_even != 0) {
        const int sign = f.d_even > 0 ? 1 : -1;
        if (after_first_sign != 0 && sign != after_first_sign) one_sign_after_first = false;
        after_first_sign = sign;
      }
    }
    RunSummary got;
    const std::string what =
        "iter " + std::to_string(iter) + " frame " + std::to_string(frame) + " mode " + std::to_string(mode);
    if (!StridedChunkRunOf(x.data(), frame, got)) {
      ASSERT_TRUE(special || magnitude >= (__int128{1} << 53) - 2048) << what;
      ++refused;
      continue;
    }
    ASSERT_FALSE(special) << what;
    ASSERT_TRUE((want.flags & (kUnfitEven | kUnfitOdd)) == 0) << what;
    ASSERT_EQ(got.flags, want.flags) << what;
    for (int p = 0; p < 2; ++p) {
      ASSERT_EQ(got.d[p], want.d[p]) << what << " parity " << p;
      ASSERT_LE(got.lo[p], want.lo[p]) << what;
      ASSERT_GE(got.hi[p], want.hi[p]) << what;
    }
    if (tie) {
      ++with_ties;
      parity_dependent += want.d[0] != want.d[1] ? 1 : 0;
    } else if (one_sign_after_first) {
      ASSERT_TRUE(SameRun(got, want)) << what;
      ++same;
    } else {
      wider += SameRun(got, want) ? 0 : 1;
    }
  }
  std::printf(
      "strided chunks: %lld equal to the fold, %lld with wider bounds, %lld with ties (%lld whose d depends "
      "on the start parity), %lld refused\n",
      static_cast<long long>(same), static_cast<long long>(wider), static_cast<long long>(with_ties),
      static_cast<long long>(parity_dependent), static_cast<long long>(refused));
  EXPECT_GT(same, 2000);
  EXPECT_GT(wider, 1000);
  EXPECT_GT(with_ties, 1000);
  EXPECT_GT(parity_dependent, 1000);
  EXPECT_GT(refused, 500);
}

// AddNonNegativeStridedTerm (a map's kNonNegativeTerms promise): on terms that are >= 0
// or -0 when finite, a lane's sums equal AddStridedTerm's field for field once magnitude
// is set to the sum, and every r is the same; a NaN or an infinity of either sign makes
// the lane doubtful in both, so a chunk where the promise does not hold is never formed.
TEST(OrderedSumFast, NonNegativeStridedTermsGiveTheSameLaneSums) {
  TestRng rng{20261202};
  int64_t lanes = 0;
  int64_t doubtful = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    int frame = FrameFor(rng);
    if (!StridedFrame(frame)) frame = static_cast<int>(rng.Range(-60, 60));
    const double scale = StridedScale(frame);
    const int mode = static_cast<int>(rng.Range(0, 4));
    StridedSums plain;
    StridedSums promised;
    for (int i = 0; i < 32; ++i) {
      const double m = static_cast<double>((rng.Next() >> 11) | (uint64_t{1} << 52));
      double x = std::ldexp(m, frame - 104 - static_cast<int>(rng.Range(-30, 30)));
      switch (mode) {
        case 0:  // float-precision terms: ties wherever one sits at u/2
          x = std::ldexp(static_cast<double>(rng.Range(0, 1 << 24)), frame - 52 - static_cast<int>(rng.Range(20, 26)));
          break;
        case 1:  // zeros of both signs among them
          if (rng.Next() % 4 == 0) x = (rng.Next() & 1) ? -0.0 : 0.0;
          break;
        case 2:  // a special now and then, of either sign (outside the promise)
          if (rng.Next() % 40 == 0) {
            const double specials[] = {std::numeric_limits<double>::infinity(),
                                       -std::numeric_limits<double>::infinity(),
                                       std::numeric_limits<double>::quiet_NaN()};
            x = specials[rng.Range(0, 2)];
          }
          break;
        default:  // exact ties and integers at u
          if (rng.Next() % 8 == 0) x = std::ldexp(static_cast<double>(rng.Range(0, 99)), frame - 53);
          break;
      }
      const double r_plain = AddStridedTerm(plain, x, scale);
      const double r_promised = AddNonNegativeStridedTerm(promised, x, scale);
      ASSERT_EQ(BitsOf(r_plain), BitsOf(r_promised)) << std::hexfloat << x << " frame " << frame;
    }
    promised.magnitude = promised.sum;
    ++lanes;
    ASSERT_EQ(plain.doubtful, promised.doubtful) << "iter " << iter;
    ASSERT_EQ(plain.nonzero, promised.nonzero) << "iter " << iter;
    if (plain.doubtful) {
      ++doubtful;  // the tie pass decides; a special refuses the chunk there
      continue;
    }
    ASSERT_EQ(BitsOf(plain.sum), BitsOf(promised.sum)) << "iter " << iter;
    ASSERT_EQ(BitsOf(plain.magnitude), BitsOf(promised.magnitude)) << "iter " << iter << " mode " << mode;
  }
  std::printf("non-negative strided lanes: %lld, %lld of them doubtful\n", static_cast<long long>(lanes),
              static_cast<long long>(doubtful));
  EXPECT_GT(doubtful, 1000);
  EXPECT_GT(lanes - doubtful, 5000);
}

TEST(OrderedSumFast, PredictionIsOnlyAdvice) {
  // Sanity of the predictors: a run well inside a binade is predicted accepted, one that
  // reaches an edge is not, and nothing finite or not crashes them.
  RunSummary run = IdentityRun();
  for (int j = 0; j < 32; ++j) AppendTerm(run, BitsOf(1.0), 20);  // 2^32 units each in frame 20
  EXPECT_TRUE(PredictAccepted(run, 20, 1.5 * 0x1p20));
  EXPECT_FALSE(PredictAccepted(run, 20, 0x1p21 - 16.0));
  EXPECT_FALSE(PredictAccepted(run, 21, 1.5 * 0x1p20));
  EXPECT_FALSE(PredictAccepted(run, 20, std::numeric_limits<double>::quiet_NaN()));
  EXPECT_TRUE(PredictAccepted(run, 20, -1.5 * 0x1p20));  // toward zero, but far from 2^20
  RunSummary zeros = IdentityRun();
  AppendTerm(zeros, BitsOf(-0.0), 5);
  EXPECT_TRUE(PredictAccepted(zeros, 5, std::numeric_limits<double>::infinity()));
  EXPECT_FALSE(PredictCrossing(1.5, -0.1, 0.1));
  EXPECT_TRUE(PredictCrossing(1.5, -0.6, 0.1));
  EXPECT_TRUE(PredictCrossing(1.5, 0.0, 0.5));
  EXPECT_FALSE(PredictCrossing(-1.5, -0.1, 0.1));
  EXPECT_TRUE(PredictCrossing(-1.5, -0.6, 0.1));
  EXPECT_TRUE(PredictCrossing(0.0, 0.0, 1e-300));
  EXPECT_FALSE(PredictCrossing(0.0, -0x1p-1070, 0x1p-1070));
  EXPECT_TRUE(PredictCrossing(std::numeric_limits<double>::infinity(), 0, 0));
}

}  // namespace
}  // namespace exact
}  // namespace exactq
