// The scaler's definition checked on cases derived by hand, and its properties: a
// same-size scale is the identity, flat planes stay flat, taps sum to 2^14, samples
// stay in range at every depth, mirrored input gives mirrored output.
#include "engine/scale/bicubic_scaler.h"

#include <cstdint>
#include <random>

#include "gtest/gtest.h"

namespace exactq {
namespace scale {
namespace {

Frame RandomFrame(const FrameGeometry& g, uint32_t seed) {
  Frame f = *Frame::Create(g);
  std::mt19937 rng(seed);
  const uint32_t max_value = (1u << g.format.bit_depth) - 1;
  for (int p = 0; p < g.plane_count(); ++p) {
    for (int y = 0; y < g.plane_height(p); ++y) {
      for (int x = 0; x < g.plane_width(p); ++x) f.set_sample(p, x, y, rng() % (max_value + 1));
    }
  }
  return f;
}

// K at the distances of a 2x upscale, by hand from the formula:
//   K(1/4) = (42/64 - 72/16 + 30)/30 = 0.871875    K(3/4) = (42*27/64 - 72*9/16 + 30)/30 = 0.240625
//   K(5/4) = (-18*125/64 + 90*25/16 - 180 + 72)/30 = -0.084375
//   K(7/4) = (-18*343/64 + 90*49/16 - 252 + 72)/30 = -0.028125
TEST(BicubicScalerTest, KernelAtTheTwoTimesUpscaleDistances) {
  EXPECT_EQ(BicubicKernel(0.25), 0.871875);
  EXPECT_EQ(BicubicKernel(0.75), 0.240625);
  EXPECT_EQ(BicubicKernel(1.25), -0.084375);
  EXPECT_EQ(BicubicKernel(1.75), -0.028125);
  EXPECT_EQ(BicubicKernel(0.0), 1.0);
  EXPECT_EQ(BicubicKernel(1.0), 0.0);
  EXPECT_EQ(BicubicKernel(2.0), 0.0);
}

// 4 -> 8 samples: output 2 sits at x = (2.5 * 4 / 8) - 0.5 = 0.75; its taps are source
// samples -1..2 at distances 1.75, 0.75, 0.25, 1.25: 2^14 * K = -460.8, 3942.4,
// 14284.8, -1382.4, rounded -461, 3942, 14285, -1382 (sum 16384, no residue).
TEST(BicubicScalerTest, TwoTimesUpscaleTapsByHand) {
  const AxisTaps taps = BicubicTaps(4, 8);
  ASSERT_EQ(taps.taps, 4);
  EXPECT_EQ(taps.first[2], -1);
  EXPECT_EQ(std::vector<int32_t>(taps.weight.begin() + 8, taps.weight.begin() + 12),
            (std::vector<int32_t>{-461, 3942, 14285, -1382}));
  // Output 0 sits at x = -0.25: taps -2..1 at distances 1.75, 0.75, 0.25, 1.25.
  EXPECT_EQ(taps.first[0], -2);
  EXPECT_EQ(std::vector<int32_t>(taps.weight.begin(), taps.weight.begin() + 4),
            (std::vector<int32_t>{-461, 3942, 14285, -1382}));
}

// One row 10, 20, 40, 80 scaled to 8 wide (height 1 stays 1: vertical taps 0, 2^14, 0, 0).
// Output 2: 10*(-461) + 10*3942 + 20*14285 + 40*(-1382) = 265230 (sample -1 clamps to
// sample 0); times 2^14 vertically, plus 2^27, over 2^28: floor(16.688...) = 16.
TEST(BicubicScalerTest, OneSampleByHand) {
  const FrameGeometry g{4, 1, PixelFormat{ChromaLayout::k400, 8}};
  Frame row = *Frame::Create(g);
  const uint32_t values[] = {10, 20, 40, 80};
  for (int x = 0; x < 4; ++x) row.set_sample(0, x, 0, values[x]);
  absl::StatusOr<Frame> scaled = ScaleBicubic(row, {8, 1, PixelFormat{ChromaLayout::k400, 8}});
  ASSERT_TRUE(scaled.ok()) << scaled.status();
  EXPECT_EQ(scaled->sample(0, 2, 0), 16u);
}

TEST(BicubicScalerTest, SameSizeIsTheIdentity) {
  for (const FrameGeometry& g : {FrameGeometry{33, 17, PixelFormat{ChromaLayout::k420, 8}},
                                 FrameGeometry{20, 9, PixelFormat{ChromaLayout::k422, 10}},
                                 FrameGeometry{7, 5, PixelFormat{ChromaLayout::k444, 16}}}) {
    const Frame f = RandomFrame(g, 1);
    absl::StatusOr<Frame> same = ScaleBicubic(f, g);
    ASSERT_TRUE(same.ok());
    EXPECT_EQ(std::vector<uint8_t>(same->bytes(), same->bytes() + same->size_bytes()),
              std::vector<uint8_t>(f.bytes(), f.bytes() + f.size_bytes()));
  }
}

TEST(BicubicScalerTest, TapsSumToOneAndFlatPlanesStayFlat) {
  for (int src : {1, 2, 3, 7, 540, 1080}) {
    for (int dst : {1, 2, 5, 8, 720, 1080, 2160}) {
      const AxisTaps taps = BicubicTaps(src, dst);
      for (int i = 0; i < dst; ++i) {
        int64_t sum = 0;
        for (int k = 0; k < taps.taps; ++k) sum += taps.weight[static_cast<size_t>(i) * taps.taps + k];
        ASSERT_EQ(sum, 1 << kTapBits) << src << " -> " << dst << " output " << i;
      }
    }
  }
  const FrameGeometry from{13, 11, PixelFormat{ChromaLayout::k420, 12}}, to{40, 7, PixelFormat{ChromaLayout::k420, 12}};
  Frame flat = *Frame::Create(from);
  for (int p = 0; p < 3; ++p) {
    for (int y = 0; y < from.plane_height(p); ++y) {
      for (int x = 0; x < from.plane_width(p); ++x) flat.set_sample(p, x, y, 1000u + 700u * p);
    }
  }
  absl::StatusOr<Frame> scaled = ScaleBicubic(flat, to);
  ASSERT_TRUE(scaled.ok());
  for (int p = 0; p < 3; ++p) {
    for (int y = 0; y < to.plane_height(p); ++y) {
      for (int x = 0; x < to.plane_width(p); ++x) ASSERT_EQ(scaled->sample(p, x, y), 1000u + 700u * p);
    }
  }
}

// Overshoot of the negative lobes is clamped to the depth's range; a mirrored picture
// scales to the mirrored result (the grid and the taps are symmetric).
TEST(BicubicScalerTest, RangeAndMirrorSymmetry) {
  for (int depth : {8, 10, 16}) {
    const FrameGeometry from{9, 6, PixelFormat{ChromaLayout::k444, depth}},
        to{23, 14, PixelFormat{ChromaLayout::k444, depth}};
    Frame f = RandomFrame(from, static_cast<uint32_t>(depth));
    Frame mirrored = *Frame::Create(from);
    for (int p = 0; p < 3; ++p) {
      for (int y = 0; y < from.height; ++y) {
        for (int x = 0; x < from.width; ++x) mirrored.set_sample(p, from.width - 1 - x, y, f.sample(p, x, y));
      }
    }
    absl::StatusOr<Frame> a = ScaleBicubic(f, to);
    absl::StatusOr<Frame> b = ScaleBicubic(mirrored, to);
    ASSERT_TRUE(a.ok() && b.ok());
    for (int p = 0; p < 3; ++p) {
      for (int y = 0; y < to.height; ++y) {
        for (int x = 0; x < to.width; ++x) {
          ASSERT_LE(a->sample(p, x, y), (1u << depth) - 1);
          ASSERT_EQ(a->sample(p, x, y), b->sample(p, to.width - 1 - x, y)) << depth << " " << p << " " << x << " " << y;
        }
      }
    }
  }
}

TEST(BicubicScalerTest, DownscaleFiltersWithAWiderKernel) {
  const AxisTaps taps = BicubicTaps(3840, 1280);  // s = 3: radius 6, 12 taps
  EXPECT_EQ(taps.taps, 12);
  const FrameGeometry from{64, 32, PixelFormat{ChromaLayout::k420, 8}}, to{21, 11, PixelFormat{ChromaLayout::k420, 8}};
  absl::StatusOr<Frame> scaled = ScaleBicubic(RandomFrame(from, 5), to);
  ASSERT_TRUE(scaled.ok());
  EXPECT_EQ(scaled->geometry(), to);
}

TEST(BicubicScalerTest, ADifferentPixelFormatIsRefused) {
  const Frame f = RandomFrame({16, 16, PixelFormat{ChromaLayout::k420, 8}}, 3);
  absl::StatusOr<Frame> scaled = ScaleBicubic(f, {32, 32, PixelFormat{ChromaLayout::k420, 10}});
  EXPECT_EQ(scaled.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace scale
}  // namespace exactq
