// The Metric wrapper: options, outputs, input checks, and that it returns the
// reference's bits.

#include "engine/metrics/ssim/ssim.h"

#include <cstdint>
#include <cstring>
#include <limits>

#include "engine/metrics/ssim/ssim_reference.h"
#include "engine/metrics/ssim/ssim_test_frames.h"
#include "gtest/gtest.h"

namespace exactq {
namespace {

using ssim::testing_frames::Geometry;
using ssim::testing_frames::Kind;
using ssim::testing_frames::MakeFrame;

uint64_t Bits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

TEST(SsimMetricTest, InfoNamesEveryOutputAndOption) {
  const MetricInfo& info = SsimMetricInfo();
  EXPECT_EQ(info.name, "ssim");
  EXPECT_EQ(info.definition_version, 1);
  EXPECT_EQ(info.outputs, (std::vector<std::string>{"ssim", "ssim_db"}));
  ASSERT_EQ(info.options.size(), 2u);
  EXPECT_EQ(info.options[0].name, "enable_db");
  EXPECT_EQ(info.options[0].default_value, "false");
  EXPECT_EQ(info.options[1].name, "clip_db");
  EXPECT_EQ(info.options[1].default_value, "false");
}

TEST(SsimMetricTest, ParsesOptionsAndRejectsUnknownOnes) {
  absl::StatusOr<ssim::SsimOptions> defaults = ParseSsimOptions({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_FALSE(defaults->enable_db);
  EXPECT_FALSE(defaults->clip_db);
  absl::StatusOr<ssim::SsimOptions> both = ParseSsimOptions({{"enable_db", "true"}, {"clip_db", "1"}});
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_TRUE(both->enable_db);
  EXPECT_TRUE(both->clip_db);
  EXPECT_EQ(ParseSsimOptions({{"enable_dB", "true"}}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseSsimOptions({{"enable_db", "maybe"}}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CreateSsimMetric({{"scale", "2"}}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(SsimMetricTest, OutputNamesFollowEnableDb) {
  const FrameGeometry g = Geometry(16, 16, 8);
  EXPECT_EQ(SsimMetric({false, false}).OutputNames(g), (std::vector<std::string>{"ssim"}));
  EXPECT_EQ(SsimMetric({true, false}).OutputNames(g), (std::vector<std::string>{"ssim", "ssim_db"}));
}

TEST(SsimMetricTest, AcceptsEveryValidGeometryAndRejectsInvalidOnes) {
  SsimMetric metric({});
  for (ChromaLayout layout : {ChromaLayout::k400, ChromaLayout::k420, ChromaLayout::k422, ChromaLayout::k444}) {
    for (int depth = 8; depth <= 16; ++depth) {
      EXPECT_TRUE(metric.CheckInput(Geometry(1, 1, depth, layout)).ok());
      EXPECT_TRUE(metric.CheckInput(Geometry(8192, 4320, depth, layout)).ok());
    }
  }
  EXPECT_FALSE(metric.CheckInput(Geometry(0, 4, 8)).ok());
  EXPECT_FALSE(metric.CheckInput(Geometry(4, 4, 17)).ok());
}

TEST(SsimMetricTest, ScoresTheReferenceBits) {
  const FrameGeometry g = Geometry(31, 17, 16);
  const Frame ref = MakeFrame(g, Kind::kRamp);
  const Frame dis = MakeFrame(g, Kind::kNoisy);
  absl::StatusOr<std::unique_ptr<Metric>> metric = CreateSsimMetric({{"enable_db", "true"}, {"clip_db", "true"}});
  ASSERT_TRUE(metric.ok()) << metric.status();
  absl::StatusOr<FrameScores> got = (*metric)->Score(ref, dis);
  ASSERT_TRUE(got.ok()) << got.status();
  absl::StatusOr<FrameScores> want = ssim::ScoreReference(ref, dis, {true, true});
  ASSERT_TRUE(want.ok());
  ASSERT_EQ(got->size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ((*got)[i].name, (*want)[i].name);
    EXPECT_EQ(Bits((*got)[i].value), Bits((*want)[i].value));
  }
  EXPECT_EQ(Bits((*got)[0].value), Bits(0x1.d4ea2cc3a971ap-1));  // Noisy31x17At16
  // Different geometries are refused by Metric::Score.
  EXPECT_EQ((*metric)->Score(ref, MakeFrame(Geometry(31, 18, 16), Kind::kRamp)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace exactq
