#include "engine/metrics/ssimulacra2/ssimulacra2_reference.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/metrics/ssimulacra2/srgb_eotf_table.h"

namespace exactq {
namespace ssimulacra2 {
namespace {

using L = ScalarLanes;

// One plane of f32 samples, rows packed.
struct Plane {
  int width = 0;
  int height = 0;
  std::vector<float> samples;

  Plane(int w, int h) : width(w), height(h), samples(static_cast<size_t>(w) * h) {}
  float& at(int x, int y) { return samples[static_cast<size_t>(y) * width + x]; }
  float at(int x, int y) const { return samples[static_cast<size_t>(y) * width + x]; }
};

// Three planes: linear R, G, B or X, Y, B.
struct Image3 {
  Plane planes[kChannels];
  Image3(int w, int h) : planes{Plane(w, h), Plane(w, h), Plane(w, h)} {}
  int width() const { return planes[0].width; }
  int height() const { return planes[0].height; }
};

float SampleCode(const Frame& frame, int plane, int x, int y) {
  const size_t index = static_cast<size_t>(y) * frame.geometry().plane_width(plane) + x;
  return frame.geometry().bytes_per_sample() == 1 ? static_cast<float>(frame.plane8(plane)[index])
                                                  : static_cast<float>(frame.plane16(plane)[index]);
}

// Step 1 (B.2-B.3).
Image3 ToLinearRgb(const Frame& frame, const YuvToRgbCoefficients& k) {
  const FrameGeometry& g = frame.geometry();
  Image3 rgb(g.width, g.height);
  for (int y = 0; y < g.height; ++y) {
    const int cy = NearestChromaIndex(y, g.height, g.plane_height(1));
    for (int x = 0; x < g.width; ++x) {
      const int cx = NearestChromaIndex(x, g.width, g.plane_width(1));
      YuvToLinearRgb<L>(k, kSrgbEotfTable, SampleCode(frame, 0, x, y), SampleCode(frame, 1, cx, cy),
                        SampleCode(frame, 2, cx, cy), rgb.planes[0].at(x, y), rgb.planes[1].at(x, y),
                        rgb.planes[2].at(x, y));
    }
  }
  return rgb;
}

// B.4, pixel by pixel.
Image3 ToXyb(const Image3& rgb) {
  const float cube_root_of_bias = CubeRootOfOpsinBias();
  Image3 xyb(rgb.width(), rgb.height());
  for (int y = 0; y < rgb.height(); ++y) {
    for (int x = 0; x < rgb.width(); ++x) {
      LinearRgbToXyb<L>(rgb.planes[0].at(x, y), rgb.planes[1].at(x, y), rgb.planes[2].at(x, y), cube_root_of_bias,
                        xyb.planes[0].at(x, y), xyb.planes[1].at(x, y), xyb.planes[2].at(x, y));
    }
  }
  return xyb;
}

// B.5: ceil(w/2) x ceil(h/2); reads past the last column or row repeat it.
Image3 Downsample(const Image3& in) {
  const int w = in.width();
  const int h = in.height();
  Image3 out((w + 1) / 2, (h + 1) / 2);
  for (int c = 0; c < kChannels; ++c) {
    const Plane& p = in.planes[c];
    for (int oy = 0; oy < out.height(); ++oy) {
      const int y0 = 2 * oy;
      const int y1 = 2 * oy + 1 < h ? 2 * oy + 1 : h - 1;
      for (int ox = 0; ox < out.width(); ++ox) {
        const int x0 = 2 * ox;
        const int x1 = 2 * ox + 1 < w ? 2 * ox + 1 : w - 1;
        out.planes[c].at(ox, oy) = Downsample4<L>(p.at(x0, y0), p.at(x1, y0), p.at(x0, y1), p.at(x1, y1));
      }
    }
  }
  return out;
}

// B.7: one f32 rounding per product.
Plane Multiply(const Plane& a, const Plane& b) {
  Plane out(a.width, a.height);
  for (size_t i = 0; i < out.samples.size(); ++i) out.samples[i] = a.samples[i] * b.samples[i];
  return out;
}

// B.6, one line of `length` samples `stride` apart (a row or a column).
void BlurLine(const float* in, float* out, int length, ptrdiff_t stride) {
  BlurState<float> state = ZeroBlurState(0.0f);
  for (int n = -kBlurRadius + 1; n < length; ++n) {
    const int left = n - kBlurRadius - 1;
    const int right = n + kBlurRadius - 1;
    const float left_value = left >= 0 ? in[left * stride] : 0.0f;
    const float right_value = right < length ? in[right * stride] : 0.0f;
    const float o = BlurStep(state, left_value, right_value);
    if (n >= 0) out[n * stride] = o;
  }
}

// Horizontal pass over the rows, then vertical over the columns of its output.
// (Each column has its own state, so the fork's row-major sweep over all columns at
// once performs exactly these operations.)
Plane Blur(const Plane& in) {
  Plane horizontal(in.width, in.height);
  for (int y = 0; y < in.height; ++y) {
    BlurLine(&in.samples[static_cast<size_t>(y) * in.width], &horizontal.samples[static_cast<size_t>(y) * in.width],
             in.width, 1);
  }
  Plane out(in.width, in.height);
  for (int x = 0; x < in.width; ++x) {
    BlurLine(&horizontal.samples[x], &out.samples[x], in.height, in.width);
  }
  return out;
}

// Tests only (see ReferenceSumsWithForkAvx2Variant): the six sums again, with the
// edge map of the fork's AVX2 code. SSIM sums are the definition's.
void ForkAvx2EdgeSums(const Plane& img1, const Plane& mu1, const Plane& img2, const Plane& mu2,
                      const double (&definition)[kSumsPerChannel], double (&sums)[kSumsPerChannel]) {
  sums[kSumSsim] = definition[kSumSsim];
  sums[kSumSsim4] = definition[kSumSsim4];
  for (int k = kSumArtifact; k < kSumsPerChannel; ++k) sums[k] = 0.0;
  const size_t pixels = img1.samples.size();
  const size_t blocks_end = pixels - pixels % 8;  // its 8-lane loop; the tail is scalar
  for (size_t i = 0; i < pixels; ++i) {
    double edge;
    if (i < blocks_end) {
      // |img - mu| in f32 (exact in f64 afterwards), then the same f64 arithmetic.
      const float ed1 = std::fabs(img1.samples[i] - mu1.samples[i]);
      const float ed2 = std::fabs(img2.samples[i] - mu2.samples[i]);
      edge = EdgeDifference<L>(ed1, 0.0, ed2, 0.0);
    } else {
      edge = EdgeDifference<L>(img1.samples[i], mu1.samples[i], img2.samples[i], mu2.samples[i]);
    }
    double artifact, detail;
    SplitEdgeDifference<L>(edge, artifact, detail);
    sums[kSumArtifact] += artifact;
    sums[kSumArtifact4] += Quartic(artifact);
    sums[kSumDetail] += detail;
    sums[kSumDetail4] += Quartic(detail);
  }
}

// B.7-B.8 for one channel at one scale: the six sums, each in raster order.
// fork_avx2_sums: tests only, may be null.
void ChannelSums(const Plane& img1, const Plane& img2, double (&sums)[kSumsPerChannel],
                 double (*fork_avx2_sums)[kSumsPerChannel]) {
  const Plane mu1 = Blur(img1);
  const Plane mu2 = Blur(img2);
  const Plane s11 = Blur(Multiply(img1, img1));
  const Plane s22 = Blur(Multiply(img2, img2));
  const Plane s12 = Blur(Multiply(img1, img2));
  for (double& s : sums) s = 0.0;
  for (size_t i = 0; i < img1.samples.size(); ++i) {
    float num_m, num_s, den_s;
    SsimFactors<L>(mu1.samples[i], mu2.samples[i], s11.samples[i], s22.samples[i], s12.samples[i], num_m, num_s, den_s);
    const double d = SsimDissimilarity<L>(num_m, num_s, den_s);
    const double edge = EdgeDifference<L>(img1.samples[i], mu1.samples[i], img2.samples[i], mu2.samples[i]);
    double artifact, detail;
    SplitEdgeDifference<L>(edge, artifact, detail);
    sums[kSumSsim] += d;
    sums[kSumSsim4] += Quartic(d);
    sums[kSumArtifact] += artifact;
    sums[kSumArtifact4] += Quartic(artifact);
    sums[kSumDetail] += detail;
    sums[kSumDetail4] += Quartic(detail);
  }
  if (fork_avx2_sums != nullptr) ForkAvx2EdgeSums(img1, mu1, img2, mu2, sums, *fork_avx2_sums);
}

absl::StatusOr<FrameSums> Sums(const Frame& ref, const Frame& dis, YuvMatrix matrix, FrameSums* fork_avx2) {
  if (absl::Status s = CheckSsimulacra2Pair(ref, dis); !s.ok()) return s;
  const FrameGeometry& g = ref.geometry();
  const YuvToRgbCoefficients k = MakeYuvToRgbCoefficients(matrix, g.format.bit_depth);

  FrameSums sums;
  sums.width = g.width;
  sums.height = g.height;
  sums.num_scales = ScaleCount(g.width, g.height);
  if (fork_avx2 != nullptr) *fork_avx2 = sums;

  Image3 ref_linear = ToLinearRgb(ref, k);
  Image3 dis_linear = ToLinearRgb(dis, k);
  for (int scale = 0; scale < sums.num_scales; ++scale) {
    if (scale > 0) {
      ref_linear = Downsample(ref_linear);
      dis_linear = Downsample(dis_linear);
    }
    const Image3 ref_xyb = ToXyb(ref_linear);
    const Image3 dis_xyb = ToXyb(dis_linear);
    for (int c = 0; c < kChannels; ++c) {
      ChannelSums(ref_xyb.planes[c], dis_xyb.planes[c], sums.sums[scale][c],
                  fork_avx2 != nullptr ? &fork_avx2->sums[scale][c] : nullptr);
    }
  }
  return sums;
}

}  // namespace

absl::Status CheckSsimulacra2Input(const FrameGeometry& geometry) {
  if (absl::Status s = ValidateGeometry(geometry); !s.ok()) return s;
  if (geometry.format.layout == ChromaLayout::k400) {
    return absl::InvalidArgumentError(
        "ssimulacra2 converts YUV to RGB and needs chroma planes; 4:0:0 (gray) input has "
        "none");
  }
  if (geometry.width < kMinScaleSide || geometry.height < kMinScaleSide) {
    return absl::InvalidArgumentError(absl::StrCat("ssimulacra2 needs frames of at least ", kMinScaleSide, "x",
                                                   kMinScaleSide, "; got ", geometry.width, "x", geometry.height));
  }
  return absl::OkStatus();
}

absl::Status CheckSsimulacra2Pair(const Frame& ref, const Frame& dis) {
  if (ref.geometry() != dis.geometry()) {
    return absl::InvalidArgumentError(absl::StrCat("ssimulacra2: reference is ", GeometryDescription(ref.geometry()),
                                                   " but distorted is ", GeometryDescription(dis.geometry())));
  }
  return CheckSsimulacra2Input(ref.geometry());
}

absl::StatusOr<FrameSums> ReferenceSums(const Frame& ref, const Frame& dis, YuvMatrix matrix) {
  return Sums(ref, dis, matrix, nullptr);
}

absl::StatusOr<FrameSums> ReferenceSumsWithForkAvx2Variant(const Frame& ref, const Frame& dis, YuvMatrix matrix,
                                                           FrameSums* fork_avx2) {
  return Sums(ref, dis, matrix, fork_avx2);
}

absl::StatusOr<double> ReferenceScore(const Frame& ref, const Frame& dis, YuvMatrix matrix) {
  absl::StatusOr<FrameSums> sums = ReferenceSums(ref, dis, matrix);
  if (!sums.ok()) return sums.status();
  return ScoreFromSums(*sums);
}

}  // namespace ssimulacra2
}  // namespace exactq
