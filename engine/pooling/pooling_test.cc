#include "engine/pooling/pooling.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace exactq {
namespace {

uint64_t Bits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

const double kNan = std::numeric_limits<double>::quiet_NaN();

PooledScores PoolOrDie(const std::vector<double>& values) {
  absl::StatusOr<PooledScores> pooled = PoolScores(values);
  EXPECT_TRUE(pooled.ok()) << pooled.status();
  return pooled.ok() ? *pooled : PooledScores{};
}

TEST(PoolingTest, EmptyInputIsInvalid) {
  EXPECT_EQ(PoolScores({}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PoolingTest, SingleFrameIsEveryStatistic) {
  const PooledScores pooled = PoolOrDie({42.5});
  EXPECT_EQ(pooled.count, 1u);
  for (double v : {pooled.min, pooled.max, pooled.mean, pooled.p1, pooled.p5, pooled.p10, pooled.median}) {
    EXPECT_EQ(v, 42.5);
  }
  // 1 / (1 / 43.5) - 1: 1/43.5 is rounded, so the harmonic mean of one value is that
  // value only up to rounding; the formula's exact result is the contract.
  EXPECT_EQ(Bits(pooled.harmonic_mean), Bits(1.0 / (1.0 / 43.5) - 1.0));
}

// Values chosen so every step is exact: 1/(3+1) + 1/(3+1) + 1/(1+1) = 1, so the
// harmonic mean is 3/1 - 1 = 2; the mean is 7/3 rounded once.
TEST(PoolingTest, MeanAndLibvmafHarmonicMeanByHand) {
  const PooledScores pooled = PoolOrDie({3.0, 1.0, 3.0});
  EXPECT_EQ(pooled.harmonic_mean, 2.0);
  EXPECT_EQ(Bits(pooled.mean), Bits(7.0 / 3.0));
  EXPECT_EQ(pooled.min, 1.0);
  EXPECT_EQ(pooled.max, 3.0);
  EXPECT_EQ(pooled.median, 3.0);  // rank ceil(1.5) = 2 of {1, 3, 3}
}

// The mean adds in frame order: 1e16 + 1 is a tie that rounds to even (1e16), twice,
// then - 1e16 leaves 0. Any other order (pairwise, Kahan, sorted) would give 0.5.
TEST(PoolingTest, MeanSumsInFrameOrder) {
  EXPECT_EQ(PoolOrDie({1e16, 1.0, 1.0, -1e16}).mean, 0.0);
  EXPECT_EQ(PoolOrDie({1e16, -1e16, 1.0, 1.0}).mean, 0.5);
}

TEST(PoolingTest, NearestRankPercentiles) {
  // n = 10: p1, p5, p10 are rank 1; the median is rank 5.
  std::vector<double> ten;
  for (int i = 10; i >= 1; --i) ten.push_back(i);  // unsorted input
  const PooledScores a = PoolOrDie(ten);
  EXPECT_EQ(a.p1, 1.0);
  EXPECT_EQ(a.p5, 1.0);
  EXPECT_EQ(a.p10, 1.0);
  EXPECT_EQ(a.median, 5.0);

  // n = 11: p10 is rank ceil(1.1) = 2; the median rank ceil(5.5) = 6.
  std::vector<double> eleven;
  for (int i = 1; i <= 11; ++i) eleven.push_back(i * 10.0);
  const PooledScores b = PoolOrDie(eleven);
  EXPECT_EQ(b.p1, 10.0);
  EXPECT_EQ(b.p10, 20.0);
  EXPECT_EQ(b.median, 60.0);

  // n = 101: p1 = rank ceil(1.01) = 2, p5 = rank ceil(5.05) = 6, p10 = rank 11,
  // median = rank 51.
  std::vector<double> many;
  for (int i = 1; i <= 101; ++i) many.push_back(i);
  const PooledScores c = PoolOrDie(many);
  EXPECT_EQ(c.p1, 2.0);
  EXPECT_EQ(c.p5, 6.0);
  EXPECT_EQ(c.p10, 11.0);
  EXPECT_EQ(c.median, 51.0);

  // n = 2: the median is the lower value.
  EXPECT_EQ(PoolOrDie({9.0, 4.0}).median, 4.0);
}

TEST(PoolingTest, NegativeZeroSortsFirst) {
  const PooledScores pooled = PoolOrDie({0.0, -0.0, 5.0});
  EXPECT_EQ(Bits(pooled.p1), Bits(-0.0));
  EXPECT_EQ(Bits(pooled.median), Bits(0.0));  // rank 2 of {-0, +0, 5}
}

// libvmaf's min/max: the first value seeds them; a later NaN never wins a comparison.
TEST(PoolingTest, NanAfterTheFirstFrameIsIgnoredByMinMax) {
  const PooledScores pooled = PoolOrDie({3.0, kNan, 1.0, 7.0});
  EXPECT_EQ(pooled.min, 1.0);
  EXPECT_EQ(pooled.max, 7.0);
  EXPECT_TRUE(std::isnan(pooled.mean));
  EXPECT_TRUE(std::isnan(pooled.harmonic_mean));
  for (double v : {pooled.p1, pooled.p5, pooled.p10, pooled.median}) EXPECT_TRUE(std::isnan(v));
}

TEST(PoolingTest, NanInTheFirstFrameSticksInMinMax) {
  const PooledScores pooled = PoolOrDie({-kNan, 1.0, 7.0});
  EXPECT_TRUE(std::isnan(pooled.min));
  EXPECT_TRUE(std::isnan(pooled.max));
  // Canonical: the sign of the input NaN does not leak out.
  EXPECT_EQ(Bits(pooled.min), Bits(kNan));
  EXPECT_EQ(Bits(pooled.mean), Bits(kNan));
}

TEST(PoolingTest, NearestRankPercentileDirect) {
  const std::vector<double> sorted = {1.0, 2.0, 3.0, 4.0};
  EXPECT_EQ(NearestRankPercentile(sorted, 0), 1.0);
  EXPECT_EQ(NearestRankPercentile(sorted, 25), 1.0);
  EXPECT_EQ(NearestRankPercentile(sorted, 26), 2.0);
  EXPECT_EQ(NearestRankPercentile(sorted, 100), 4.0);
}

}  // namespace
}  // namespace exactq
