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
    EXPECT_EQ(ComputeVmafFeatures(f, f, nullptr).status().code(), absl::StatusCode::kInvalidArgument);
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
    for (ChromaLayout layout : {ChromaLayout::k420, ChromaLayout::k422, ChromaLayout::k444, ChromaLayout::k400}) {
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

using Kernel = VmafFeatures (*)(const Frame&, const Frame&, const Frame*, const Parallel&);

// The AVX2 and AVX-512 builds against the generic one, for one set of extractor options.
void ExpectSimdEqualsGeneric(Kernel generic_kernel, Kernel avx2_kernel, Kernel avx512_kernel) {
  for (auto [w, h] : {std::pair{17, 17}, {17, 33}, {33, 17}, {641, 359}, {99, 41}, {1280, 720}}) {
    for (int depth : {8, 10, 12, 16}) {
      if (w * h > 100000 && depth != 8 && depth != 10) continue;
      SCOPED_TRACE(testing::Message() << w << "x" << h << " " << depth << " bit");
      const FrameGeometry g = Geometry(w, h, depth);
      const Frame prev = MakeFrame(g, 1, 0);
      const Frame ref = MakeFrame(g, 3, 0);
      for (int distortion : {0, 2, 7}) {
        const Frame dis = MakeFrame(g, 3, distortion);
        const VmafFeatures reference = generic_kernel(ref, dis, &prev, {});
        ExpectSameBits(avx2_kernel(ref, dis, &prev, {}), reference);
        if (internal::VmafAvx512Supported()) {
          ExpectSameBits(avx512_kernel(ref, dis, &prev, {}), reference);
        }
      }
      const VmafFeatures first = generic_kernel(ref, prev, nullptr, {});
      ExpectSameBits(avx2_kernel(ref, prev, nullptr, {}), first);
      if (internal::VmafAvx512Supported()) {
        ExpectSameBits(avx512_kernel(ref, prev, nullptr, {}), first);
      }
    }
  }
}

TEST(VmafFeaturesTest, SimdKernelsEqualTheGenericOnesBitForBit) {
  if (!internal::VmafAvx2Supported()) GTEST_SKIP() << "no AVX2 on this CPU";
  ExpectSimdEqualsGeneric(&internal::generic::ComputeFeatures, &internal::avx2::ComputeFeatures,
                          &internal::avx512::ComputeFeatures);
}

// vmaf_v0.6.1neg's builds (enhancement gain limits 1).
TEST(VmafFeaturesTest, NegSimdKernelsEqualTheGenericOnesBitForBit) {
  if (!internal::VmafAvx2Supported()) GTEST_SKIP() << "no AVX2 on this CPU";
  ExpectSimdEqualsGeneric(&internal::generic_neg::ComputeFeatures, &internal::avx2_neg::ComputeFeatures,
                          &internal::avx512_neg::ComputeFeatures);
}

TEST(VmafFeaturesTest, NegModelLimitsTheGainOfAnEnhancedFrame) {
  // A sharpened distortion (gain above 1) scores lower with the limit 1; the default
  // options are those of vmaf_v0.6.1 and vmaf_4k_v0.6.1 alike.
  const FrameGeometry g = Geometry(96, 64, 8);
  const Frame ref = MakeFrame(g, 3, 0);
  Frame dis = MakeFrame(g, 3, 0);
  // Contrast stretch around 128: an enhancement VIF and ADM see as gain > 1.
  for (int y = 0; y < 64; ++y) {
    for (int x = 0; x < 96; ++x) {
      const int v = static_cast<int>(ref.sample(0, x, y));
      const int stretched = 128 + (v - 128) * 3 / 2;
      dis.set_sample(0, x, y, static_cast<uint32_t>(stretched < 0 ? 0 : (stretched > 255 ? 255 : stretched)));
    }
  }
  absl::StatusOr<VmafFeatures> plain = ComputeVmafFeatures(ref, dis, nullptr, {}, VmafModelId::kV0_6_1);
  absl::StatusOr<VmafFeatures> four_k = ComputeVmafFeatures(ref, dis, nullptr, {}, VmafModelId::k4kV0_6_1);
  absl::StatusOr<VmafFeatures> neg = ComputeVmafFeatures(ref, dis, nullptr, {}, VmafModelId::kV0_6_1Neg);
  ASSERT_TRUE(plain.ok() && four_k.ok() && neg.ok());
  ExpectSameBits(*four_k, *plain);
  EXPECT_LT(neg->vif[0], plain->vif[0]);
  EXPECT_LE(neg->vif[0], 1.0);
  EXPECT_LE(neg->adm2, plain->adm2);
}

}  // namespace
}  // namespace vmaf
}  // namespace exactq
