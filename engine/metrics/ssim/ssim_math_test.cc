// The per-window arithmetic (ssim_math.h): the taps and their truncation, the
// stabilisers, and the term's exact values where they can be derived by hand.

#include "engine/metrics/ssim/ssim_math.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

#include "gtest/gtest.h"

namespace exactq {
namespace ssim {
namespace {

uint64_t Bits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

// A.3: the taps follow from the Xiph.Org construction (sigma 1.5, weight 256): the
// half-length floor(sigma * sqrt(-2 ln s)) with s = sqrt(pi/2) * sigma / 256, side taps
// 256 * N(k) rounded half up, centre = 256 - the sides.
TEST(SsimMathTest, TapsFollowFromTheGaussianConstruction) {
  const double sigma = 1.5;
  const double pi = 3.141592653589793238462643;
  const double s = std::sqrt(0.5 * pi) * sigma * (1.0 / 256);
  EXPECT_EQ(static_cast<int>(std::floor(sigma * std::sqrt(-2 * std::log(s)))), kRadius);
  const double scale = 1 / (std::sqrt(2 * pi) * sigma);
  int sides = 0;
  for (int k = 1; k <= kRadius; ++k) {
    const auto tap = static_cast<unsigned>(256 * scale * std::exp(-0.5 / (sigma * sigma) * k * k) + 0.5);
    EXPECT_EQ(Tap(kRadius - k), static_cast<int>(tap)) << k;
    EXPECT_EQ(Tap(kRadius + k), static_cast<int>(tap)) << k;
    sides += 2 * static_cast<int>(tap);
  }
  EXPECT_EQ(Tap(kRadius), kTapSum - sides);
  const int expected[kTapCount] = {2, 9, 28, 55, 68, 55, 28, 9, 2};
  int sum = 0;
  for (int k = 0; k < kTapCount; ++k) {
    EXPECT_EQ(Tap(k), expected[k]);
    sum += Tap(k);
  }
  EXPECT_EQ(sum, kTapSum);
}

// A.4: taps k in [max(0, 4 - x), 9 - max(0, x + 5 - W)) are kept, i.e. exactly those
// that read a sample inside the line.
TEST(SsimMathTest, KeptTapsAreThoseInsideTheLine) {
  for (int size = 1; size <= 20; ++size) {
    for (int pos = 0; pos < size; ++pos) {
      int sum = 0;
      for (int k = 0; k < kTapCount; ++k) {
        const int sample = pos - kRadius + k;
        const bool inside = sample >= 0 && sample < size;
        EXPECT_EQ(inside, k >= TapBegin(pos) && k < TapEnd(pos, size))
            << "size " << size << " pos " << pos << " k " << k;
        if (inside) sum += Tap(k);
      }
      EXPECT_EQ(KeptTapSum(pos, size), sum);
    }
  }
  // The border weights the header names: 162, 217, 245, 254 at 0..3 px from an edge.
  EXPECT_EQ(KeptTapSum(0, 100), 162);
  EXPECT_EQ(KeptTapSum(1, 100), 217);
  EXPECT_EQ(KeptTapSum(2, 100), 245);
  EXPECT_EQ(KeptTapSum(3, 100), 254);
  EXPECT_EQ(KeptTapSum(4, 100), 256);
  EXPECT_EQ(KeptTapSum(96, 100), 254);
  EXPECT_EQ(KeptTapSum(99, 100), 162);
  EXPECT_EQ(KeptTapSum(0, 1), 68);  // a 1-sample line keeps the centre tap only
}

// A.5: sm * sm is formed in double. At 16 bits the int product the peers form wraps to
// -131071, which would make the stabilisers negative.
TEST(SsimMathTest, StabilisersAreFormedInDoubleAtEveryDepth) {
  for (int depth = 8; depth <= 16; ++depth) {
    const double sm = static_cast<double>((1 << depth) - 1);
    const Stabilisers st = StabilisersFor(depth);
    EXPECT_EQ(Bits(st.c1_factor), Bits((sm * sm) * 0.0001)) << depth;
    EXPECT_EQ(Bits(st.c2_factor), Bits((sm * sm) * 0.0009)) << depth;
  }
  // 65535^2 = 4294836225 exactly (below 2^53), then one rounding by K1^2.
  EXPECT_EQ(Bits(StabilisersFor(16).c1_factor), Bits(4294836225.0 * 0.0001));
  EXPECT_GT(StabilisersFor(16).c1_factor, 429483.0);
}

// Identical content, w = 2^16 (an interior window), at 8 and 10 bits: the term is
// exactly 65536. Why: with x = y, mx2 = mxy = my2 = M and x2 = xy = y2 = P. At 8 and 10
// bits mux < 2^26 and P * w < 2^52, so every product and difference of the moments is
// an exact integer; then A = 2M + c1 appears in both num and den, and
// B = c2 + 2(Pw - M) equals den's second factor ((Pw - M) + Pw) - M + c2. So
// num = fl(fl(w*A)*B) and den = fl(A*B); scaling by w = 2^16 is exact, num = 2^16 * den,
// and num / den = 2^16 with no rounding. From 12 bits on mux^2 passes 2^53, the two
// factors round differently and the term can miss 65536 by a few ulps (checked below:
// the argument's bound is needed). At borders w is not a power of two and the term may
// miss w at any depth (ssim_reference_test.cc).
TEST(SsimMathTest, InteriorWindowOfIdenticalContentIsExactlyItsWeightUpTo10Bits) {
  std::mt19937 rng(7);
  for (int depth : {8, 10, 12}) {
    const Stabilisers st = StabilisersFor(depth);
    std::uniform_int_distribution<int> sample(0, (1 << depth) - 1);
    int misses = 0;
    for (int trial = 0; trial < 2000; ++trial) {
      Moments m;
      for (int ky = 0; ky < kTapCount; ++ky) {
        for (int kx = 0; kx < kTapCount; ++kx) {
          const int64_t t = Tap(ky) * Tap(kx);
          const int64_t s = sample(rng);
          m.mux += t * s;
          m.muy += t * s;
          m.x2 += t * s * s;
          m.xy += t * s * s;
          m.y2 += t * s * s;
          m.w += t;
        }
      }
      ASSERT_EQ(m.w, 65536);
      if (depth <= 10) {
        ASSERT_EQ(Bits(SsimTerm(m, st)), Bits(65536.0)) << depth << " " << trial;
      } else if (Bits(SsimTerm(m, st)) != Bits(65536.0)) {
        ++misses;
      }
    }
    if (depth == 12) {
      EXPECT_GT(misses, 0);
    }
  }
}

// A black window against a white one, interior: zero variances, means 0 and L = 255.
// Then A = c1, B = c2 and den = fl(fl(my2 + c1) * c2) with my2 = (255 * 2^16)^2; the
// 2^16 scalings are exact, so term = fl(fl(2^16 * c1) * c2) / den =
// 2^16 * fl(c1 * c2) / fl(fl(my2 + c1) * c2): about 2^16 * C1 / (L^2 + C1)
// = 65536 * 6.5025 / 65031.5025 = 6.553, positive and tiny next to 65536.
TEST(SsimMathTest, OppositeFlatWindowsGiveTheStabiliserRatio) {
  const Stabilisers st = StabilisersFor(8);
  Moments m;
  m.w = 65536;
  m.muy = 255 * 65536;
  m.y2 = int64_t{255} * 255 * 65536;
  const double w = 65536.0;
  const double c1 = (st.c1_factor * w) * w;
  const double c2 = (st.c2_factor * w) * w;
  const double my2 = 255.0 * 65536 * (255.0 * 65536);
  // y2 * w - my2 cancels exactly (both are 255^2 * 2^32), leaving c2.
  const double expected = ((w * c1) * c2) / ((my2 + c1) * c2);
  EXPECT_EQ(Bits(SsimTerm(m, st)), Bits(expected));
  EXPECT_GT(SsimTerm(m, st), 6.55);
  EXPECT_LT(SsimTerm(m, st), 6.56);
}

// A window whose two images are opposite ramps has a negative covariance, and its
// term is negative (the frame sum is signed).
TEST(SsimMathTest, NegativeCovarianceGivesANegativeTerm) {
  Moments m;
  for (int ky = 0; ky < kTapCount; ++ky) {
    for (int kx = 0; kx < kTapCount; ++kx) {
      const int64_t t = Tap(ky) * Tap(kx);
      const int64_t s = 20 * kx + 10 * ky;
      const int64_t d = 255 - s;
      m.mux += t * s;
      m.muy += t * d;
      m.x2 += t * s * s;
      m.xy += t * s * d;
      m.y2 += t * d * d;
      m.w += t;
    }
  }
  EXPECT_LT(SsimTerm(m, StabilisersFor(8)), 0.0);
}

// The vector instantiation performs the scalar operations lane by lane: the fast path
// relies on it. (Compiled here without AVX, GCC lowers the vectors to SSE2 pairs.)
TEST(SsimMathTest, VectorInstantiationEqualsScalarLaneByLane) {
  using V4 = double __attribute__((vector_size(32)));
  std::mt19937_64 rng(11);
  for (int depth : {8, 12, 16}) {
    const Stabilisers st = StabilisersFor(depth);
    const int64_t max = (int64_t{1} << depth) - 1;
    for (int trial = 0; trial < 1000; ++trial) {
      Moments lanes[4];
      V4 mux, muy, x2, xy, y2, w;
      for (int i = 0; i < 4; ++i) {
        // Random border or interior weights and moments consistent with them.
        const int64_t lx = KeptTapSum(static_cast<int>(rng() % 9), 9);
        const int64_t ly = KeptTapSum(static_cast<int>(rng() % 9), 9);
        Moments& m = lanes[i];
        m.w = lx * ly;
        const int64_t s = static_cast<int64_t>(rng() % (max + 1));
        const int64_t d = static_cast<int64_t>(rng() % (max + 1));
        m.mux = m.w * s;
        m.muy = m.w * d;
        m.x2 = m.w * s * s + static_cast<int64_t>(rng() % 1000000);
        m.xy = m.w * s * d;
        m.y2 = m.w * d * d + static_cast<int64_t>(rng() % 1000000);
        mux[i] = static_cast<double>(m.mux);
        muy[i] = static_cast<double>(m.muy);
        x2[i] = static_cast<double>(m.x2);
        xy[i] = static_cast<double>(m.xy);
        y2[i] = static_cast<double>(m.y2);
        w[i] = static_cast<double>(m.w);
      }
      const V4 terms = SsimTerm<V4>(mux, muy, x2, xy, y2, w, st);
      for (int i = 0; i < 4; ++i) {
        ASSERT_EQ(Bits(terms[i]), Bits(SsimTerm(lanes[i], st))) << depth << " " << trial;
      }
    }
  }
}

}  // namespace
}  // namespace ssim
}  // namespace exactq
