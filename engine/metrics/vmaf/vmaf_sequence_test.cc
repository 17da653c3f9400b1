#include "engine/metrics/vmaf/vmaf_sequence.h"

#include <vector>

#include "engine/metrics/vmaf/vmaf_test_frames.h"
#include "gtest/gtest.h"

namespace exactq {
namespace vmaf {
namespace {

VmafFeatures WithMotion(double motion) {
  VmafFeatures f;
  f.vif[0] = 0.5;
  f.vif[1] = 0.8;
  f.vif[2] = 0.9;
  f.vif[3] = 0.95;
  f.adm2 = 0.97;
  f.motion = motion;
  return f;
}

// Pushes every feature set and returns each frame's integer_motion2, checking that
// frame i is answered exactly when frame i + 1 arrives (or at Finish).
std::vector<double> Motion2Of(const std::vector<double>& motions) {
  VmafFinisher finisher;
  std::vector<double> out;
  for (size_t i = 0; i < motions.size(); ++i) {
    std::optional<FrameScores> s = finisher.Push(WithMotion(motions[i]));
    EXPECT_EQ(s.has_value(), i >= 1) << i;
    if (s) out.push_back(*FindScore(*s, "integer_motion2"));
  }
  std::optional<FrameScores> last = finisher.Finish();
  EXPECT_EQ(last.has_value(), !motions.empty());
  if (last) out.push_back(*FindScore(*last, "integer_motion2"));
  return out;
}

TEST(VmafFinisherTest, Motion2Rules) {
  EXPECT_EQ(Motion2Of({}), std::vector<double>{});
  EXPECT_EQ(Motion2Of({0}), std::vector<double>({0}));
  // Two frames: the last frame keeps its own motion.
  EXPECT_EQ(Motion2Of({0, 4.5}), std::vector<double>({0, 4.5}));
  // libvmaf's p576p8 case: motion 10.82 then 10.66.
  EXPECT_EQ(Motion2Of({0, 10.819998909907087, 10.66239977340803}),
            std::vector<double>({0, 10.66239977340803, 10.66239977340803}));
  EXPECT_EQ(Motion2Of({0, 1, 3, 2, 5}), std::vector<double>({0, 1, 2, 2, 5}));
}

TEST(VmafFinisherTest, OutputNamesAndOrder) {
  VmafFinisher finisher;
  EXPECT_FALSE(finisher.Push(WithMotion(0)).has_value());
  std::optional<FrameScores> s = finisher.Finish();
  ASSERT_TRUE(s.has_value());
  const std::vector<std::string> want = {
      "vmaf",         "integer_vif_scale0", "integer_vif_scale1", "integer_vif_scale2", "integer_vif_scale3",
      "integer_adm2", "integer_motion2"};
  ASSERT_EQ(s->size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ((*s)[i].name, want[i]);
  EXPECT_EQ((*s)[1].value, 0.5);
  EXPECT_EQ((*s)[5].value, 0.97);
  EXPECT_GE((*s)[0].value, 0.0);
  EXPECT_LE((*s)[0].value, 100.0);
  // Finish resets: the next stream starts at frame 0.
  EXPECT_FALSE(finisher.Push(WithMotion(3)).has_value());
  EXPECT_EQ(*FindScore(*finisher.Finish(), "integer_motion2"), 0.0);
}

TEST(VmafSequenceTest, ScoresEveryFrameInOrder) {
  const FrameGeometry g = testing_frames::Geometry(48, 40, 10);
  std::vector<Frame> refs, dists;
  for (int i = 0; i < 4; ++i) {
    refs.push_back(testing_frames::MakeFrame(g, 2 * i, 0));
    dists.push_back(testing_frames::MakeFrame(g, 2 * i, 1 + i));
  }
  absl::StatusOr<std::vector<FrameScores>> scores = ScoreVmafSequence(refs, dists);
  ASSERT_TRUE(scores.ok()) << scores.status();
  ASSERT_EQ(scores->size(), 4u);
  EXPECT_EQ(*FindScore((*scores)[0], "integer_motion2"), 0.0);
  for (const FrameScores& s : *scores) EXPECT_EQ(s.size(), 7u);
  EXPECT_EQ(ScoreVmafSequence(refs, absl::MakeSpan(dists).subspan(1)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace vmaf
}  // namespace exactq
