// checkasm style: the scaler (folded taps, a ring of rows, the AVX2 or baseline build)
// against the definition as a plain loop (bicubic_scaler_reference.h), byte for byte,
// on random geometries, depths, layouts and content, up and down, tiny planes included.
// A failure prints the case in full (sizes, format, seed, first differing sample) so it
// can be replayed.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine/scale/bicubic_scaler.h"
#include "engine/scale/bicubic_scaler_reference.h"
#include "gtest/gtest.h"

namespace exactq {
namespace scale {
namespace {

// Random samples, or (every third case) only 0 and the largest value, which drives the
// negative lobes to their extremes and the clamp at both ends.
Frame RandomFrame(const FrameGeometry& g, uint32_t seed) {
  Frame f = *Frame::Create(g);
  std::mt19937 rng(seed);
  const uint32_t max_value = g.max_sample_value();
  const bool extremes = seed % 3 == 0;
  for (int p = 0; p < g.plane_count(); ++p) {
    for (int y = 0; y < g.plane_height(p); ++y) {
      for (int x = 0; x < g.plane_width(p); ++x) {
        f.set_sample(p, x, y, extremes ? (rng() & 1) * max_value : rng() % (max_value + 1));
      }
    }
  }
  return f;
}

std::string Case(const FrameGeometry& from, const FrameGeometry& to, uint32_t seed) {
  return GeometryDescription(from) + " -> " + GeometryDescription(to) + " seed " + std::to_string(seed);
}

// The first sample where the two differ, for the failure message.
std::string FirstDifference(const Frame& got, const Frame& want) {
  const FrameGeometry& g = want.geometry();
  for (int p = 0; p < g.plane_count(); ++p) {
    for (int y = 0; y < g.plane_height(p); ++y) {
      for (int x = 0; x < g.plane_width(p); ++x) {
        if (got.sample(p, x, y) != want.sample(p, x, y)) {
          return std::string(PlaneName(p)) + " x=" + std::to_string(x) + " y=" + std::to_string(y) + ": got " +
                 std::to_string(got.sample(p, x, y)) + ", the definition " + std::to_string(want.sample(p, x, y));
        }
      }
    }
  }
  return "none";
}

void ExpectSameBytes(const Frame& source, const FrameGeometry& to, uint32_t seed) {
  const std::string name = Case(source.geometry(), to, seed);
  absl::StatusOr<Frame> want = ScaleBicubicReference(source, to);
  ASSERT_TRUE(want.ok()) << name << ": " << want.status();
  absl::StatusOr<Frame> got = ScaleBicubic(source, to);
  ASSERT_TRUE(got.ok()) << name << ": " << got.status();
  ASSERT_EQ(got->geometry(), to) << name;
  ASSERT_EQ(std::memcmp(got->bytes(), want->bytes(), want->size_bytes()), 0)
      << name << ": first difference at " << FirstDifference(*got, *want);
  // Each build of the kernels this CPU runs (the baseline always).
  for (ScalerIsa isa : {ScalerIsa::kBaseline, ScalerIsa::kAvx2}) {
    absl::StatusOr<BicubicScaler> scaler = BicubicScaler::Create(source.geometry(), to, isa);
    ASSERT_TRUE(scaler.ok()) << name << ": " << scaler.status();
    if (scaler->isa() != isa) continue;
    Frame out;
    ASSERT_TRUE(scaler->Scale(source, &out).ok()) << name;
    ASSERT_EQ(std::memcmp(out.bytes(), want->bytes(), want->size_bytes()), 0)
        << name << " (" << ScalerIsaName(isa) << "): first difference at " << FirstDifference(out, *want);
  }
}

const ChromaLayout kLayouts[] = {ChromaLayout::k400, ChromaLayout::k420, ChromaLayout::k422, ChromaLayout::k444};
const int kDepths[] = {8, 9, 10, 12, 14, 16};

TEST(BicubicScalerParityTest, RandomGeometriesDepthsAndLayouts) {
  std::mt19937 rng(20240611);
  for (uint32_t seed = 1; seed <= 1000; ++seed) {
    const PixelFormat format{kLayouts[rng() % 4], kDepths[rng() % 6]};
    // Mostly small sizes (every edge case of the folding), some up to 200.
    auto size = [&] { return static_cast<int>(rng() % 4 == 0 ? 1 + rng() % 200 : 1 + rng() % 24); };
    const FrameGeometry from{size(), size(), format};
    const FrameGeometry to{size(), size(), format};
    ExpectSameBytes(RandomFrame(from, seed), to, seed);
    if (HasFatalFailure()) return;
  }
}

// The ratios a ladder meets (rungs scaled up to their reference), at reduced size so the
// plain loop stays quick: 2x, 1.5x, 3x, 4/3 and the odd sizes in between.
TEST(BicubicScalerParityTest, LadderRatios) {
  const int sizes[][4] = {{96, 54, 192, 108}, {128, 72, 192, 108}, {64, 36, 192, 108}, {144, 81, 192, 108},
                          {61, 35, 192, 108}, {192, 108, 96, 54},  {192, 108, 64, 36}, {33, 17, 100, 51}};
  uint32_t seed = 1000;
  for (const auto& s : sizes) {
    for (int depth : {8, 10, 16}) {
      for (ChromaLayout layout : {ChromaLayout::k420, ChromaLayout::k444}) {
        const PixelFormat format{layout, depth};
        ++seed;
        ExpectSameBytes(RandomFrame({s[0], s[1], format}, seed), {s[2], s[3], format}, seed);
        if (HasFatalFailure()) return;
      }
    }
  }
}

// Every upscale width from 1 to 48 samples to up to three times that, 8 to 15 bits (the
// AVX2 build's vector kernel takes depths up to 15 and widths from one 16-byte window
// up, the rest of a row going to the scalar loop) and 16: the vector part, its tail and
// its edge cases, each build against the plain loop.
TEST(BicubicScalerParityTest, EveryUpscaleWidthAroundTheVectorKernel) {
  uint32_t seed = 5000;
  for (int depth : {8, 10, 15, 16}) {
    for (int src = 1; src <= 48; ++src) {
      for (int dst = src; dst <= 3 * src + 9; dst += 1 + src / 8) {
        const PixelFormat format{ChromaLayout::k400, depth};
        ++seed;
        ExpectSameBytes(RandomFrame({src, 3, format}, seed), {dst, 5, format}, seed);
        if (HasFatalFailure()) return;
      }
    }
  }
}

// One scaler reused for many pictures (the ladder's way): each equals a fresh call, and
// pictures written into a buffer of another geometry or memory get the right geometry.
TEST(BicubicScalerParityTest, AScalerKeepsItsTapsAcrossPictures) {
  const FrameGeometry from{40, 30, PixelFormat{ChromaLayout::k420, 10}},
      to{64, 48, PixelFormat{ChromaLayout::k420, 10}};
  absl::StatusOr<BicubicScaler> scaler = BicubicScaler::Create(from, to);
  ASSERT_TRUE(scaler.ok()) << scaler.status();
  Frame out = *Frame::Create({8, 8, PixelFormat{ChromaLayout::k444, 8}});
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    const Frame in = RandomFrame(from, seed);
    ASSERT_TRUE(scaler->Scale(in, &out).ok());
    absl::StatusOr<Frame> want = ScaleBicubicReference(in, to);
    ASSERT_TRUE(want.ok());
    ASSERT_EQ(out.geometry(), to);
    ASSERT_EQ(std::memcmp(out.bytes(), want->bytes(), want->size_bytes()), 0) << Case(from, to, seed);
  }
  // A picture of another geometry is refused by name.
  const Frame other = RandomFrame({41, 30, PixelFormat{ChromaLayout::k420, 10}}, 9);
  absl::Status s = scaler->Scale(other, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("41x30"), std::string::npos) << s;
}

// Bands of output rows on a WorkerPool: every thread count gives the plain loop's bytes,
// with planes tall enough for several bands (the last one short) and every layout, up
// and down, one scaler switching between thread counts.
TEST(BicubicScalerParityTest, BandsOnAPoolGiveTheSameBytesForEveryThreadCount) {
  std::mt19937 rng(20261205);
  uint32_t seed = 9000;
  for (int threads : {2, 3, 4, 7}) {
    WorkerPool pool(threads);
    for (int k = 0; k < 6; ++k) {
      const PixelFormat format{kLayouts[rng() % 4], kDepths[rng() % 6]};
      const FrameGeometry from{static_cast<int>(8 + rng() % 40), static_cast<int>(40 + rng() % 400), format};
      const FrameGeometry to{static_cast<int>(8 + rng() % 80),
                             static_cast<int>(2 * BicubicScaler::kBandRows + 1 + rng() % 400), format};
      const Frame in = RandomFrame(from, ++seed);
      absl::StatusOr<Frame> want = ScaleBicubicReference(in, to);
      ASSERT_TRUE(want.ok()) << want.status();
      absl::StatusOr<BicubicScaler> scaler = BicubicScaler::Create(from, to);
      ASSERT_TRUE(scaler.ok()) << scaler.status();
      for (WorkerPool* p : {&pool, static_cast<WorkerPool*>(nullptr), &pool}) {
        Frame out;
        ASSERT_TRUE(scaler->Scale(in, &out, p).ok());
        ASSERT_EQ(out.geometry(), to);
        ASSERT_EQ(std::memcmp(out.bytes(), want->bytes(), want->size_bytes()), 0)
            << Case(from, to, seed) << " threads " << (p != nullptr ? threads : 1);
      }
    }
  }
}

// The scaler keeps horizontal sums in int32: |sum| <= max_value * sum |w| must stay below
// 2^31 at 16 bits, so sum |w| below 2^15 (folding only merges taps, which cannot raise
// it). The largest over every pair of sizes up to 128 and the ladder's sizes.
TEST(BicubicScalerParityTest, TapMagnitudesStayFarBelowTheRowBound) {
  std::vector<int> sizes;
  for (int n = 1; n <= 128; ++n) sizes.push_back(n);
  for (int n : {144, 240, 270, 360, 480, 540, 576, 720, 960, 1080, 1280, 1440, 1920, 2160, 2560, 3840, 16384}) {
    sizes.push_back(n);
  }
  int64_t largest = 0;
  for (int src : sizes) {
    for (int dst : sizes) {
      const AxisTaps taps = BicubicTaps(src, dst);
      for (int i = 0; i < dst; ++i) {
        int64_t sum = 0;
        for (int k = 0; k < taps.taps; ++k) sum += std::abs(taps.weight[static_cast<size_t>(i) * taps.taps + k]);
        largest = std::max(largest, sum);
      }
    }
  }
  std::printf("largest sum of |tap| over one output: %lld (bound 32768)\n", static_cast<long long>(largest));
  EXPECT_LT(largest, 1 << 15);
}

TEST(BicubicScalerParityTest, CreateRefusesAFormatChange) {
  absl::StatusOr<BicubicScaler> scaler =
      BicubicScaler::Create({16, 16, PixelFormat{ChromaLayout::k420, 8}}, {32, 32, PixelFormat{ChromaLayout::k422, 8}});
  EXPECT_EQ(scaler.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace scale
}  // namespace exactq
