// The reference on small synthetic frames, against values derived outside this code.
//
// Where the expectation follows by hand the comment says how. The others come from
// testdata/ssim_oracle.py, an independent implementation written from the spec in
// Python (exact integers, one binary64 rounding per operation) that equals the fork on
// every 8..12-bit corpus frame; `ssim_oracle.py cases` prints the table below. The
// frames are formulas (ssim_test_frames.h) that the oracle repeats.

#include "engine/metrics/ssim/ssim_reference.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <ostream>
#include <string>

#include "engine/metrics/ssim/ssim_test_frames.h"
#include "gtest/gtest.h"

namespace exactq {
namespace ssim {
namespace {

using testing_frames::Geometry;
using testing_frames::Kind;
using testing_frames::MakeFrame;

uint64_t Bits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

struct DerivedCase {
  const char* name;
  int width;
  int height;
  int depth;
  Kind ref;
  Kind dis;
  double term_sum;
  double weight_sum;
  double score;
};

// gtest prints a failing parameter with this instead of its bytes.
void PrintTo(const DerivedCase& c, std::ostream* os) { *os << c.name; }

// From `ssim_oracle.py cases`.
constexpr DerivedCase kDerivedCases[] = {
    // Identical frames. A 1x1 frame keeps the centre taps only: w = 68 * 68 = 4624, not a
    // power of two, so term = fl(fl(w*A)*B) / fl(A*B) need not be w. For black it is
    // w - 2^-40 (one ulp of 4624 below), and (w - 2^-40) / w = 1 - 0.89 * 2^-52 rounds
    // to 1 - 2^-52: identical frames can score 2 ulps below 1, not only 1 or 1 - 2^-53.
    {"IdenticalBlack1x1", 1, 1, 8, Kind::kBlack, Kind::kBlack, 0x1.20fffffffffffp+12, 0x1.21p+12, 0x1.ffffffffffffep-1},
    {"IdenticalWhite1x1", 1, 1, 8, Kind::kWhite, Kind::kWhite, 0x1.21p+12, 0x1.21p+12, 0x1p+0},
    // Larger identical frames: interior terms are exactly 65536 (ssim_math_test.cc);
    // about 360 of the 3072 border terms miss their w by one ulp, up and down, but here
    // the running sum rounds them away and ends on sum(w): exactly 1.
    {"IdenticalRamp64x48", 64, 48, 8, Kind::kRamp, Kind::kRamp, 0x1.7031a2p+27, 0x1.7031a2p+27, 0x1p+0},
    {"IdenticalRandom64x48At10", 64, 48, 10, Kind::kRandom, Kind::kRandom, 0x1.7031a2p+27, 0x1.7031a2p+27, 0x1p+0},
    // Black against white, 1x1: zero variances, so the score is about C1 / (L^2 + C1) =
    // 6.5025 / 65031.5025 = 9.9990001e-5 (see ssim_math_test.cc for the interior twin).
    {"BlackWhite1x1", 1, 1, 8, Kind::kBlack, Kind::kWhite, 0x1.d97343e8f6597p-2, 0x1.21p+12, 0x1.a3637230afb35p-14},
    {"Noisy1x1", 1, 1, 8, Kind::kRamp, Kind::kNoisy, 0x1.1176b5434c8e2p+12, 0x1.21p+12, 0x1.e479b999c6851p-1},
    // 7x5: every window is truncated in both directions; weight_sum = 1500 * 988
    // (WeightSumIsTheProductOfTheLineSums).
    {"Noisy7x5", 7, 5, 8, Kind::kRamp, Kind::kNoisy, 0x1.2e283cf6f093fp+20, 0x1.69d1p+20, 0x1.ab93c8e221016p-1},
    {"Noisy9x9", 9, 9, 8, Kind::kRamp, Kind::kNoisy, 0x1.ae10d628a11f3p+21, 0x1.ee288p+21, 0x1.bd97ee447026bp-1},
    {"Noisy1x9", 1, 9, 8, Kind::kRamp, Kind::kNoisy, 0x1.7a717cf831902p+16, 0x1.0b38p+17, 0x1.6a8e13123cf45p-1},
    {"Noisy9x1", 9, 1, 8, Kind::kRamp, Kind::kNoisy, 0x1.c756b3f3315b4p+16, 0x1.0b38p+17, 0x1.b438d64eebf42p-1},
    {"Noisy13x11At10", 13, 11, 10, Kind::kRamp, Kind::kNoisy, 0x1.9e14260b3395bp+22, 0x1.d3b44p+22,
     0x1.c54bb8799108cp-1},
    {"Noisy17x33At12", 17, 33, 12, Kind::kRamp, Kind::kNoisy, 0x1.cd0e0e5ba214fp+24, 0x1.f94510p+24,
     0x1.d3323945ccaf1p-1},
    {"Noisy31x17At16", 31, 17, 16, Kind::kRamp, Kind::kNoisy, 0x1.b1b3877f6751cp+24, 0x1.d98d1p+24,
     0x1.d4ea2cc3a971ap-1},
    // Inverted pairs: negative covariance almost everywhere, so most terms and the
    // score are negative.
    {"Inverted64x48", 64, 48, 8, Kind::kRamp, Kind::kInverted, -0x1.b79487698b3a2p+26, 0x1.7031a2p+27,
     -0x1.31a246eaa1009p-1},
    {"Inverted7x5At16", 7, 5, 16, Kind::kRamp, Kind::kInverted, -0x1.751caabe73be7p+18, 0x1.69d1p+20,
     -0x1.07fdf930f0401p-2},
};

class DerivedCaseTest : public ::testing::TestWithParam<DerivedCase> {};

TEST_P(DerivedCaseTest, SumsAndScoreEqualTheDerivedBits) {
  const DerivedCase& c = GetParam();
  const FrameGeometry g = Geometry(c.width, c.height, c.depth);
  const Frame ref = MakeFrame(g, c.ref);
  const Frame dis = MakeFrame(g, c.dis);
  absl::StatusOr<SsimSums> sums = ReferenceSums(ref, dis);
  ASSERT_TRUE(sums.ok()) << sums.status();
  EXPECT_EQ(Bits(sums->term_sum), Bits(c.term_sum)) << sums->term_sum;
  EXPECT_EQ(Bits(sums->weight_sum), Bits(c.weight_sum)) << sums->weight_sum;
  absl::StatusOr<FrameScores> scores = ScoreReference(ref, dis, SsimOptions{});
  ASSERT_TRUE(scores.ok()) << scores.status();
  ASSERT_EQ(scores->size(), 1u);
  EXPECT_EQ((*scores)[0].name, "ssim");
  EXPECT_EQ(Bits((*scores)[0].value), Bits(c.score)) << (*scores)[0].value;
}

INSTANTIATE_TEST_SUITE_P(Oracle, DerivedCaseTest, ::testing::ValuesIn(kDerivedCases),
                         [](const ::testing::TestParamInfo<DerivedCase>& info) {
                           return std::string(info.param.name);
                         });

// The weight sum by hand. Over a line of 7 every window is cut: the kept tap sums are
// 162, 217, 245, 252, 245, 217, 162 (sum 1500; the middle one drops a 2 on each side).
// Over 5: 162, 215, 234, 215, 162 (sum 988). So a 7x5 frame weighs 1500 * 988 = 1482000
// (0x1.69d1p+20 above), and a 1x1 frame 68 * 68 = 4624.
TEST(SsimReferenceTest, WeightSumIsTheProductOfTheLineSums) {
  const auto weight_sum = [](int w, int h) {
    const FrameGeometry g = Geometry(w, h, 8);
    absl::StatusOr<SsimSums> sums = ReferenceSums(MakeFrame(g, Kind::kRamp), MakeFrame(g, Kind::kNoisy));
    EXPECT_TRUE(sums.ok());
    return sums.ok() ? sums->weight_sum : 0.0;
  };
  EXPECT_EQ(weight_sum(7, 5), 1482000.0);
  EXPECT_EQ(weight_sum(1, 1), 4624.0);
  // 64x48: (2*(162+217+245+254) + 56*256) * (2*(162+217+245+254) + 40*256).
  EXPECT_EQ(weight_sum(64, 48), (2.0 * 878 + 56 * 256) * (2.0 * 878 + 40 * 256));
}

// Chroma is never read and the layout does not matter: the same luma in 4:0:0, 4:2:0,
// 4:2:2 and 4:4:4 with different chroma scores the same bits.
TEST(SsimReferenceTest, OnlyLumaIsScored) {
  double first = 0.0;
  bool have_first = false;
  for (ChromaLayout layout : {ChromaLayout::k400, ChromaLayout::k420, ChromaLayout::k422, ChromaLayout::k444}) {
    const FrameGeometry g = Geometry(13, 11, 10, layout);
    const Frame ref = MakeFrame(g, Kind::kRamp);
    Frame dis = MakeFrame(g, Kind::kNoisy);
    for (int plane = 1; plane < g.plane_count(); ++plane) {
      dis.set_sample(plane, 0, 0, 1023);  // a chroma difference: must not count
    }
    absl::StatusOr<FrameScores> scores = ScoreReference(ref, dis, SsimOptions{});
    ASSERT_TRUE(scores.ok()) << scores.status();
    if (!have_first) {
      first = (*scores)[0].value;
      have_first = true;
    }
    EXPECT_EQ(Bits((*scores)[0].value), Bits(first)) << ChromaLayoutName(layout);
  }
  EXPECT_EQ(Bits(first), Bits(0x1.c54bb8799108cp-1));  // Noisy13x11At10 above
}

// --- enable_db and clip_db (spec A.7) ----------------------------------------------

FrameScores ScoresOf(int w, int h, int depth, Kind ref, Kind dis, SsimOptions options) {
  const FrameGeometry g = Geometry(w, h, depth);
  absl::StatusOr<FrameScores> scores = ScoreReference(MakeFrame(g, ref), MakeFrame(g, dis), options);
  EXPECT_TRUE(scores.ok()) << scores.status();
  return scores.ok() ? *scores : FrameScores{};
}

TEST(SsimReferenceTest, DbOutputFollowsTheLinearScore) {
  // Noisy7x5 scores L = 0x1.ab93c8e221016p-1; 1 - L is exact (Sterbenz: L in [0.5, 1]),
  // = 0.16488811721455687, and -10 * log10 of it is 7.828106409843192.
  const FrameScores scores = ScoresOf(7, 5, 8, Kind::kRamp, Kind::kNoisy, {true, false});
  ASSERT_EQ(scores.size(), 2u);
  EXPECT_EQ(scores[0].name, "ssim");
  EXPECT_EQ(Bits(scores[0].value), Bits(0x1.ab93c8e221016p-1));
  EXPECT_EQ(scores[1].name, "ssim_db");
  EXPECT_EQ(Bits(scores[1].value), Bits(0x1.f4ffb206f89b6p+2)) << scores[1].value;
  // clip_db caps at ceil(10 * log10(255^2 / (0.5 / 35))) = ceil(66.58) = 67: no effect.
  const FrameScores clipped = ScoresOf(7, 5, 8, Kind::kRamp, Kind::kNoisy, {true, true});
  EXPECT_EQ(Bits(clipped[1].value), Bits(0x1.f4ffb206f89b6p+2));
}

TEST(SsimReferenceTest, NegativeScoreGivesNegativeDb) {
  // Inverted64x48: L = -0.5969412003910303, 1 - L = 1.5969412003910302 (rounded),
  // -10 * log10(1.59694...) = -2.0328892564641414.
  const FrameScores scores = ScoresOf(64, 48, 8, Kind::kRamp, Kind::kInverted, {true, true});
  ASSERT_EQ(scores.size(), 2u);
  EXPECT_EQ(Bits(scores[1].value), Bits(-0x1.0435b714739d8p+1)) << scores[1].value;
}

TEST(SsimReferenceTest, IdenticalFramesGiveInfiniteDbUnlessClipped) {
  // Linear exactly 1 -> max_db: +inf without clip_db; with it, for 64x48 at 8 bits,
  // ceil(10 * log10(65025 * 2 * 3072)) = ceil(10 * log10(399513600)) = ceil(86.015) = 87.
  const FrameScores open = ScoresOf(64, 48, 8, Kind::kRamp, Kind::kRamp, {true, false});
  ASSERT_EQ(open.size(), 2u);
  EXPECT_EQ(Bits(open[0].value), Bits(1.0));
  EXPECT_EQ(Bits(open[1].value), Bits(std::numeric_limits<double>::infinity()));
  const FrameScores clipped = ScoresOf(64, 48, 8, Kind::kRamp, Kind::kRamp, {true, true});
  EXPECT_EQ(Bits(clipped[1].value), Bits(87.0));
}

TEST(SsimReferenceTest, TwoUlpsBelowOneGivesFiniteDbAndClipCapsIt) {
  // IdenticalBlack1x1: L = 1 - 2^-52, so 1 - L = 2^-52 exactly and the dB value is
  // -10 * log10(2^-52) = 520 * log10(2) = 156.53559774527022.
  const FrameScores open = ScoresOf(1, 1, 8, Kind::kBlack, Kind::kBlack, {true, false});
  ASSERT_EQ(open.size(), 2u);
  EXPECT_EQ(Bits(open[0].value), Bits(1.0 - 0x1p-52));
  EXPECT_EQ(Bits(open[1].value), Bits(0x1.391239de1f7e7p+7)) << open[1].value;
  // clip_db for 1x1 at 8 bits: ceil(10 * log10(65025 * 2)) = ceil(51.14) = 52.
  const FrameScores clipped = ScoresOf(1, 1, 8, Kind::kBlack, Kind::kBlack, {true, true});
  EXPECT_EQ(Bits(clipped[1].value), Bits(52.0));
}

TEST(SsimReferenceTest, ClipCeilingAtSixteenBitsDoesNotOverflow) {
  // 65535^2 = 4294836225 still fits the unsigned product; for 7x5 the ceiling is
  // ceil(10 * log10(4294836225 * 70)) = ceil(114.78) = 115.
  EXPECT_EQ(SsimMaxDb(Geometry(7, 5, 16), true), 115.0);
  // 13x11 at 10 bits: ceil(10 * log10(1023^2 * 2 * 143)) = ceil(84.76) = 85.
  EXPECT_EQ(SsimMaxDb(Geometry(13, 11, 10), true), 85.0);
  EXPECT_EQ(SsimMaxDb(Geometry(13, 11, 10), false), std::numeric_limits<double>::infinity());
}

TEST(SsimReferenceTest, ClipWithoutEnableDbChangesNothing) {
  const FrameScores scores = ScoresOf(7, 5, 8, Kind::kRamp, Kind::kNoisy, {false, true});
  ASSERT_EQ(scores.size(), 1u);
  EXPECT_EQ(Bits(scores[0].value), Bits(0x1.ab93c8e221016p-1));
}

TEST(SsimReferenceTest, RejectsMismatchedGeometries) {
  const Frame a = MakeFrame(Geometry(8, 8, 8), Kind::kRamp);
  const Frame b = MakeFrame(Geometry(8, 9, 8), Kind::kRamp);
  const Frame c = MakeFrame(Geometry(8, 8, 10), Kind::kRamp);
  EXPECT_EQ(ReferenceSums(a, b).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReferenceSums(a, c).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ssim
}  // namespace exactq
