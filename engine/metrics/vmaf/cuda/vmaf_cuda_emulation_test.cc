// Host-only: the kernel bodies of the vmaf CUDA twin (vmaf_cuda_kernels.h), run in plain
// loops in the order of the twin's launches (vmaf_cuda.cu: the VIF scales with their
// subsampling, the ADM scales with their DWT, decouple/CSF, denominator and masking
// sums, motion), with every sum formed as the kernels form it (per-row totals where
// libvmaf rounds per row), give ComputeVmafFeatures' bits. This checks the walk over
// scales, bands, mirrors and regions on machines without a GPU; the device adds the
// launch geometry and the atomics (vmaf_cuda_test).
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "engine/format/frame.h"
#include "engine/format/frame_geometry.h"
#include "engine/metrics/vmaf/cuda/vmaf_cuda_kernels.h"
#include "engine/metrics/vmaf/vmaf_feature_sums.h"
#include "engine/metrics/vmaf/vmaf_features.h"
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

template <int kScale, typename Sample>
VifSums EmulateVifScale(const Sample* ref, const Sample* dis, int w, int h, int bpc, double gain_limit) {
  constexpr int kHalf = gpu::VifFilter<kScale>::kHalf;
  const uint16_t* table = VifLog2Table();
  VifSums sums;
  std::vector<gpu::VifVertical> row(static_cast<size_t>(w) + 2 * kHalf);
  for (int i = 0; i < h; ++i) {
    // The row's vertical results, padded with the mirror (a kernel's tile and its halo).
    for (int t = 0; t < w + 2 * kHalf; ++t) {
      row[t] = gpu::VifVerticalAt<kScale>(ref, dis, w, h, bpc, i, gpu::Reflect101(t - kHalf, w));
    }
    for (int j = 0; j < w; ++j) gpu::VifHorizontalPixel<kScale>(row.data() + j, table, gain_limit, &sums);
  }
  return sums;
}

template <int kNext, typename Sample>
std::vector<uint16_t> EmulateSubsample(const Sample* src, int w, int h, int bpc) {
  std::vector<uint16_t> next(static_cast<size_t>(w / 2) * (h / 2));
  for (int r = 0; r < h / 2; ++r) {
    for (int c = 0; c < w / 2; ++c) {
      next[static_cast<size_t>(r) * (w / 2) + c] = gpu::VifSubsampleAt<kNext>(src, w, h, bpc, r, c);
    }
  }
  return next;
}

template <typename Sample>
void EmulateVif(const Sample* ref0, const Sample* dis0, int w, int h, int bpc, double gain_limit, double vif[4]) {
  vif[0] = VifScaleScore(EmulateVifScale<0>(ref0, dis0, w, h, bpc, gain_limit));
  std::vector<uint16_t> r1 = EmulateSubsample<1>(ref0, w, h, bpc), d1 = EmulateSubsample<1>(dis0, w, h, bpc);
  w /= 2;
  h /= 2;
  vif[1] = VifScaleScore(EmulateVifScale<1>(r1.data(), d1.data(), w, h, bpc, gain_limit));
  std::vector<uint16_t> r2 = EmulateSubsample<2>(r1.data(), w, h, bpc), d2 = EmulateSubsample<2>(d1.data(), w, h, bpc);
  w /= 2;
  h /= 2;
  vif[2] = VifScaleScore(EmulateVifScale<2>(r2.data(), d2.data(), w, h, bpc, gain_limit));
  std::vector<uint16_t> r3 = EmulateSubsample<3>(r2.data(), w, h, bpc), d3 = EmulateSubsample<3>(d2.data(), w, h, bpc);
  w /= 2;
  h /= 2;
  vif[3] = VifScaleScore(EmulateVifScale<3>(r3.data(), d3.data(), w, h, bpc, gain_limit));
}

struct Bands {
  int w = 0, h = 0;
  std::vector<int32_t> a, v, hb, d;
  void Resize(int width, int height) {
    w = width;
    h = height;
    const size_t n = static_cast<size_t>(w) * h;
    a.assign(n, 0);
    v.assign(n, 0);
    hb.assign(n, 0);
    d.assign(n, 0);
  }
  void Set(size_t o, const gpu::AdmQuad& q) {
    a[o] = q.a;
    v[o] = q.v;
    hb[o] = q.h;
    d[o] = q.d;
  }
};

void EmulateAdmScale(const Bands& ref, const Bands& dis, int scale, double gain_limit, float* num, float* den) {
  const AdmScaleParams params = MakeAdmScaleParams(scale, ref.w, ref.h);
  gpu::AdmPixelParams pixel{AdmDivTable(), AdmCos1DegSquared(), gain_limit, {}};
  for (int b = 0; b < 3; ++b) pixel.rfactor32[b] = params.rfactor32[b];
  const size_t n = static_cast<size_t>(ref.w) * ref.h;
  // Outside the CSF region these planes are never written; nothing reads them there.
  std::vector<int32_t> restored[3], csf_a[3], csf_f[3];
  for (int b = 0; b < 3; ++b) {
    restored[b].assign(n, 0);
    csf_a[b].assign(n, 0);
    csf_f[b].assign(n, 0);
  }
  const AdmRegion& cr = params.csf_region;
  for (int i = cr.top; i < cr.bottom; ++i) {
    for (int j = cr.left; j < cr.right; ++j) {
      const size_t o = static_cast<size_t>(i) * ref.w + j;
      const int32_t r3[3] = {ref.hb[o], ref.v[o], ref.d[o]};
      const int32_t d3[3] = {dis.hb[o], dis.v[o], dis.d[o]};
      const gpu::AdmDecoupled x = gpu::AdmDecoupleCsfAt(r3, d3, scale, pixel);
      for (int b = 0; b < 3; ++b) {
        restored[b][o] = x.restored[b];
        csf_a[b][o] = x.csf_a[b];
        csf_f[b][o] = x.csf_f[b];
      }
    }
  }
  const int32_t* const ca[3] = {csf_a[0].data(), csf_a[1].data(), csf_a[2].data()};
  const int32_t* const cf[3] = {csf_f[0].data(), csf_f[1].data(), csf_f[2].data()};
  const std::vector<int32_t>* ref_bands[3] = {&ref.hb, &ref.v, &ref.d};
  const AdmRegion& sr = params.score_region;
  AdmScaleSums sums;
  for (int i = sr.top; i < sr.bottom; ++i) {
    uint64_t den_inner[3] = {0, 0, 0};
    int64_t cm_inner[3] = {0, 0, 0};
    for (int j = sr.left; j < sr.right; ++j) {
      const size_t o = static_cast<size_t>(i) * ref.w + j;
      const int32_t thr = gpu::AdmCmThresholdAt(ca, cf, ref.w, ref.h, scale, i, j);
      for (int b = 0; b < 3; ++b) {
        den_inner[b] += gpu::AdmDenTerm((*ref_bands[b])[o], scale, params.den);
        cm_inner[b] += gpu::AdmCmTerm(restored[b][o], thr, scale, b, params.cm, params.rfactor32[b]);
      }
    }
    for (int b = 0; b < 3; ++b) {
      sums.den[b] += gpu::AdmDenRowTotal(den_inner[b], params.den);
      sums.cm[b] += gpu::AdmCmRowTotal(cm_inner[b], params.cm);
    }
  }
  AdmScaleNumDen(params, sums, num, den);
}

template <typename Sample>
double EmulateAdm(const Sample* ref0, const Sample* dis0, int w0, int h0, int bpc, double gain_limit) {
  float num[4], den[4];
  Bands ref, dis;
  for (int scale = 0; scale < 4; ++scale) {
    Bands next_ref, next_dis;
    const int w = scale == 0 ? w0 : ref.w;
    const int h = scale == 0 ? h0 : ref.h;
    next_ref.Resize((w + 1) / 2, (h + 1) / 2);
    next_dis.Resize((w + 1) / 2, (h + 1) / 2);
    for (int i = 0; i < next_ref.h; ++i) {
      for (int j = 0; j < next_ref.w; ++j) {
        const size_t o = static_cast<size_t>(i) * next_ref.w + j;
        if (scale == 0) {
          next_ref.Set(o, gpu::AdmDwtScale0At(ref0, w, h, bpc, i, j));
          next_dis.Set(o, gpu::AdmDwtScale0At(dis0, w, h, bpc, i, j));
        } else {
          next_ref.Set(o, gpu::AdmDwtS123At(ref.a.data(), w, h, scale, i, j));
          next_dis.Set(o, gpu::AdmDwtS123At(dis.a.data(), w, h, scale, i, j));
        }
      }
    }
    ref = std::move(next_ref);
    dis = std::move(next_dis);
    EmulateAdmScale(ref, dis, scale, gain_limit, &num[scale], &den[scale]);
  }
  return Adm2FromScales(num, den, w0, h0);
}

template <typename Sample>
double EmulateMotion(const Sample* prev, const Sample* cur, int w, int h, int bpc) {
  uint64_t sad = 0;
  std::vector<int32_t> y(static_cast<size_t>(w) + 4);
  for (int i = 0; i < h; ++i) {
    for (int t = 0; t < w + 4; ++t) y[t] = gpu::MotionVerticalAt(prev, cur, w, h, bpc, i, gpu::Reflect101(t - 2, w));
    uint32_t row = 0;  // wraps as libvmaf's
    for (int j = 0; j < w; ++j) row += gpu::MotionHorizontalTerm(y.data() + j);
    sad += row;
  }
  return MotionScore(sad, w, h);
}

template <typename Sample>
VmafFeatures EmulateTyped(const Sample* ref, const Sample* dis, const Sample* prev, int w, int h, int bpc,
                          double gain_limit) {
  VmafFeatures f;
  EmulateVif(ref, dis, w, h, bpc, gain_limit, f.vif);
  f.adm2 = EmulateAdm(ref, dis, w, h, bpc, gain_limit);
  if (prev != nullptr) f.motion = EmulateMotion(prev, ref, w, h, bpc);
  return f;
}

VmafFeatures Emulate(const Frame& ref, const Frame& dis, const Frame* prev, double gain_limit) {
  const FrameGeometry& g = ref.geometry();
  if (g.bytes_per_sample() == 1) {
    return EmulateTyped<uint8_t>(ref.plane8(0), dis.plane8(0), prev != nullptr ? prev->plane8(0) : nullptr, g.width,
                                 g.height, g.format.bit_depth, gain_limit);
  }
  return EmulateTyped<uint16_t>(ref.plane16(0), dis.plane16(0), prev != nullptr ? prev->plane16(0) : nullptr, g.width,
                                g.height, g.format.bit_depth, gain_limit);
}

void ExpectBodiesGiveTheCpuBits(const Frame& ref, const Frame& dis, const Frame* prev, VmafModelId model,
                                const std::string& label) {
  absl::StatusOr<VmafFeatures> cpu = ComputeVmafFeatures(ref, dis, prev, Parallel{}, model);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  const VmafFeatures emulated = Emulate(ref, dis, prev, VmafModelLimitsGainToOne(model) ? 1.0 : 100.0);
  for (int s = 0; s < 4; ++s) EXPECT_EQ(Bits(emulated.vif[s]), Bits(cpu->vif[s])) << label << " vif scale " << s;
  EXPECT_EQ(Bits(emulated.adm2), Bits(cpu->adm2)) << label << " adm2";
  EXPECT_EQ(Bits(emulated.motion), Bits(cpu->motion)) << label << " motion";
}

TEST(VmafCudaEmulationTest, TheBodiesGiveTheCpuBitsAtEveryDepthAndOddSizes) {
  for (int depth : {8, 10, 12, 16}) {
    for (auto [w, h] : {std::pair{17, 17}, {33, 17}, {17, 40}, {99, 41}, {128, 72}, {161, 97}}) {
      const FrameGeometry g = Geometry(w, h, depth);
      const Frame prev = MakeFrame(g, 0, 0, 3);
      const Frame ref = MakeFrame(g, 2, 0, 3);
      const Frame dis = MakeFrame(g, 2, 4, 3);
      const std::string label = std::to_string(w) + "x" + std::to_string(h) + " " + std::to_string(depth) + "-bit";
      ExpectBodiesGiveTheCpuBits(ref, dis, &prev, VmafModelId::kV0_6_1, label);
      ExpectBodiesGiveTheCpuBits(ref, dis, nullptr, VmafModelId::kV0_6_1, label + " first frame");
    }
  }
}

TEST(VmafCudaEmulationTest, TheNegModelsGainLimitReachesTheBodies) {
  const FrameGeometry g = Geometry(96, 64, 10);
  const Frame ref = MakeFrame(g, 0, 0, 9);
  const Frame dis = MakeFrame(g, 0, 6, 9);
  ExpectBodiesGiveTheCpuBits(ref, dis, nullptr, VmafModelId::kV0_6_1Neg, "neg");
  // The limit matters on this pair: the two models' features differ.
  absl::StatusOr<VmafFeatures> plain = ComputeVmafFeatures(ref, dis, nullptr, Parallel{}, VmafModelId::kV0_6_1);
  absl::StatusOr<VmafFeatures> neg = ComputeVmafFeatures(ref, dis, nullptr, Parallel{}, VmafModelId::kV0_6_1Neg);
  ASSERT_TRUE(plain.ok() && neg.ok());
  EXPECT_NE(Bits(plain->adm2), Bits(neg->adm2));
}

// Uniform random samples over the whole range: extreme moments, wrapping DWT sums,
// negative masking terms.
TEST(VmafCudaEmulationTest, TheBodiesGiveTheCpuBitsOnUniformNoise) {
  std::mt19937 rng(20261205);
  for (int depth : {8, 12, 16}) {
    for (auto [w, h] : {std::pair{18, 19}, {65, 33}, {100, 60}}) {
      const FrameGeometry g = Geometry(w, h, depth, ChromaLayout::k400);
      Frame frames[3] = {*Frame::Create(g), *Frame::Create(g), *Frame::Create(g)};
      std::uniform_int_distribution<uint32_t> sample(0, (1u << depth) - 1);
      for (Frame& f : frames) {
        for (int y = 0; y < h; ++y) {
          for (int x = 0; x < w; ++x) f.set_sample(0, x, y, sample(rng));
        }
      }
      const std::string label = "noise " + std::to_string(w) + "x" + std::to_string(h) + " " + std::to_string(depth);
      ExpectBodiesGiveTheCpuBits(frames[0], frames[1], &frames[2], VmafModelId::kV0_6_1, label);
    }
  }
}

}  // namespace
}  // namespace vmaf
}  // namespace exactq
