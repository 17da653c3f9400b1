// Tests of the composition algebra alone: one term against the real double add, every
// short run at the edges of a binade, associativity, and the pitfalls of the signed design.
// Every expectation is the loop's own result, compared on the 64-bit pattern.
#include "engine/exact/ordered_sum_algebra.h"

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/exact/testing/ordered_sum_test_rng.h"
#include "gtest/gtest.h"

namespace exactq {
namespace exact {
namespace {

// The loop from s0 (the walk's exact running sum before the run).
double LoopFrom(double s0, const std::vector<double>& terms) {
  double s = s0;
  for (double x : terms) s = s + x;
  return s;
}

RunSummary Fold(const std::vector<double>& terms, size_t begin, size_t end, int frame) {
  RunSummary r = IdentityRun();
  for (size_t i = begin; i < end; ++i) AppendTerm(r, BitsOf(terms[i]), frame);
  return r;
}

bool SameSummary(const RunSummary& a, const RunSummary& b) {
  for (int p = 0; p < 2; ++p) {
    if (a.d[p] != b.d[p] || a.lo[p] != b.lo[p] || a.hi[p] != b.hi[p]) return false;
  }
  return a.flags == b.flags;
}

std::string Hex(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", x);
  return buf;
}

std::string Describe(double s0, const std::vector<double>& terms) {
  std::string out = "S0=" + Hex(s0) + " terms:";
  for (double x : terms) out += " " + Hex(x);
  return out;
}

// Tries the run in one step from s0, its summary formed as a[0..split) then b[split..n).
// When the check accepts, the result must be the loop's. Returns whether it accepted.
bool CheckOneStep(double s0, const std::vector<double>& terms, size_t split) {
  const int frame = FrameOfBits(BitsOf(s0));
  const RunSummary run = Compose(Fold(terms, 0, split, frame), Fold(terms, split, terms.size(), frame));
  uint64_t bits = BitsOf(s0);
  if (!TryApplyRun(bits, run, frame)) return false;
  const double want = LoopFrom(s0, terms);
  EXPECT_EQ(bits, BitsOf(want)) << Describe(s0, terms) << " split=" << split << " got " << Hex(DoubleOf(bits))
                                << " loop " << Hex(want);
  return true;
}

// A double from sign, frame-relative exponent and a 53-bit significand (hidden bit set).
double Compose53(bool negative, int exponent_of_unit, uint64_t significand) {
  return (negative ? -1.0 : 1.0) * std::ldexp(static_cast<double>(significand), exponent_of_unit);
}

// ---------------------------------------------------------------------------------

TEST(OrderedSumAlgebra, OneTermRuleMatchesTheDoubleAdd) {
  // 2M (S, x) pairs: S of both signs at both edges of chosen binades and at random, in
  // normal frames and the tiny frame; x a forced tie (half the cases), a near tie, or any
  // term 3 binades above to 60 below the unit, including subnormals.
  const int kFrames[] = {0, 1, -1, 16, 39, 52, 53, -1021, -1000, 1022, 1023, kTinyFrame};
  TestRng rng{12345};
  int64_t accepted = 0, accepted_ties = 0, needless_rejections = 0;
  const int64_t kCases = 2000000;
  for (int64_t i = 0; i < kCases; ++i) {
    const int frame = (rng.Next() & 1) ? kFrames[rng.Next() % 12] : static_cast<int>(rng.Range(-1021, 1023));
    const bool s_negative = (rng.Next() & 1) != 0;
    double s0;
    if (frame == kTinyFrame) {
      const uint64_t magnitude = rng.Next() % (uint64_t{1} << 53);  // zero, subnormal or binade -1022
      s0 = magnitude == 0 ? 0.0 : DoubleOf((s_negative ? kSignBit : 0) | magnitude);
    } else {
      uint64_t m;
      switch (rng.Next() % 3) {
        case 0:
          m = (uint64_t{1} << 52) + rng.Range(0, 3);
          break;
        case 1:
          m = (uint64_t{1} << 53) - rng.Range(1, 4);
          break;
        default:
          m = (uint64_t{1} << 52) | (rng.Next() & kFractionMask);
          break;
      }
      s0 = Compose53(s_negative, frame - 52, m);
    }
    // The term, relative to u = 2^(frame-52): x = M * 2^(frame-52-k).
    const int k = static_cast<int>(rng.Range(-3, 60));
    const bool x_negative = (rng.Next() & 1) != 0;
    uint64_t significand = (uint64_t{1} << 52) | (rng.Next() & kFractionMask);
    const int kind = static_cast<int>(rng.Next() % 4);
    if (k >= 1 && k <= 53 && kind <= 1) {
      // Force the shifted-out bits to exactly one half (a tie), or one ulp off it.
      const uint64_t low_mask = (uint64_t{1} << k) - 1;
      significand = (significand & ~low_mask) | (uint64_t{1} << (k - 1));
      if (kind == 1 && k >= 2) significand += (rng.Next() & 1) ? 1 : -1;
      if (significand < (uint64_t{1} << 52)) significand |= uint64_t{1} << 52;
    }
    const int unit_exponent = frame - 52 - k;
    double x;
    if (unit_exponent < -1074) {
      x = DoubleOf((x_negative ? kSignBit : 0) | (rng.Next() & kFractionMask));  // a subnormal
    } else if (unit_exponent > 971) {
      continue;  // would not be a finite double
    } else {
      x = Compose53(x_negative, unit_exponent, significand);
    }
    const bool was_tie = kind == 0 && k >= 1 && k <= 53;

    const double want = s0 + x;
    const std::vector<double> terms{x};
    const bool ok = CheckOneStep(s0, terms, 1);
    if (ok) {
      ++accepted;
      if (was_tie) ++accepted_ties;
    } else if (std::isfinite(want)) {
      // No needless rejection: a result that stays one unit inside S's binade and sign (or
      // in the tiny range from a tiny S) must be accepted.
      const int result_frame = FrameOfBits(BitsOf(want));
      bool inside;
      if (frame == kTinyFrame) {
        inside = result_frame == kTinyFrame;
      } else {
        const uint64_t m = (BitsOf(want) & kFractionMask) | kHiddenBit;
        inside = result_frame == frame && std::signbit(want) == std::signbit(s0) && m > kHiddenBit;
      }
      if (inside) ++needless_rejections;
    }
    if (HasFailure()) return;
  }
  EXPECT_EQ(needless_rejections, 0);
  // Coverage: the forced ties must actually reach the accepting path.
  EXPECT_GT(accepted, kCases / 3);
  EXPECT_GT(accepted_ties, kCases / 20);
  std::printf("one-term cases: %lld, accepted %lld (ties %lld)\n", static_cast<long long>(kCases),
              static_cast<long long>(accepted), static_cast<long long>(accepted_ties));
}

TEST(OrderedSumAlgebra, EveryShortRunAtTheEdgesOfABinade) {
  // S0 = +-N0 * u with N0 next to both edges of the binade; runs of 1-3 terms from
  // {j/4 * u, j/4 * u/2, j/4 * 2u : j = -6..6} (what is representable), composed at every
  // split point. Parity-dependent composition errors only show here (pitfall 5).
  int64_t checks = 0, accepted = 0;
  for (int frame : {0, -1021, 1023, kTinyFrame}) {
    std::vector<int64_t> n0s;
    for (int64_t j = 0; j <= 3; ++j) n0s.push_back((int64_t{1} << 52) + j);
    for (int64_t j = 1; j <= 4; ++j) n0s.push_back((int64_t{1} << 53) - j);
    if (frame == kTinyFrame) {
      for (int64_t j = 0; j <= 5; ++j) n0s.push_back(j);
    }
    const int unit_exponent = frame - 52;  // u = 2^(frame - 52); the tiny frame: 2^-1074
    std::vector<double> pool;
    for (int shift : {-2, -3, -1, 0}) {
      for (int j = -6; j <= 6; ++j) {
        const int e = unit_exponent + shift;
        const double x = std::ldexp(static_cast<double>(j), e);
        if (std::ldexp(x, -e) != static_cast<double>(j)) continue;  // not representable
        bool seen = false;
        for (double y : pool) seen = seen || BitsOf(y) == BitsOf(x);
        if (!seen) pool.push_back(x);
      }
    }
    for (int64_t n0 : n0s) {
      for (bool negative : {false, true}) {
        if (n0 == 0 && negative) continue;  // the running sum is never -0
        const double s0 = frame == kTinyFrame ? DoubleOf((negative ? kSignBit : 0) | static_cast<uint64_t>(n0))
                                              : Compose53(negative, unit_exponent, static_cast<uint64_t>(n0));
        for (size_t a = 0; a < pool.size(); ++a) {
          ++checks;
          accepted += CheckOneStep(s0, {pool[a]}, 1);
          for (size_t b = 0; b < pool.size(); ++b) {
            const std::vector<double> two{pool[a], pool[b]};
            for (size_t split = 0; split <= 2; ++split, ++checks) accepted += CheckOneStep(s0, two, split);
            for (size_t c = 0; c < pool.size(); ++c) {
              const std::vector<double> three{pool[a], pool[b], pool[c]};
              for (size_t split = 0; split <= 3; ++split, ++checks) accepted += CheckOneStep(s0, three, split);
            }
            if (HasFailure()) return;
          }
        }
      }
    }
  }
  std::printf("edge checks: %lld, accepted %lld\n", static_cast<long long>(checks), static_cast<long long>(accepted));
  EXPECT_GT(accepted, checks / 4);
}

TEST(OrderedSumAlgebra, CompositionIsAssociative) {
  // Random runs of single-term summaries (exact, inexact, ties, zeros, unfit and special
  // terms) under one frame: any bracketing equals the left fold, field for field.
  TestRng rng{777};
  const int frame = 0;
  const auto random_term = [&]() -> double {
    switch (rng.Next() % 8) {
      case 0:
        return (rng.Next() & 1 ? -1.0 : 1.0) * std::ldexp(static_cast<double>(rng.Range(0, 64)), -53);  // ties
      case 1:
        return (rng.Next() & 1 ? -1.0 : 1.0) * std::ldexp(static_cast<double>(rng.Range(0, 1 << 20)), -60);
      case 2:
        return 0.0;
      case 3:
        return -0.0;
      case 4:
        return rng.Next() % 50 == 0 ? 1e300 : 0x1p-54;  // rarely unfit
      case 5:
        return rng.Next() % 50 == 0 ? INFINITY : -0x1.8p-53;
      default:
        return (rng.Next() & 1 ? -1.0 : 1.0) *
               std::ldexp(1.0 + (rng.Next() >> 11) * 0x1p-53, -static_cast<int>(rng.Range(1, 40)));
    }
  };
  // Folds [begin, end) with random bracketing.
  std::vector<RunSummary> leaves;
  struct Bracketer {
    TestRng& rng;
    const std::vector<RunSummary>& leaves;
    RunSummary operator()(size_t begin, size_t end) const {
      if (begin == end) return IdentityRun();
      if (end - begin == 1) return leaves[begin];
      const size_t mid = begin + 1 + rng.Next() % (end - begin - 1);
      // Insert empty runs now and then: the identity must be neutral on both sides.
      RunSummary left = (*this)(begin, mid);
      if (rng.Next() % 7 == 0) left = Compose(left, IdentityRun());
      RunSummary right = (*this)(mid, end);
      if (rng.Next() % 7 == 0) right = Compose(IdentityRun(), right);
      return Compose(left, right);
    }
  };
  for (int trial = 0; trial < 200000; ++trial) {
    const size_t len = 1 + rng.Next() % 40;
    leaves.clear();
    RunSummary fold = IdentityRun();
    for (size_t i = 0; i < len; ++i) {
      RunSummary one = IdentityRun();
      AppendTerm(one, BitsOf(random_term()), frame);
      leaves.push_back(one);
      fold = Compose(fold, one);
    }
    RunSummary appended = IdentityRun();
    for (const RunSummary& leaf : leaves) appended = Compose(appended, leaf);
    const RunSummary bracketed = Bracketer{rng, leaves}(0, len);
    ASSERT_TRUE(SameSummary(fold, bracketed)) << "trial " << trial;
    ASSERT_TRUE(SameSummary(fold, appended)) << "trial " << trial;
  }
}

TEST(OrderedSumAlgebra, AppendTermEqualsComposeWithOneTermRun) {
  TestRng rng{99};
  for (int trial = 0; trial < 100000; ++trial) {
    RunSummary run = IdentityRun();
    RunSummary composed = IdentityRun();
    const int frame = static_cast<int>(rng.Range(-5, 5));
    for (int i = 0; i < 20; ++i) {
      const double x = (rng.Next() & 1 ? -1.0 : 1.0) * std::ldexp(static_cast<double>(rng.Range(0, 255)), frame - 56);
      AppendTerm(run, BitsOf(x), frame);
      RunSummary one = IdentityRun();
      AppendTerm(one, BitsOf(x), frame);
      composed = Compose(composed, one);
    }
    ASSERT_TRUE(SameSummary(run, composed));
  }
}

// The pitfalls of the signed design (section 4), each as "S0; terms", at every split. A
// design with the pitfall accepts and returns the wrong value; the walk must either
// refuse or return the loop's bits.
TEST(OrderedSumAlgebra, SignedDesignPitfalls) {
  struct Case {
    const char* name;
    double s0;
    std::vector<double> terms;
  };
  const double u = 0x1p-52;  // the unit of [1, 2)
  const std::vector<Case> cases = {
      {"1 final value only", 1.0, {-5 * 0x1p-53, 6 * 0x1p-53}},
      {"2 no lower margin", 1.0, {-0x1p-53}},
      {"3 even increment, not even result", 1.0, {1.25 * 0x1p-53, -0x1p-53}},
      {"5 extremes from the wrong parity path", 1.0, {1.25 * 0x1p-53, -0x1p-53, -0x1p-52}},
      {"6 subnormal terms are not zero", 0x1p-1021, {-6 * 0x1p-1074}},
      {"7 cancellation gives +0", -0x1p-1074, {0x1p-1074}},
      {"10 binade 1023 overflow", DBL_MAX, {0x1p970, -3 * 0x1p971}},
      {"10b binade 1023 overflow", DBL_MAX, {0x1p970}},
      {"tie above 1 after odd N", 1.0 + u, {0x1p-53}},
      {"negative sum, tie toward zero", -(1.0 + u), {0x1p-53}},
      {"negative sum, tie away from zero", -(1.0 + u), {-0x1p-53}},
      {"tiny frame crossing zero", 3 * 0x1p-1074, {-5 * 0x1p-1074, 0x1p-1073}},
      {"into binade -1022 from the tiny frame", 0x1.fffffffffffffp-1022, {0x1p-1074, -0x1p-1074}},
  };
  for (const Case& c : cases) {
    for (size_t split = 0; split <= c.terms.size(); ++split) CheckOneStep(c.s0, c.terms, split);
  }
  // The ones that must be accepted (they stay inside the margins) give the loop's bits.
  EXPECT_TRUE(CheckOneStep(1.0 + u, {0x1p-53}, 1));
  EXPECT_TRUE(CheckOneStep(-(1.0 + u), {-0x1p-53}, 1));
  EXPECT_TRUE(CheckOneStep(3 * 0x1p-1074, {-5 * 0x1p-1074, 0x1p-1073}, 1));
  // The cancellation must be written as +0.
  uint64_t s = BitsOf(-0x1p-1074);
  RunSummary run = IdentityRun();
  AppendTerm(run, BitsOf(0x1p-1074), kTinyFrame);
  ASSERT_TRUE(TryApplyRun(s, run, kTinyFrame));
  EXPECT_EQ(s, 0u);
}

TEST(OrderedSumAlgebra, TermsAndSpecialValues) {
  // -0 and +0 move nothing and are not "non-zero".
  for (double z : {0.0, -0.0}) {
    const TermIncrement t = IncrementOfTerm(BitsOf(z), 0);
    EXPECT_EQ(t.d[0], 0);
    EXPECT_EQ(t.d[1], 0);
    EXPECT_EQ(t.flags, 0u);
  }
  // A term far above the frame is unfit for both parities.
  EXPECT_EQ(IncrementOfTerm(BitsOf(0x1p60), 0).flags & (kUnfitEven | kUnfitOdd), kUnfitEven | kUnfitOdd);
  EXPECT_EQ(IncrementOfTerm(BitsOf(-0x1p60), 0).flags & (kUnfitEven | kUnfitOdd), kUnfitEven | kUnfitOdd);
  // One unit and a half unit (a tie) in frame 0.
  TermIncrement one = IncrementOfTerm(BitsOf(0x1p-52), 0);
  EXPECT_EQ(one.d[0], 1);
  EXPECT_EQ(one.d[1], 1);
  TermIncrement half = IncrementOfTerm(BitsOf(0x1p-53), 0);
  EXPECT_EQ(half.d[0], 0);  // N even: N + 0 is even
  EXPECT_EQ(half.d[1], 1);  // N odd: N + 1 is even
  TermIncrement minus_half = IncrementOfTerm(BitsOf(-0x1p-53), 0);
  EXPECT_EQ(minus_half.d[0], 0);
  EXPECT_EQ(minus_half.d[1], -1);
  // A subnormal term in the tiny frame is exact.
  EXPECT_EQ(IncrementOfTerm(BitsOf(-7 * 0x1p-1074), kTinyFrame).d[0], -7);
  // Special terms set flags; the walk then follows IEEE: inf + -inf is NaN.
  RunSummary specials = IdentityRun();
  AppendTerm(specials, BitsOf(-INFINITY), 0);
  uint64_t s = BitsOf(INFINITY);
  ASSERT_TRUE(TryApplyRun(s, specials, 0));
  EXPECT_TRUE(std::isnan(DoubleOf(s)));
  s = BitsOf(-INFINITY);
  ASSERT_TRUE(TryApplyRun(s, specials, 0));
  EXPECT_EQ(s, BitsOf(-INFINITY));
  s = BitsOf(1.0);
  EXPECT_FALSE(TryApplyRun(s, specials, 0));  // a finite sum adds an infinity term by term
  RunSummary nan_run = IdentityRun();
  AppendTerm(nan_run, BitsOf(NAN), 0);
  s = BitsOf(-INFINITY);
  ASSERT_TRUE(TryApplyRun(s, nan_run, 0));
  EXPECT_TRUE(std::isnan(DoubleOf(s)));
  // A run of zeros leaves any finite sum alone, whatever the frame.
  RunSummary zeros = IdentityRun();
  AppendTerm(zeros, BitsOf(-0.0), 7);
  AppendTerm(zeros, BitsOf(0.0), 7);
  s = BitsOf(1.0);
  ASSERT_TRUE(TryApplyRun(s, zeros, 7));
  EXPECT_EQ(s, BitsOf(1.0));
  s = 0;
  ASSERT_TRUE(TryApplyRun(s, zeros, 7));
  EXPECT_EQ(s, 0u);
}

TEST(OrderedSumAlgebra, WrongFrameIsRefused) {
  RunSummary run = IdentityRun();
  AppendTerm(run, BitsOf(0x1p-52), 1);  // formed for [2, 4)
  uint64_t s = BitsOf(1.5);             // but the sum is in [1, 2)
  EXPECT_FALSE(TryApplyRun(s, run, 1));
  EXPECT_EQ(s, BitsOf(1.5));
}

}  // namespace
}  // namespace exact
}  // namespace exactq
