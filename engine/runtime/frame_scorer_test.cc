#include "engine/runtime/frame_scorer.h"

#include <cstring>

#include "engine/metrics/psnr/psnr.h"
#include "engine/metrics/registry.h"
#include "gtest/gtest.h"

namespace exactq {
namespace {

FrameGeometry Geometry(int w, int h) {
  FrameGeometry g;
  g.width = w;
  g.height = h;
  g.format = PixelFormat{ChromaLayout::k420, 8};
  return g;
}

uint64_t Bits(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

TEST(FrameScorerTest, ReturnsTheMetricsOwnBitsInRequestOrder) {
  const FrameGeometry g = Geometry(17, 9);
  Frame ref = *Frame::Create(g), dist = *Frame::Create(g);
  for (size_t i = 0; i < ref.size_bytes(); ++i) {
    ref.mutable_bytes()[i] = static_cast<uint8_t>(i * 7);
    dist.mutable_bytes()[i] = static_cast<uint8_t>(i * 7 + (i % 5));
  }
  absl::StatusOr<std::unique_ptr<FrameScorer>> scorer =
      FrameScorer::Create(g, {{"psnr", {}}}, BackendPreference::kAuto);
  ASSERT_TRUE(scorer.ok()) << scorer.status();
  EXPECT_EQ((*scorer)->output_names(), (std::vector<std::string>{"psnr_y", "psnr_cb", "psnr_cr"}));
  absl::StatusOr<ScoredFrame> scored = (*scorer)->Score(ref, dist);
  ASSERT_TRUE(scored.ok()) << scored.status();
  EXPECT_EQ(scored->backend, Backend::kCpu);
  // The same metric called directly gives the same bits.
  std::unique_ptr<Metric> psnr = *CreateMetric("psnr", {});
  FrameScores direct = *psnr->Score(ref, dist);
  ASSERT_EQ(scored->scores.size(), direct.size());
  for (size_t i = 0; i < direct.size(); ++i) {
    EXPECT_EQ(scored->scores[i].name, direct[i].name);
    EXPECT_EQ(Bits(scored->scores[i].value), Bits(direct[i].value));
  }
}

TEST(FrameScorerTest, RejectsUnknownDuplicateAndForcedCuda) {
  const FrameGeometry g = Geometry(8, 8);
  auto unknown = FrameScorer::Create(g, {{"nope", {}}}, BackendPreference::kAuto);
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("header.metrics[0]"), absl::string_view::npos);
  auto twice = FrameScorer::Create(g, {{"psnr", {}}, {"psnr", {}}}, BackendPreference::kAuto);
  EXPECT_EQ(twice.status().code(), absl::StatusCode::kInvalidArgument);
  auto cuda = FrameScorer::Create(g, {{"psnr", {}}}, BackendPreference::kCuda);
  EXPECT_EQ(cuda.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(FrameScorerTest, RejectsFramesOfAnotherGeometry) {
  auto scorer = FrameScorer::Create(Geometry(8, 8), {{"psnr", {}}}, BackendPreference::kCpu);
  ASSERT_TRUE(scorer.ok());
  Frame a = *Frame::Create(Geometry(8, 8)), b = *Frame::Create(Geometry(9, 8));
  EXPECT_EQ((*scorer)->Score(a, b).status().code(), absl::StatusCode::kInvalidArgument);
}

// A frame's outputs split by metric only where the counts cover them exactly: one count
// per metric, summing to the outputs (a count past the end is an error, not a slice).
TEST(SplitByMetricTest, SplitsOnlyWhereTheCountsCoverTheOutputs) {
  ScoredFrame scored;
  scored.scores = {{"a", 1.0}, {"b", 2.0}, {"c", 3.0}};
  scored.outputs_per_metric = {1, 2};
  absl::StatusOr<std::vector<FrameScores>> parts = SplitByMetric(scored.scores, scored.outputs_per_metric, 2);
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[0].size(), 1u);
  EXPECT_EQ((*parts)[1][1].name, "c");
  EXPECT_EQ(SplitByMetric(scored.scores, scored.outputs_per_metric, 3).status().code(),
            absl::StatusCode::kInternal);  // a count short
  scored.outputs_per_metric = {1, 3};      // past the end
  EXPECT_EQ(SplitByMetric(scored.scores, scored.outputs_per_metric, 2).status().code(), absl::StatusCode::kInternal);
  scored.outputs_per_metric = {1, 1};  // an output left over
  EXPECT_EQ(SplitByMetric(scored.scores, scored.outputs_per_metric, 2).status().code(), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace exactq
