#include "engine/metrics/vmaf/vmaf_features.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "engine/metrics/vmaf/vmaf_features_kernels.h"
#include "engine/metrics/vmaf/vmaf_test_frames.h"
#include "gtest/gtest.h"

namespace exactq {
namespace vmaf {
namespace {

using testing_frames::Geometry;
using testing_frames::MakeFrame;

uint64_t Bits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

void ExpectSameBits(const VmafFeatures& a, const VmafFeatures& b) {
  for (int s = 0; s < 4; ++s) EXPECT_EQ(Bits(a.vif[s]), Bits(b.vif[s])) << "vif scale " << s;
  EXPECT_EQ(Bits(a.adm2), Bits(b.adm2));
  EXPECT_EQ(Bits(a.motion), Bits(b.motion));
}

TEST(VmafFeaturesTest, RefusesFramesBelowTheMinimumNamingIt) {
  for (auto [w, h] : {std::pair{16, 17}, {17, 16}, {8, 8}, {1, 1}}) {
    const FrameGeometry g = Geometry(w, h, 8);
    absl::Status s = CheckVmafInput(g, g);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << w << "x" << h;
    EXPECT_NE(s.message().find("17x17"), absl::string_view::npos) << s.message();
    const Frame f = MakeFrame(g, 0, 0);
    EXPECT_EQ(ComputeVmafFeatures(f, f, nullptr).status().code(),
              absl::StatusCode::kInvalidArgument);
  }
}

TEST(VmafFeaturesTest, RefusesMismatchedGeometries) {
  const Frame a = MakeFrame(Geometry(32, 32, 8), 0, 0);
  const Frame b = MakeFrame(Geometry(32, 33, 8), 0, 0);
  EXPECT_EQ(ComputeVmafFeatures(a, b, nullptr).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ComputeVmafFeatures(a, a, &b).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(VmafFeaturesTest, IdenticalFramesScoreOneAndNoMotion) {
  const FrameGeometry g = Geometry(96, 64, 8);
  const Frame ref = MakeFrame(g, 0, 0);
  absl::StatusOr<VmafFeatures> f = ComputeVmafFeatures(ref, ref, &ref);
  ASSERT_TRUE(f.ok()) << f.status();
  for (int s = 0; s < 4; ++s) EXPECT_EQ(f->vif[s], 1.0) << s;
  // ADM's numerator (masked) and denominator are computed differently: near 1, not 1.
  EXPECT_NEAR(f->adm2, 1.0, 1e-4);
  EXPECT_EQ(f->motion, 0.0);
}

TEST(VmafFeaturesTest, OddAndMinimalSizesRunAtEveryDepth) {
  for (auto [w, h] : {std::pair{17, 17}, {17, 33}, {33, 17}, {641, 359}, {99, 41}}) {
    for (int depth : {8, 10, 12, 16}) {
      SCOPED_TRACE(testing::Message() << w << "x" << h << " " << depth << " bit");
      const FrameGeometry g = Geometry(w, h, depth);
      const Frame prev = MakeFrame(g, 0, 0);
      const Frame ref = MakeFrame(g, 2, 0);
      const Frame dis = MakeFrame(g, 2, 3);
      absl::StatusOr<VmafFeatures> f = ComputeVmafFeatures(ref, dis, &prev);
      ASSERT_TRUE(f.ok()) << f.status();
      for (int s = 0; s < 4; ++s) {
        EXPECT_TRUE(std::isfinite(f->vif[s])) << s;
        EXPECT_GT(f->vif[s], 0.0) << s;
        EXPECT_LT(f->vif[s], 1.0) << s;
      }
      EXPECT_TRUE(std::isfinite(f->adm2));
      EXPECT_GT(f->adm2, 0.0);
      EXPECT_LE(f->adm2, 1.0);
      EXPECT_GT(f->motion, 0.0);
    }
  }
}

TEST(VmafFeaturesTest, ReadsLumaOnly) {
  // The same luma in every chroma layout gives the same bits.
  for (int depth : {8, 10}) {
    absl::StatusOr<VmafFeatures> first;
    for (ChromaLayout layout :
         {ChromaLayout::k420, ChromaLayout::k422, ChromaLayout::k444, ChromaLayout::k400}) {
      const FrameGeometry g = Geometry(71, 45, depth, layout);
      const Frame prev = MakeFrame(g, 0, 0);
      const Frame ref = MakeFrame(g, 3, 0);
      const Frame dis = MakeFrame(g, 3, 5);
      absl::StatusOr<VmafFeatures> f = ComputeVmafFeatures(ref, dis, &prev);
      ASSERT_TRUE(f.ok()) << f.status();
      if (!first.ok()) {
        first = f;
      } else {
        ExpectSameBits(*f, *first);
      }
    }
  }
}

TEST(VmafFeaturesTest, FirstFrameHasNoMotionAndMotionIsTheReferencesOnly) {
  const FrameGeometry g = Geometry(64, 48, 8);
  const Frame prev = MakeFrame(g, 0, 0);
  const Frame ref = MakeFrame(g, 4, 0);
  absl::StatusOr<VmafFeatures> first = ComputeVmafFeatures(ref, MakeFrame(g, 4, 2), nullptr);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->motion, 0.0);
  // Motion does not look at the distorted frame.
  absl::StatusOr<VmafFeatures> a = ComputeVmafFeatures(ref, MakeFrame(g, 4, 2), &prev);
  absl::StatusOr<VmafFeatures> b = ComputeVmafFeatures(ref, MakeFrame(g, 4, 6), &prev);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(b.ok());
  EXPECT_GT(a->motion, 0.0);
  EXPECT_EQ(Bits(a->motion), Bits(b->motion));
}

TEST(VmafFeaturesTest, SimdKernelsEqualTheGenericOnesBitForBit) {
  if (!VmafAvx2Supported()) GTEST_SKIP() << "no AVX2 on this CPU";
  for (auto [w, h] : {std::pair{17, 17}, {17, 33}, {33, 17}, {641, 359}, {99, 41}, {1280, 720}}) {
    for (int depth : {8, 10, 12, 16}) {
      if (w * h > 100000 && depth != 8 && depth != 10) continue;
      SCOPED_TRACE(testing::Message() << w << "x" << h << " " << depth << " bit");
      const FrameGeometry g = Geometry(w, h, depth);
      const Frame prev = MakeFrame(g, 1, 0);
      const Frame ref = MakeFrame(g, 3, 0);
      for (int distortion : {0, 2, 7}) {
        const Frame dis = MakeFrame(g, 3, distortion);
        const VmafFeatures reference = generic::ComputeFeatures(ref, dis, &prev, {});
        ExpectSameBits(avx2::ComputeFeatures(ref, dis, &prev, {}), reference);
        if (VmafAvx512Supported()) {
          ExpectSameBits(avx512::ComputeFeatures(ref, dis, &prev, {}), reference);
        }
      }
      const VmafFeatures first = generic::ComputeFeatures(ref, prev, nullptr, {});
      ExpectSameBits(avx2::ComputeFeatures(ref, prev, nullptr, {}), first);
      if (VmafAvx512Supported()) {
        ExpectSameBits(avx512::ComputeFeatures(ref, prev, nullptr, {}), first);
      }
    }
  }
}

}  // namespace
}  // namespace vmaf
}  // namespace exactq
