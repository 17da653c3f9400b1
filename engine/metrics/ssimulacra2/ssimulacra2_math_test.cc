// The shared per-pixel math and the host scoring: constants re-derived from their
// definitions, the cube root and EOTF against libm, chroma indexing, the scale rule,
// the weight table and pooling.

#include "engine/metrics/ssimulacra2/ssimulacra2_math.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "engine/metrics/ssimulacra2/srgb_eotf_table.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_score.h"
#include "gtest/gtest.h"

namespace exactq {
namespace ssimulacra2 {
namespace {

using L = ScalarLanes;

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}
uint64_t Bits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, sizeof(u));
  return u;
}

// Opaque to the optimiser: forces run-time evaluation of the expressions below.
template <class T>
T Opaque(T v) {
  volatile T x = v;
  return x;
}

// B.6: the coefficients solved in f64 exactly as the fork does (Cramer's rule with a
// first-row expansion, multiplied by 1/det), then rounded to f32, equal the shipped
// constants bit for bit.
TEST(Ssimulacra2MathTest, BlurCoefficientsMatchTheirDerivation) {
  const double sigma = 1.5;
  const double pi = 3.14159265358979323846;
  const double radius = std::round(3.2795 * sigma + 0.2546);
  ASSERT_EQ(radius, kBlurRadius);
  const double step = pi / (2.0 * radius);
  const double omega[3] = {step, 3.0 * step, 5.0 * step};
  const double p1 = +1.0 / std::tan(0.5 * omega[0]);
  const double p3 = -1.0 / std::tan(0.5 * omega[1]);
  const double p5 = +1.0 / std::tan(0.5 * omega[2]);
  const double r1 = +p1 * p1 / std::sin(omega[0]);
  const double r3 = -p3 * p3 / std::sin(omega[1]);
  const double r5 = +p5 * p5 / std::sin(omega[2]);
  double rho[3];
  for (int i = 0; i < 3; ++i) {
    rho[i] = std::exp(-0.5 * sigma * sigma * omega[i] * omega[i]) * (1.0 / radius);
  }
  const double d13 = p1 * r3 - r1 * p3;
  const double d35 = p3 * r5 - r3 * p5;
  const double d51 = p5 * r1 - r5 * p1;
  const double zeta15 = d35 * (1.0 / d13);
  const double zeta35 = d51 * (1.0 / d13);
  const double a[3][3] = {{p1, p3, p5}, {r1, r3, r5}, {zeta15, zeta35, 1.0}};
  const double gamma[3] = {1.0, radius * radius - sigma * sigma, zeta15 * rho[0] + zeta35 * rho[1] + rho[2]};
  auto det = [](const double(&m)[3][3]) {
    return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
           m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
  };
  const double inv_det = 1.0 / det(a);
  float n2[3], d1[3];
  for (int col = 0; col < 3; ++col) {
    double m[3][3];
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) m[i][j] = j == col ? gamma[i] : a[i][j];
    }
    const double beta = det(m) * inv_det;
    n2[col] = static_cast<float>(-beta * std::cos(omega[col] * (radius + 1.0)));
    d1[col] = static_cast<float>(-2.0 * std::cos(omega[col]));
  }
  EXPECT_EQ(Bits(n2[0]), Bits(kBlurN2_0));
  EXPECT_EQ(Bits(n2[1]), Bits(kBlurN2_1));
  EXPECT_EQ(Bits(n2[2]), Bits(kBlurN2_2));
  EXPECT_EQ(Bits(d1[0]), Bits(kBlurD1_0));
  EXPECT_EQ(Bits(d1[1]), Bits(kBlurD1_1));
  EXPECT_EQ(Bits(d1[2]), Bits(kBlurD1_2));
  EXPECT_NE(kBlurD1_2, 0.0f);  // about -1.2e-16: kept, not rounded to 0
}

// Constants written as constexpr expressions equal the same f32 expressions
// evaluated at run time (the fork's code computes them at run time).
TEST(Ssimulacra2MathTest, FoldedConstantsEqualRunTimeF32) {
  EXPECT_EQ(Bits(kOneThird), Bits(Opaque(1.0f) / Opaque(3.0f)));
  EXPECT_EQ(Bits(kOneThird), 0x3eaaaaabu);
  EXPECT_EQ(Bits(kOpsinM01), Bits((Opaque(1.0f) - Opaque(0.30f)) - Opaque(0.078f)));
  EXPECT_EQ(Bits(kOpsinM11), Bits((Opaque(1.0f) - Opaque(0.23f)) - Opaque(0.078f)));
  EXPECT_EQ(Bits(kOpsinM22), Bits((Opaque(1.0f) - Opaque(kOpsinM20)) - Opaque(kOpsinM21)));
  for (int depth = 8; depth <= 16; ++depth) {
    for (YuvMatrix m :
         {YuvMatrix::kBt709Limited, YuvMatrix::kBt601Limited, YuvMatrix::kBt709Full, YuvMatrix::kBt601Full}) {
      const YuvToRgbCoefficients k = MakeYuvToRgbCoefficients(m, depth);
      const bool bt709 = m == YuvMatrix::kBt709Limited || m == YuvMatrix::kBt709Full;
      const bool limited = m == YuvMatrix::kBt709Limited || m == YuvMatrix::kBt601Limited;
      const float kr = Opaque(bt709 ? 0.2126f : 0.299f);
      const float kg = Opaque(bt709 ? 0.7152f : 0.587f);
      const float kb = Opaque(bt709 ? 0.0722f : 0.114f);
      const float one = Opaque(1.0f);
      EXPECT_EQ(Bits(k.inv_peak), Bits(one / static_cast<float>((1 << depth) - 1)));
      EXPECT_EQ(Bits(k.y_off), Bits(limited ? Opaque(16.0f) / Opaque(255.0f) : 0.0f));
      EXPECT_EQ(Bits(k.y_scale), Bits(limited ? Opaque(255.0f) / Opaque(219.0f) : 1.0f));
      EXPECT_EQ(Bits(k.c_scale), Bits(limited ? Opaque(255.0f) / Opaque(224.0f) : 1.0f));
      EXPECT_EQ(k.c_off, 0.5f);
      EXPECT_EQ(Bits(k.cr_r), Bits(2.0f * (one - kr)));
      EXPECT_EQ(Bits(k.cb_b), Bits(2.0f * (one - kb)));
      EXPECT_EQ(Bits(k.cb_g), Bits(-((2.0f * kb) * (one - kb)) / kg));
      EXPECT_EQ(Bits(k.cr_g), Bits(-((2.0f * kr) * (one - kr)) / kg));
    }
  }
}

TEST(Ssimulacra2MathTest, CubeRootIsCloseToLibmAndZeroAtOrBelowZero) {
  EXPECT_EQ(Bits(CubeRoot<L>(0.0f)), Bits(0.0f));
  EXPECT_EQ(Bits(CubeRoot<L>(-0.0f)), Bits(0.0f));
  EXPECT_EQ(Bits(CubeRoot<L>(-1.0f)), Bits(0.0f));
  double worst = 0.0;
  // The range l, m, s take (bias 0.0038 up to about 1), and beyond.
  for (float x = 1e-6f; x < 4.0f; x *= 1.0001f) {
    const double exact = std::cbrt(static_cast<double>(x));
    worst = std::max(worst, std::fabs(CubeRoot<L>(x) - exact) / exact);
  }
  // Measured 1.151e-6 (the fork's comment says "~7e-7"; it does not matter for
  // exactness, every backend computes these same bits).
  EXPECT_LT(worst, 1.2e-6);
}

// Pinned: the one cube root every pixel's L, M, S subtract. A change here changes
// every score (definition version bump).
TEST(Ssimulacra2MathTest, CubeRootOfBiasIsPinned) {
  const float c = CubeRootOfOpsinBias();
  EXPECT_NEAR(c, std::cbrt(static_cast<double>(kOpsinBias)), 2e-7);
  EXPECT_EQ(Bits(c), Bits(CubeRoot<L>(kOpsinBias)));
  EXPECT_EQ(Bits(c), 0x3e1fb27bu) << std::hexfloat << c;  // 0x1.3f64f6p-3
}

TEST(Ssimulacra2MathTest, SrgbEotfInterpolatesTheTable) {
  EXPECT_EQ(SrgbEotf<L>(kSrgbEotfTable, -0.5f), 0.0f);
  EXPECT_EQ(SrgbEotf<L>(kSrgbEotfTable, 0.0f), 0.0f);
  EXPECT_EQ(SrgbEotf<L>(kSrgbEotfTable, 1.0f), 1.0f);
  EXPECT_EQ(SrgbEotf<L>(kSrgbEotfTable, 2.0f), 1.0f);
  EXPECT_TRUE(std::isnan(SrgbEotf<L>(kSrgbEotfTable, std::numeric_limits<float>::quiet_NaN())));
  // Largest float below 1: index 1022 (the last interval), never past the table.
  EXPECT_LE(SrgbEotf<L>(kSrgbEotfTable, std::nextafter(1.0f, 0.0f)), 1.0f);
  double worst = 0.0;
  float previous = 0.0f;
  for (int i = 1; i < 100000; ++i) {
    const float x = static_cast<float>(i) / 100000.0f;
    const double v = x;
    const double exact = v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
    const float got = SrgbEotf<L>(kSrgbEotfTable, x);
    worst = std::max(worst, std::fabs(got - exact));
    EXPECT_GE(got, previous) << x;  // monotonic
    previous = got;
  }
  EXPECT_LT(worst, 5e-7);  // measured 4.5e-7 (spec B.3: "about 2e-7")
}

TEST(Ssimulacra2MathTest, NearestChromaIndex) {
  EXPECT_EQ(NearestChromaIndex(5, 10, 10), 5);  // 4:4:4
  EXPECT_EQ(NearestChromaIndex(7, 10, 5), 3);   // halved
  EXPECT_EQ(NearestChromaIndex(9, 10, 5), 4);
  // 17 luma, 9 chroma: floor(x * 9 / 17).
  EXPECT_EQ(NearestChromaIndex(0, 17, 9), 0);
  EXPECT_EQ(NearestChromaIndex(2, 17, 9), 1);
  EXPECT_EQ(NearestChromaIndex(15, 17, 9), 7);
  EXPECT_EQ(NearestChromaIndex(16, 17, 9), 8);
}

TEST(Ssimulacra2MathTest, SsimTermIsZeroForEqualStatistics) {
  float num_m, num_s, den_s;
  SsimFactors<L>(0.3f, 0.3f, 0.1f, 0.1f, 0.1f, num_m, num_s, den_s);
  EXPECT_EQ(num_m, 1.0f);
  EXPECT_EQ(num_s, den_s);
  EXPECT_EQ(Bits(SsimDissimilarity<L>(num_m, num_s, den_s)), Bits(0.0));
  // Negative values clamp to +0; a NaN stays.
  EXPECT_EQ(Bits(SsimDissimilarity<L>(1.0, 2.0, 1.0)), Bits(0.0));
  EXPECT_TRUE(std::isnan(SsimDissimilarity<L>(std::nan(""), 1.0, 1.0)));
}

TEST(Ssimulacra2MathTest, EdgeDifferenceSplitsIntoRingingAndBlurring) {
  double ringing, blurring;
  // Distorted detail above the reference's: ringing.
  SplitEdgeDifference<L>(EdgeDifference<L>(0.5, 0.5, 0.75, 0.5), ringing, blurring);
  EXPECT_EQ(ringing, 0.25);
  EXPECT_EQ(Bits(blurring), Bits(0.0));
  SplitEdgeDifference<L>(EdgeDifference<L>(0.75, 0.5, 0.5, 0.5), ringing, blurring);
  EXPECT_EQ(Bits(ringing), Bits(0.0));
  EXPECT_EQ(blurring, 1.0 - 1.0 / 1.25);
  SplitEdgeDifference<L>(EdgeDifference<L>(0.2, 0.5, 0.8, 0.5), ringing, blurring);
  EXPECT_EQ(Bits(ringing), Bits(0.0));  // equal |img - mu|: +0, not -0
  EXPECT_EQ(Bits(blurring), Bits(0.0));
  const double inf = std::numeric_limits<double>::infinity();
  SplitEdgeDifference<L>(inf, ringing, blurring);
  EXPECT_EQ(ringing, inf);
  EXPECT_EQ(blurring, inf);
}

TEST(Ssimulacra2ScoreTest, ScaleCountFollowsTheForkRule) {
  EXPECT_EQ(ScaleCount(7, 8), 0);
  EXPECT_EQ(ScaleCount(8, 8), 1);
  EXPECT_EQ(ScaleCount(15, 15), 2);  // ceil(15/2) = 8: scale 1 is 8x8
  EXPECT_EQ(ScaleCount(17, 33), 2);
  EXPECT_EQ(ScaleCount(96, 96), 4);
  EXPECT_EQ(ScaleCount(256, 144), 5);  // libjxl computes 6 (spec B.12)
  EXPECT_EQ(ScaleCount(3840, 2160), 6);
  EXPECT_EQ(ScaleSide(17, 1), 9);
  EXPECT_EQ(ScaleSide(2160, 5), 68);
}

TEST(Ssimulacra2ScoreTest, WeightTableIsLibjxls) {
  int nonzero = 0;
  for (double w : kWeights) nonzero += w != 0.0;
  EXPECT_EQ(nonzero, 52);
  // A few entries by index c*36 + scale*6 + n*3 + m (spec B.11).
  EXPECT_EQ(kWeights[1], 0.0007376606707406586);     // X scale 0, 1-norm, ringing
  EXPECT_EQ(kWeights[48], 225.20515300849274);       // Y scale 2, 1-norm, SSIM
  EXPECT_EQ(kWeights[100], 171.2667255897307);       // B scale 4, 4-norm, ringing
  EXPECT_EQ(kWeights[107], 0.00010854057858411537);  // B scale 5, 4-norm, blurring
}

TEST(Ssimulacra2ScoreTest, ZeroSumsScoreExactly100) {
  FrameSums sums;
  sums.width = 64;
  sums.height = 64;
  sums.num_scales = ScaleCount(64, 64);
  absl::StatusOr<double> score = ScoreFromSums(sums);
  ASSERT_TRUE(score.ok());
  EXPECT_EQ(Bits(*score), Bits(100.0));
}

TEST(Ssimulacra2ScoreTest, OneWeightedNormFollowsThePolynomial) {
  // Only sum d of Y at scale 2 (weight index 48) is non-zero: the pooled value is
  // weight * (sum / pixels), then libjxl's scaling, polynomial and power.
  FrameSums sums;
  sums.width = 64;
  sums.height = 32;
  sums.num_scales = ScaleCount(64, 32);
  ASSERT_EQ(sums.num_scales, 3);
  sums.sums[2][1][kSumSsim] = 2.0;  // scale 2 is 16x8: mean 2 / 128
  double s = kWeights[48] * ((1.0 / 128.0) * 2.0);
  s = s * 0.9562382616834844;
  s = (2.326765642916932 * s - (0.020884521182843837 * s) * s) + ((6.248496625763138e-05 * s) * s) * s;
  absl::StatusOr<double> score = ScoreFromSums(sums);
  ASSERT_TRUE(score.ok());
  EXPECT_EQ(Bits(*score), Bits(100.0 - 10.0 * std::pow(s, 0.6276336467831387)));
}

TEST(Ssimulacra2ScoreTest, NonFiniteSumsFailTheFrame) {
  FrameSums sums;
  sums.width = 64;
  sums.height = 64;
  sums.num_scales = ScaleCount(64, 64);
  sums.sums[0][1][kSumSsim] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(ScoreFromSums(sums).status().code(), absl::StatusCode::kInternal);
  sums.sums[0][1][kSumSsim] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(ScoreFromSums(sums).status().code(), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace ssimulacra2
}  // namespace exactq
