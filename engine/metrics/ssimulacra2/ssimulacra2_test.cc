// The Metric: registration, options, accepted input and its scores (the threaded
// engine's, equal to the reference's bits).

#include "engine/metrics/ssimulacra2/ssimulacra2.h"

#include <cstdint>
#include <cstring>

#include "engine/metrics/registry.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_reference.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_test_frames.h"
#include "gtest/gtest.h"

namespace exactq {
namespace {

using ssimulacra2::testing_frames::MakeTestFrame;

uint64_t Bits(double v) {
  uint64_t u;
  std::memcpy(&u, &v, sizeof(u));
  return u;
}

TEST(Ssimulacra2MetricTest, IsRegistered) {
  bool found = false;
  for (const MetricInfo& info : ListMetrics()) {
    if (info.name != "ssimulacra2") continue;
    found = true;
    EXPECT_EQ(info.definition_version, 1);
    EXPECT_EQ(info.outputs, std::vector<std::string>{"ssimulacra2"});
    ASSERT_EQ(info.options.size(), 1u);
    EXPECT_EQ(info.options[0].name, "yuv_matrix");
    EXPECT_EQ(info.options[0].default_value, "0");
  }
  EXPECT_TRUE(found);
  absl::StatusOr<std::unique_ptr<Metric>> metric = CreateMetric("ssimulacra2", {});
  ASSERT_TRUE(metric.ok()) << metric.status();
  EXPECT_EQ((*metric)->name(), "ssimulacra2");
}

TEST(Ssimulacra2MetricTest, ParsesYuvMatrix) {
  for (int m = 0; m <= 3; ++m) {
    absl::StatusOr<Ssimulacra2Options> options = ParseSsimulacra2Options({{"yuv_matrix", std::to_string(m)}});
    ASSERT_TRUE(options.ok()) << options.status();
    EXPECT_EQ(static_cast<int>(options->yuv_matrix), m);
  }
  EXPECT_EQ(ParseSsimulacra2Options({})->yuv_matrix, ssimulacra2::YuvMatrix::kBt709Limited);
  for (const char* bad : {"4", "-1", "bt709", ""}) {
    EXPECT_EQ(ParseSsimulacra2Options({{"yuv_matrix", bad}}).status().code(), absl::StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_EQ(ParseSsimulacra2Options({{"matrix", "1"}}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(Ssimulacra2MetricTest, ChecksInput) {
  Ssimulacra2Metric metric({});
  EXPECT_TRUE(metric.CheckInput({8, 8, {ChromaLayout::k420, 8}}).ok());
  EXPECT_TRUE(metric.CheckInput({3840, 2160, {ChromaLayout::k422, 16}}).ok());
  EXPECT_EQ(metric.CheckInput({7, 8, {ChromaLayout::k420, 8}}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(metric.CheckInput({8, 7, {ChromaLayout::k444, 8}}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(metric.CheckInput({64, 64, {ChromaLayout::k400, 8}}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(metric.OutputNames({64, 64, {ChromaLayout::k420, 8}}), std::vector<std::string>{"ssimulacra2"});
}

TEST(Ssimulacra2MetricTest, ScoresAreTheReferenceBits) {
  const FrameGeometry g{123, 77, {ChromaLayout::k420, 10}};
  const Frame ref = MakeTestFrame(g, 2);
  const Frame dis = MakeTestFrame(g, 2, {14, 0});
  for (int m = 0; m <= 3; ++m) {
    for (int threads : {1, 2}) {
      Ssimulacra2Metric metric(*ParseSsimulacra2Options({{"yuv_matrix", std::to_string(m)}}), threads);
      absl::StatusOr<FrameScores> scores = metric.Score(ref, dis);
      ASSERT_TRUE(scores.ok()) << scores.status();
      ASSERT_EQ(scores->size(), 1u);
      EXPECT_EQ((*scores)[0].name, "ssimulacra2");
      const double want = ssimulacra2::ReferenceScore(ref, dis, static_cast<ssimulacra2::YuvMatrix>(m)).value();
      EXPECT_EQ(Bits((*scores)[0].value), Bits(want));
    }
  }
  Ssimulacra2Metric metric({});
  EXPECT_EQ(metric.Score(ref, ref).value()[0].value, 100.0);
  const Frame other = MakeTestFrame({123, 77, {ChromaLayout::k444, 10}}, 2);
  EXPECT_EQ(metric.Score(ref, other).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace exactq
