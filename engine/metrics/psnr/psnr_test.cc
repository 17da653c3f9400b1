// psnr on frames whose scores can be worked out by hand. Expected values come from the
// definition: psnr = min(10*log10(peak^2 / max(mse, 1e-16)), 6*bpc + 12), where the
// test arranges an exact mse (1, or peak^2) so that only one log10 is left.

#include "engine/metrics/psnr/psnr.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace exactq {
namespace {

uint64_t Bits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

Frame FilledFrame(const FrameGeometry& geometry, uint32_t value) {
  absl::StatusOr<Frame> frame = Frame::Create(geometry);
  EXPECT_TRUE(frame.ok()) << frame.status();
  for (int plane = 0; plane < geometry.plane_count(); ++plane) {
    for (int y = 0; y < geometry.plane_height(plane); ++y) {
      for (int x = 0; x < geometry.plane_width(plane); ++x) frame->set_sample(plane, x, y, value);
    }
  }
  return *std::move(frame);
}

FrameScores ScoreOrDie(Metric& metric, const Frame& ref, const Frame& dist) {
  absl::StatusOr<FrameScores> scores = metric.Score(ref, dist);
  EXPECT_TRUE(scores.ok()) << scores.status();
  return scores.ok() ? *scores : FrameScores{};
}

std::vector<std::string> Names(const FrameScores& scores) {
  std::vector<std::string> names;
  for (const NamedScore& score : scores) names.push_back(score.name);
  return names;
}

// Identical frames: mse = 0 is floored to 1e-16, giving ~208 dB at 8 bits, so every
// plane reads the clamp, 6*bpc + 12, exactly.
TEST(PsnrTest, IdenticalFramesReadTheClampAtEveryDepth) {
  for (int depth = 8; depth <= 16; ++depth) {
    const FrameGeometry geometry{6, 4, {ChromaLayout::k420, depth}};
    const Frame frame = FilledFrame(geometry, 100);
    PsnrMetric psnr(PsnrOptions{});
    const FrameScores scores = ScoreOrDie(psnr, frame, frame);
    ASSERT_EQ(scores.size(), 3u);
    for (const NamedScore& score : scores) {
      EXPECT_EQ(Bits(score.value), Bits(6.0 * depth + 12.0)) << depth << " " << score.name;
    }
  }
  // The documented anchors.
  const Frame eight = FilledFrame({4, 4, {ChromaLayout::k444, 8}}, 7);
  PsnrMetric psnr(PsnrOptions{});
  EXPECT_EQ(*FindScore(ScoreOrDie(psnr, eight, eight), "psnr_y"), 60.0);
}

// Every sample off by one: sse = n, so mse = n / n = 1.0 exactly and
// psnr = 10 * log10(peak^2), here 10 * log10(65025) = 48.1308036086791... dB.
TEST(PsnrTest, OffByOneEverywhereIsTenLog10PeakSquared) {
  const FrameGeometry geometry{16, 8, {ChromaLayout::k420, 8}};
  const Frame ref = FilledFrame(geometry, 100);
  const Frame dist = FilledFrame(geometry, 101);
  PsnrMetric psnr(PsnrOptions{});
  const FrameScores scores = ScoreOrDie(psnr, ref, dist);
  const double expected = 10.0 * std::log10(65025.0);
  EXPECT_NEAR(expected, 48.1308036086791, 1e-12);  // the formula's value, by hand
  ASSERT_EQ(scores.size(), 3u);
  for (const NamedScore& score : scores) {
    EXPECT_EQ(Bits(score.value), Bits(expected)) << score.name;
  }
}

// The largest possible error: mse = peak^2, so psnr = 10 * log10(1) = 0 exactly. At 16
// bits each square is 65535^2 = 4294836225, which overflows int32 arithmetic.
TEST(PsnrTest, FullScaleErrorIsZeroDecibels) {
  for (int depth : {8, 10, 12, 16}) {
    const FrameGeometry geometry{5, 3, {ChromaLayout::k422, depth}};
    const Frame ref = FilledFrame(geometry, 0);
    const Frame dist = FilledFrame(geometry, (1u << depth) - 1);
    PsnrMetric psnr(PsnrOptions{});
    for (const NamedScore& score : ScoreOrDie(psnr, ref, dist)) {
      EXPECT_EQ(Bits(score.value), Bits(0.0)) << depth << " " << score.name;
    }
    for (const NamedScore& score : ScoreOrDie(psnr, dist, ref)) {
      EXPECT_EQ(Bits(score.value), Bits(0.0)) << depth << " " << score.name << " swapped";
    }
  }
}

// 16-bit, off by one: mse = 1, psnr = 10 * log10(65535^2) = 96.3294660... dB (< 108).
TEST(PsnrTest, SixteenBitOffByOne) {
  const FrameGeometry geometry{4, 4, {ChromaLayout::k444, 16}};
  const Frame ref = FilledFrame(geometry, 40000);
  const Frame dist = FilledFrame(geometry, 39999);
  PsnrMetric psnr(PsnrOptions{});
  const double expected = 10.0 * std::log10(65535.0 * 65535.0);
  EXPECT_NEAR(expected, 96.32946607, 1e-8);
  for (const NamedScore& score : ScoreOrDie(psnr, ref, dist)) {
    EXPECT_EQ(Bits(score.value), Bits(expected)) << score.name;
  }
}

// 3x3 4:2:0 has 2x2 chroma planes (rounded up). One luma sample off by 3 gives
// sse 9 over 9 samples; one Cb sample off by 2 gives sse 4 over 4 samples: mse 1 both.
// Rounding chroma down (1x1) would give mse 4 for Cb.
TEST(PsnrTest, OddSizeUsesRoundedUpChromaPlanes) {
  const FrameGeometry geometry{3, 3, {ChromaLayout::k420, 8}};
  const Frame ref = FilledFrame(geometry, 128);
  Frame dist = ref;
  dist.set_sample(0, 2, 2, 131);
  dist.set_sample(1, 1, 1, 126);
  PsnrMetric psnr(PsnrOptions{});
  const FrameScores scores = ScoreOrDie(psnr, ref, dist);
  const double mse_one = 10.0 * std::log10(65025.0);
  EXPECT_EQ(Bits(*FindScore(scores, "psnr_y")), Bits(mse_one));
  EXPECT_EQ(Bits(*FindScore(scores, "psnr_cb")), Bits(mse_one));
  EXPECT_EQ(Bits(*FindScore(scores, "psnr_cr")), Bits(60.0));
}

// An mse that is not an integer: 10-bit 3x1 4:4:4, luma errors 1, 2, 4: sse 21, mse 7,
// psnr = 10 * log10(1023^2 / 7).
TEST(PsnrTest, TenBitFractionalPeakRatio) {
  const FrameGeometry geometry{3, 1, {ChromaLayout::k444, 10}};
  const Frame ref = FilledFrame(geometry, 512);
  Frame dist = ref;
  dist.set_sample(0, 0, 0, 513);
  dist.set_sample(0, 1, 0, 510);
  dist.set_sample(0, 2, 0, 516);
  PsnrOptions options;
  options.enable_mse = true;
  PsnrMetric psnr(options);
  const FrameScores scores = ScoreOrDie(psnr, ref, dist);
  EXPECT_EQ(Bits(*FindScore(scores, "mse_y")), Bits(7.0));
  EXPECT_EQ(Bits(*FindScore(scores, "psnr_y")), Bits(10.0 * std::log10(1046529.0 / 7.0)));
  EXPECT_EQ(Bits(*FindScore(scores, "mse_cb")), Bits(0.0));
  EXPECT_EQ(Bits(*FindScore(scores, "psnr_cb")), Bits(72.0));
}

TEST(PsnrTest, OutputsFollowLayoutAndOptionsInLibvmafOrder) {
  const FrameGeometry yuv{4, 4, {ChromaLayout::k420, 8}};
  const FrameGeometry gray{4, 4, {ChromaLayout::k400, 10}};
  PsnrMetric plain(PsnrOptions{});
  EXPECT_EQ(plain.OutputNames(yuv), (std::vector<std::string>{"psnr_y", "psnr_cb", "psnr_cr"}));
  EXPECT_EQ(plain.OutputNames(gray), (std::vector<std::string>{"psnr_y"}));
  const Frame gray_frame = FilledFrame(gray, 3);
  EXPECT_EQ(Names(ScoreOrDie(plain, gray_frame, gray_frame)), plain.OutputNames(gray));

  PsnrOptions with_mse;
  with_mse.enable_mse = true;
  PsnrMetric mse(with_mse);
  const std::vector<std::string> expected = {"psnr_y", "mse_y", "psnr_cb", "mse_cb", "psnr_cr", "mse_cr"};
  EXPECT_EQ(mse.OutputNames(yuv), expected);
  const Frame yuv_frame = FilledFrame(yuv, 3);
  EXPECT_EQ(Names(ScoreOrDie(mse, yuv_frame, yuv_frame)), expected);

  PsnrOptions luma_only;
  luma_only.enable_chroma = false;
  EXPECT_EQ(PsnrMetric(luma_only).OutputNames(yuv), (std::vector<std::string>{"psnr_y"}));
}

// reduced_hbd_peak: at 10 bits peak = 255 * 4 = 1020; off by one gives
// 10 * log10(1020^2) and identical frames still clamp at 72.
TEST(PsnrTest, ReducedHighBitDepthPeak) {
  const FrameGeometry geometry{4, 2, {ChromaLayout::k444, 10}};
  const Frame ref = FilledFrame(geometry, 600);
  const Frame dist = FilledFrame(geometry, 601);
  absl::StatusOr<PsnrOptions> options = ParsePsnrOptions({{"reduced_hbd_peak", "true"}});
  ASSERT_TRUE(options.ok());
  PsnrMetric psnr(*options);
  EXPECT_EQ(Bits(*FindScore(ScoreOrDie(psnr, ref, dist), "psnr_y")), Bits(10.0 * std::log10(1040400.0)));
  EXPECT_EQ(*FindScore(ScoreOrDie(psnr, ref, ref), "psnr_y"), 72.0);
}

// min_sse = 16 over a 4x4 plane: mse 1, so the clamp is ceil(10 * log10(65025)) = 49.
TEST(PsnrTest, MinSseMovesTheClamp) {
  const FrameGeometry geometry{4, 4, {ChromaLayout::k444, 8}};
  const Frame frame = FilledFrame(geometry, 50);
  absl::StatusOr<PsnrOptions> options = ParsePsnrOptions({{"min_sse", "16"}});
  ASSERT_TRUE(options.ok()) << options.status();
  PsnrMetric psnr(*options);
  for (const NamedScore& score : ScoreOrDie(psnr, frame, frame)) {
    EXPECT_EQ(score.value, 49.0) << score.name;
  }
}

TEST(PsnrTest, DefaultsAreLibvmafs) {
  absl::StatusOr<PsnrOptions> options = ParsePsnrOptions({});
  ASSERT_TRUE(options.ok());
  EXPECT_TRUE(options->enable_chroma);
  EXPECT_FALSE(options->enable_mse);
  EXPECT_EQ(options->min_sse, 0.0);
  EXPECT_FALSE(options->reduced_hbd_peak);
  EXPECT_EQ(PsnrMetricInfo().definition_version, 1);
  EXPECT_EQ(PsnrMetricInfo().name, "psnr");
}

TEST(PsnrTest, BadOptionsNameTheOption) {
  const auto message = [](const MetricOptions& options) {
    return std::string(ParsePsnrOptions(options).status().message());
  };
  EXPECT_NE(message({{"enable_apsnr", "true"}}).find("unknown option 'enable_apsnr'"), std::string::npos);
  EXPECT_NE(message({{"enable_chroma", "maybe"}}).find("'enable_chroma'"), std::string::npos);
  EXPECT_NE(message({{"min_sse", "-1"}}).find("'min_sse'"), std::string::npos);
  EXPECT_NE(message({{"min_sse", "inf"}}).find("'min_sse'"), std::string::npos);
  EXPECT_EQ(ParsePsnrOptions({{"min_sse", "x"}}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PsnrTest, MismatchedGeometriesAreRejected) {
  const Frame a = FilledFrame({4, 4, {ChromaLayout::k420, 8}}, 1);
  const Frame b = FilledFrame({4, 4, {ChromaLayout::k420, 10}}, 1);
  PsnrMetric psnr(PsnrOptions{});
  const absl::Status status = psnr.Score(a, b).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("4x4 yuv420p10le"), absl::string_view::npos) << status;
}

}  // namespace
}  // namespace exactq
