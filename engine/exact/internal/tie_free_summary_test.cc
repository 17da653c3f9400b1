// The tie-free summary (tie_free_summary.h) must be exactly engine/exact's RunSummary
// wherever it is used. This host test splits chunks into lanes of 4 terms, combines the
// lanes the way the device block does (exclusive sum of the lane increments, then min and
// max of base + lane extremes), and compares every field with exact::SummarizeTerms, the
// host's plain left-to-right composition. The data covers SSIM-like terms, signed terms,
// increments at and around the 2^43 bound, zeros, subnormals in the tiny frame, and the
// cases that must leave the tie-free path (ties, large, special terms).
#include "engine/exact/internal/tie_free_summary.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "engine/exact/ordered_sum.h"
#include "engine/exact/ordered_sum_algebra.h"
#include "gtest/gtest.h"

namespace exactq {
namespace exact {
namespace gpu {
namespace {

constexpr int kLaneTerms = 4;

// The device block's tie-free path, sequentially. Returns false when some lane does not
// qualify (the device then takes the general path).
bool EmulatedTieFreeSummary(const std::vector<double>& terms, int frame, exact::RunSummary* out) {
  const int n = static_cast<int>(terms.size());
  int64_t base = 0;
  int64_t lo = exact::kEmptyLo;
  int64_t hi = exact::kEmptyHi;
  uint32_t flags = 0;
  bool fast = true;
  for (int first = 0; first < n; first += kLaneTerms) {
    double x[kLaneTerms] = {0, 0, 0, 0};
    int valid = 0;
    for (int j = 0; j < kLaneTerms && first + j < n; ++j) {
      x[j] = terms[static_cast<size_t>(first + j)];
      valid = j + 1;
    }
    const LaneRun lane = LaneRunOf(x, valid, frame);
    fast = fast && lane.fast;
    lo = std::min(lo, base + lane.lo);
    hi = std::max(hi, base + lane.hi);
    flags |= lane.flags;
    base += lane.d;
  }
  if (!fast) return false;
  *out = TieFreeSummary(base, lo, hi, flags);
  return true;
}

bool SameSummary(const exact::RunSummary& a, const exact::RunSummary& b) {
  if (a.flags != b.flags) return false;
  for (int p = 0; p < 2; ++p) {
    if (a.d[p] != b.d[p] || a.lo[p] != b.lo[p] || a.hi[p] != b.hi[p]) return false;
  }
  return true;
}

std::string Describe(const exact::RunSummary& r) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "d=(%lld,%lld) lo=(%lld,%lld) hi=(%lld,%lld) flags=%u", static_cast<long long>(r.d[0]),
                static_cast<long long>(r.d[1]), static_cast<long long>(r.lo[0]), static_cast<long long>(r.lo[1]),
                static_cast<long long>(r.hi[0]), static_cast<long long>(r.hi[1]), r.flags);
  return buf;
}

// Checks one chunk; returns whether it took the tie-free path.
bool CheckChunk(const std::vector<double>& terms, int frame, const char* what, int seed) {
  exact::RunSummary fast;
  if (!EmulatedTieFreeSummary(terms, frame, &fast)) return false;
  const exact::RunSummary want = exact::SummarizeTerms(terms.data(), terms.size(), frame);
  EXPECT_TRUE(SameSummary(fast, want)) << what << " seed " << seed << " frame " << frame << " n " << terms.size()
                                       << ": tie-free " << Describe(fast) << ", general " << Describe(want);
  // Where the tie-free path is taken, the general summary has no unfit parity.
  EXPECT_EQ(want.flags & (exact::kUnfitEven | exact::kUnfitOdd), 0u) << what << " seed " << seed;
  return true;
}

double Unit(int frame) { return std::ldexp(1.0, frame - 52); }

const int kLengths[] = {1, 3, 4, 5, 31, 32, 33, 1023, 1024};

TEST(TieFreeSummaryTest, SsimLikeTermsEqualTheGeneralSummary) {
  std::mt19937_64 rng(1);
  int tie_free = 0;
  int total = 0;
  for (int seed = 0; seed < 400; ++seed) {
    const int n = kLengths[seed % 9];
    // The running sum of a 4K frame goes from 2^16 to 2^39; terms are w * SSIM with w up to
    // 65536, 5% of them negative.
    const int frame = 20 + static_cast<int>(rng() % 20);
    std::uniform_real_distribution<double> ssim(0.3, 1.0);
    std::vector<double> terms(static_cast<size_t>(n));
    for (double& t : terms) {
      t = 65536.0 * ssim(rng);
      if (rng() % 20 == 0) t = -t * 0.1;
    }
    total += 1;
    tie_free += CheckChunk(terms, frame, "ssim-like", seed);
  }
  // Most chunks of this kind qualify; the others have a tie (more likely in low frames).
  EXPECT_GT(tie_free, total / 2);
  std::printf("ssim-like: %d of %d chunks tie-free\n", tie_free, total);
}

TEST(TieFreeSummaryTest, IncrementsAroundTheBound) {
  std::mt19937_64 rng(2);
  int tie_free = 0;
  int not_tie_free = 0;
  for (int seed = 0; seed < 300; ++seed) {
    const int n = kLengths[seed % 9];
    const int frame = static_cast<int>(rng() % 200) - 100;
    const double u = Unit(frame);
    std::vector<double> terms(static_cast<size_t>(n));
    for (double& t : terms) {
      // Integers near 2^43 units (exact multiples: no rounding, no tie), either sign.
      const int64_t r = kTieFreeMaxIncrement + static_cast<int64_t>(rng() % 5) - 3;
      t = static_cast<double>(r) * u * ((rng() & 1) ? -1.0 : 1.0);
    }
    if (CheckChunk(terms, frame, "bound", seed)) {
      ++tie_free;
    } else {
      ++not_tie_free;
    }
  }
  EXPECT_GT(tie_free, 0);
  EXPECT_GT(not_tie_free, 0);
}

TEST(TieFreeSummaryTest, AllIncrementsAtTheBoundStayBelowTheLimit) {
  // The worst case the bound allows: 1024 terms of exactly 2^43 units, one sign.
  for (double sign : {1.0, -1.0}) {
    const int frame = 30;
    std::vector<double> terms(1024, sign * static_cast<double>(kTieFreeMaxIncrement) * Unit(frame));
    EXPECT_TRUE(CheckChunk(terms, frame, "max", 0));
  }
}

TEST(TieFreeSummaryTest, ZerosSubnormalsAndTheTinyFrame) {
  std::mt19937_64 rng(3);
  int tie_free = 0;
  for (int seed = 0; seed < 200; ++seed) {
    const int n = kLengths[seed % 9];
    std::vector<double> terms(static_cast<size_t>(n));
    for (double& t : terms) {
      switch (rng() % 4) {
        case 0:
          t = 0.0;
          break;
        case 1:
          t = -0.0;
          break;
        case 2:
          t = std::ldexp(static_cast<double>(rng() % 1000), -1074);
          break;  // subnormal
        default:
          t = -std::ldexp(static_cast<double>(rng() % 1000), -1074);
          break;
      }
    }
    tie_free += CheckChunk(terms, exact::kTinyFrame, "tiny", seed);
    // Under a normal frame these are all far below a unit: increments 0.
    tie_free += CheckChunk(terms, 10, "tiny-in-normal-frame", seed);
  }
  EXPECT_EQ(tie_free, 400);  // no ties possible: every term is exact or rounds to 0
  // All zeros: the summary has no kNonZero flag and lo = hi = 0.
  std::vector<double> zeros(77, 0.0);
  exact::RunSummary r;
  ASSERT_TRUE(EmulatedTieFreeSummary(zeros, 12, &r));
  EXPECT_EQ(r.flags, 0u);
  EXPECT_EQ(r.lo[0], 0);
  EXPECT_EQ(r.hi[1], 0);
}

TEST(TieFreeSummaryTest, TiesLargeAndSpecialTermsLeaveThePath) {
  const int frame = 0;
  const double u = Unit(frame);
  const std::vector<std::vector<double>> cases = {
      {1.0 * u, 2.5 * u, 3.0 * u},                          // a tie
      {1.0 * u, -0.5 * u},                                  // a negative tie
      {std::ldexp(1.0, 44) * u},                            // r = 2^44
      {std::numeric_limits<double>::infinity()},            // +inf
      {1.0, -std::numeric_limits<double>::infinity()},      // -inf
      {std::numeric_limits<double>::quiet_NaN(), 1.0 * u},  // NaN
      {std::ldexp(1.0, 60)},                                // unfit under frame 0
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    exact::RunSummary r;
    EXPECT_FALSE(EmulatedTieFreeSummary(cases[i], frame, &r)) << "case " << i;
  }
}

TEST(TieFreeSummaryTest, RandomSignedRunsInRandomFrames) {
  std::mt19937_64 rng(4);
  int tie_free = 0;
  for (int seed = 0; seed < 2000; ++seed) {
    const int n = kLengths[seed % 9];
    const int frame = static_cast<int>(rng() % 2046) - 1022;
    std::vector<double> terms(static_cast<size_t>(n));
    for (double& t : terms) {
      // Magnitudes from far below a unit to about 2^40 units.
      const int e = frame - 52 - 60 + static_cast<int>(rng() % 100);
      t = std::ldexp(1.0 + static_cast<double>(rng() % (uint64_t{1} << 52)) * 0x1p-52, e);
      if (rng() & 1) t = -t;
    }
    tie_free += CheckChunk(terms, frame, "random", seed);
  }
  EXPECT_GT(tie_free, 100);
}

}  // namespace
}  // namespace gpu
}  // namespace exact
}  // namespace exactq
