#include "engine/metrics/metric.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "gtest/gtest.h"

namespace exactq {
namespace {

uint64_t Bits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

// A NaN with a payload, as x86 arithmetic can propagate.
double PayloadNan() {
  const uint64_t bits = 0x7ff8'0000'dead'beefull;
  double value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// A real (tiny) metric, to exercise the contract the base class enforces: it reports
// a payload NaN and the first luma sample, and accepts 8-bit input only.
class FirstSampleMetric : public Metric {
 public:
  const MetricInfo& info() const override {
    static const MetricInfo* const info = new MetricInfo{"first_sample", 1, "test metric", {"nan", "first"}, {}};
    return *info;
  }
  absl::Status CheckInput(const FrameGeometry& geometry) const override {
    if (geometry.format.bit_depth != 8) return absl::InvalidArgumentError("8-bit only");
    return absl::OkStatus();
  }
  std::vector<std::string> OutputNames(const FrameGeometry&) const override { return info().outputs; }

 protected:
  absl::StatusOr<FrameScores> ScoreFrame(const Frame& ref, const Frame&) override {
    return FrameScores{{"nan", PayloadNan()}, {"first", double(ref.plane8(0)[0])}};
  }
};

TEST(MetricTest, ScoreCanonicalizesNan) {
  absl::StatusOr<Frame> frame = Frame::Create({2, 2, {ChromaLayout::k420, 8}});
  ASSERT_TRUE(frame.ok());
  frame->mutable_plane8(0)[0] = 42;
  FirstSampleMetric metric;
  absl::StatusOr<FrameScores> scores = metric.Score(*frame, *frame);
  ASSERT_TRUE(scores.ok()) << scores.status();
  ASSERT_TRUE(std::isnan(*FindScore(*scores, "nan")));
  EXPECT_EQ(Bits(*FindScore(*scores, "nan")), Bits(std::numeric_limits<double>::quiet_NaN()));
  EXPECT_EQ(*FindScore(*scores, "first"), 42.0);
  EXPECT_FALSE(FindScore(*scores, "absent").has_value());
  EXPECT_EQ(metric.name(), "first_sample");
  EXPECT_EQ(metric.definition_version(), 1);
}

TEST(MetricTest, ScoreChecksGeometryAndInput) {
  absl::StatusOr<Frame> small = Frame::Create({2, 2, {ChromaLayout::k420, 8}});
  absl::StatusOr<Frame> large = Frame::Create({4, 2, {ChromaLayout::k420, 8}});
  absl::StatusOr<Frame> deep = Frame::Create({2, 2, {ChromaLayout::k420, 10}});
  ASSERT_TRUE(small.ok() && large.ok() && deep.ok());
  FirstSampleMetric metric;
  EXPECT_EQ(metric.Score(*small, *large).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(metric.Score(*deep, *deep).status().message()), "8-bit only");
}

TEST(MetricTest, CanonicalizeNanKeepsNumbers) {
  EXPECT_EQ(Bits(CanonicalizeNan(-0.0)), Bits(-0.0));
  EXPECT_EQ(CanonicalizeNan(INFINITY), INFINITY);
  EXPECT_EQ(Bits(CanonicalizeNan(-PayloadNan())), Bits(std::numeric_limits<double>::quiet_NaN()));
}

}  // namespace
}  // namespace exactq
