// The reference's contract on synthetic pairs: what it accepts and refuses, exactly
// 100 for identical frames, the scale rule, and properties derived from the
// definition. (Agreement with the fork is ssimulacra2_corpus_test.cc.)

#include "engine/metrics/ssimulacra2/ssimulacra2_reference.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>

#include "engine/metrics/ssimulacra2/ssimulacra2_test_frames.h"
#include "gtest/gtest.h"

namespace exactq {
namespace ssimulacra2 {
namespace {

using testing_frames::MakeTestFrame;

uint64_t Bits(double v) {
  uint64_t u;
  std::memcpy(&u, &v, sizeof(u));
  return u;
}

FrameGeometry Geometry(int w, int h, ChromaLayout layout = ChromaLayout::k420, int depth = 8) {
  return FrameGeometry{w, h, {layout, depth}};
}

double Score(const FrameGeometry& g, uint32_t seed, testing_frames::Noise noise,
             YuvMatrix matrix = YuvMatrix::kBt709Limited) {
  absl::StatusOr<double> score = ReferenceScore(MakeTestFrame(g, seed), MakeTestFrame(g, seed, noise), matrix);
  EXPECT_TRUE(score.ok()) << score.status();
  return score.value_or(-1.0);
}

TEST(Ssimulacra2ReferenceTest, AcceptsEightByEightAndUp) {
  for (ChromaLayout layout : {ChromaLayout::k420, ChromaLayout::k422, ChromaLayout::k444}) {
    EXPECT_TRUE(CheckSsimulacra2Input(Geometry(8, 8, layout)).ok());
    absl::StatusOr<FrameSums> sums =
        ReferenceSums(MakeTestFrame(Geometry(8, 8, layout), 1), MakeTestFrame(Geometry(8, 8, layout), 1, {9, 0}),
                      YuvMatrix::kBt709Limited);
    ASSERT_TRUE(sums.ok()) << sums.status();
    EXPECT_EQ(sums->num_scales, 1);
  }
}

TEST(Ssimulacra2ReferenceTest, RefusesSmallerFramesAndGray) {
  for (const FrameGeometry& g : {Geometry(7, 8), Geometry(8, 7), Geometry(1, 1)}) {
    const absl::Status status = CheckSsimulacra2Input(g);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << GeometryDescription(g);
    EXPECT_NE(status.message().find("at least 8x8"), absl::string_view::npos) << status;
    const Frame f = MakeTestFrame(g, 1);
    EXPECT_EQ(ReferenceSums(f, f, YuvMatrix::kBt709Limited).status().code(), absl::StatusCode::kInvalidArgument);
  }
  const FrameGeometry gray = Geometry(64, 64, ChromaLayout::k400);
  const absl::Status status = CheckSsimulacra2Input(gray);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("4:0:0"), absl::string_view::npos) << status;
  const Frame f = MakeTestFrame(gray, 1);
  EXPECT_EQ(ReferenceSums(f, f, YuvMatrix::kBt709Limited).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(Ssimulacra2ReferenceTest, RefusesDifferentGeometries) {
  const Frame a = MakeTestFrame(Geometry(64, 64, ChromaLayout::k420, 8), 1);
  const Frame b = MakeTestFrame(Geometry(64, 64, ChromaLayout::k420, 10), 1);
  EXPECT_EQ(ReferenceSums(a, b, YuvMatrix::kBt709Limited).status().code(), absl::StatusCode::kInvalidArgument);
}

// Identical frames: mu1 = mu2 and the three blurred second moments are equal, so
// num_m = 1 and num_s = den_s exactly; every edge ratio is exactly 1. Every term and
// sum is +0 and the score is exactly 100, at every layout, depth and matrix.
TEST(Ssimulacra2ReferenceTest, IdenticalFramesGiveExactly100) {
  for (ChromaLayout layout : {ChromaLayout::k420, ChromaLayout::k422, ChromaLayout::k444}) {
    for (int depth : {8, 10, 12, 16}) {
      for (YuvMatrix m : {YuvMatrix::kBt709Limited, YuvMatrix::kBt601Full}) {
        const Frame f = MakeTestFrame(Geometry(77, 45, layout, depth), 3);
        absl::StatusOr<FrameSums> sums = ReferenceSums(f, f, m);
        ASSERT_TRUE(sums.ok());
        for (int s = 0; s < sums->num_scales; ++s) {
          for (int c = 0; c < kChannels; ++c) {
            for (int k = 0; k < kSumsPerChannel; ++k) EXPECT_EQ(Bits(sums->sums[s][c][k]), 0u);
          }
        }
        EXPECT_EQ(Bits(ScoreFromSums(*sums).value()), Bits(100.0));
      }
    }
  }
}

TEST(Ssimulacra2ReferenceTest, ScoresEveryLayoutAndDepth) {
  for (ChromaLayout layout : {ChromaLayout::k420, ChromaLayout::k422, ChromaLayout::k444}) {
    for (int depth = 8; depth <= 16; ++depth) {
      const double score = Score(Geometry(41, 23, layout, depth), 2, {10, 0});
      EXPECT_TRUE(std::isfinite(score));
      EXPECT_LT(score, 100.0);
      EXPECT_GT(score, 0.0);
    }
  }
}

// The fork's stop rule (B.5): 256x144 computes 5 scales (the 6th would be 8x4.5 ->
// 8x5), 96x96 four, 17x33 two.
TEST(Ssimulacra2ReferenceTest, ComputesTheForkNumberOfScales) {
  for (const auto& [w, h, scales] : {std::tuple<int, int, int>{256, 144, 5}, {96, 96, 4}, {17, 33, 2}, {512, 288, 6}}) {
    const Frame f = MakeTestFrame(Geometry(w, h), 1);
    absl::StatusOr<FrameSums> sums =
        ReferenceSums(f, MakeTestFrame(Geometry(w, h), 1, {5, 0}), YuvMatrix::kBt709Limited);
    ASSERT_TRUE(sums.ok());
    EXPECT_EQ(sums->num_scales, scales) << w << "x" << h;
    // Every computed scale saw a difference.
    for (int s = 0; s < scales; ++s) EXPECT_GT(sums->sums[s][1][kSumSsim], 0.0) << s;
  }
}

// Only the lower third differs: better than the same noise everywhere, worse than
// identical. The top rows' terms are exact zeros (runs of +0 at the start of every
// sum, which the threaded path must reproduce: ssimulacra2_threads_test.cc).
TEST(Ssimulacra2ReferenceTest, LowerThirdDistortionScoresBetweenNoneAndAll) {
  const FrameGeometry g = Geometry(256, 144);
  const double all = Score(g, 4, {20, 0});
  const double lower_third = Score(g, 4, {20, 144 - 48});
  EXPECT_GT(lower_third, all);
  EXPECT_LT(lower_third, 100.0);
}

TEST(Ssimulacra2ReferenceTest, MatricesGiveDifferentScores) {
  std::set<uint64_t> scores;
  for (YuvMatrix m :
       {YuvMatrix::kBt709Limited, YuvMatrix::kBt601Limited, YuvMatrix::kBt709Full, YuvMatrix::kBt601Full}) {
    scores.insert(Bits(Score(Geometry(64, 48), 6, {15, 0}, m)));
  }
  EXPECT_EQ(scores.size(), 4u);
}

// More noise, lower score (same content, same noise pattern scaled).
TEST(Ssimulacra2ReferenceTest, MoreNoiseScoresLower) {
  const FrameGeometry g = Geometry(128, 96, ChromaLayout::k444, 10);
  double previous = 100.0;
  for (int amplitude : {2, 6, 18, 40}) {
    const double score = Score(g, 8, {amplitude, 0});
    EXPECT_LT(score, previous) << amplitude;
    previous = score;
  }
}

// The test-only AVX2 variant changes only the edge map: SSIM sums are identical.
TEST(Ssimulacra2ReferenceTest, ForkAvx2VariantDiffersOnlyInEdgeSums) {
  const FrameGeometry g = Geometry(100, 60);
  const Frame ref = MakeTestFrame(g, 5);
  const Frame dis = MakeTestFrame(g, 5, {12, 0});
  FrameSums b;
  const FrameSums a = ReferenceSumsWithForkAvx2Variant(ref, dis, YuvMatrix::kBt709Limited, &b).value();
  const FrameSums plain = ReferenceSums(ref, dis, YuvMatrix::kBt709Limited).value();
  bool edge_differs = false;
  ASSERT_EQ(b.num_scales, a.num_scales);
  for (int s = 0; s < a.num_scales; ++s) {
    for (int c = 0; c < kChannels; ++c) {
      for (int k = 0; k < kSumsPerChannel; ++k) {
        EXPECT_EQ(Bits(a.sums[s][c][k]), Bits(plain.sums[s][c][k]));  // same definition
      }
      EXPECT_EQ(Bits(a.sums[s][c][kSumSsim]), Bits(b.sums[s][c][kSumSsim]));
      EXPECT_EQ(Bits(a.sums[s][c][kSumSsim4]), Bits(b.sums[s][c][kSumSsim4]));
      for (int k = kSumArtifact; k < kSumsPerChannel; ++k) {
        edge_differs |= Bits(a.sums[s][c][k]) != Bits(b.sums[s][c][k]);
      }
    }
  }
  EXPECT_TRUE(edge_differs);
}

}  // namespace
}  // namespace ssimulacra2
}  // namespace exactq
