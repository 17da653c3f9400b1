#include "engine/scale/bicubic_scaler.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace exactq {
namespace scale {
namespace {

int64_t FloorDiv(int64_t a, int64_t b) {  // b > 0
  const int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

uint32_t Sample(const Frame& f, int plane, size_t index) {
  return f.geometry().bytes_per_sample() == 1 ? f.plane8(plane)[index] : f.plane16(plane)[index];
}

void SetSample(Frame& f, int plane, size_t index, uint32_t value) {
  if (f.geometry().bytes_per_sample() == 1) {
    f.mutable_plane8(plane)[index] = static_cast<uint8_t>(value);
  } else {
    f.mutable_plane16(plane)[index] = static_cast<uint16_t>(value);
  }
}

// One plane: horizontal sums, then vertical sums, one rounding and a clamp.
void ScalePlane(const Frame& source, int plane, Frame& target) {
  const FrameGeometry& sg = source.geometry();
  const FrameGeometry& tg = target.geometry();
  const int sw = sg.plane_width(plane), sh = sg.plane_height(plane);
  const int tw = tg.plane_width(plane), th = tg.plane_height(plane);
  const AxisTaps h = BicubicTaps(sw, tw);
  const AxisTaps v = BicubicTaps(sh, th);
  std::vector<int64_t> rows(static_cast<size_t>(sh) * tw);  // source rows at the target width
  for (int y = 0; y < sh; ++y) {
    for (int x = 0; x < tw; ++x) {
      int64_t sum = 0;
      for (int k = 0; k < h.taps; ++k) {
        const int sx = std::clamp(h.first[x] + k, 0, sw - 1);
        sum += static_cast<int64_t>(Sample(source, plane, static_cast<size_t>(y) * sw + sx)) *
               h.weight[static_cast<size_t>(x) * h.taps + k];
      }
      rows[static_cast<size_t>(y) * tw + x] = sum;
    }
  }
  const int64_t max_value = (int64_t{1} << sg.format.bit_depth) - 1;
  const int64_t half = int64_t{1} << (2 * kTapBits - 1);
  for (int y = 0; y < th; ++y) {
    for (int x = 0; x < tw; ++x) {
      int64_t sum = 0;
      for (int k = 0; k < v.taps; ++k) {
        const int sy = std::clamp(v.first[y] + k, 0, sh - 1);
        sum += rows[static_cast<size_t>(sy) * tw + x] * v.weight[static_cast<size_t>(y) * v.taps + k];
      }
      const int64_t value = FloorDiv(sum + half, int64_t{1} << (2 * kTapBits));
      SetSample(target, plane, static_cast<size_t>(y) * tw + x,
                static_cast<uint32_t>(std::clamp<int64_t>(value, 0, max_value)));
    }
  }
}

}  // namespace

double BicubicKernel(double t) {
  t = std::fabs(t);
  if (t < 1.0) return (42.0 * t * t * t - 72.0 * t * t + 30.0) / 30.0;
  if (t < 2.0) return (-18.0 * t * t * t + 90.0 * t * t - 144.0 * t + 72.0) / 30.0;
  return 0.0;
}

AxisTaps BicubicTaps(int src, int dst) {
  AxisTaps axis;
  axis.src = src;
  axis.dst = dst;
  const bool downscale = src > dst;
  // Support radius 2 in source samples, 2 * src / dst when the kernel is stretched.
  const int radius = downscale ? static_cast<int>((2 * static_cast<int64_t>(src) + dst - 1) / dst) : 2;
  axis.taps = 2 * radius;
  axis.first.resize(static_cast<size_t>(dst));
  axis.weight.resize(static_cast<size_t>(dst) * axis.taps);
  const int64_t scale_denominator = 2 * static_cast<int64_t>(std::max(src, dst));
  std::vector<double> k(static_cast<size_t>(axis.taps));
  for (int i = 0; i < dst; ++i) {
    // x = x_num / (2 dst): the source position of output i.
    const int64_t x_num = (2 * static_cast<int64_t>(i) + 1) * src - dst;
    const int64_t floor_x = FloorDiv(x_num, 2 * static_cast<int64_t>(dst));
    const int64_t first = floor_x - radius + 1;
    axis.first[static_cast<size_t>(i)] = static_cast<int32_t>(first);
    double total = 0.0;
    for (int j = 0; j < axis.taps; ++j) {
      const int64_t distance_num = std::llabs(2 * (first + j) * dst - x_num);
      k[static_cast<size_t>(j)] = BicubicKernel(static_cast<double>(distance_num) / static_cast<double>(scale_denominator));
      total += k[static_cast<size_t>(j)];
    }
    int32_t* w = &axis.weight[static_cast<size_t>(i) * axis.taps];
    int32_t sum = 0;
    int largest = 0;
    for (int j = 0; j < axis.taps; ++j) {
      w[j] = static_cast<int32_t>(std::lround(k[static_cast<size_t>(j)] / total * (1 << kTapBits)));
      sum += w[j];
      if (k[static_cast<size_t>(j)] > k[static_cast<size_t>(largest)]) largest = j;
    }
    w[largest] += (1 << kTapBits) - sum;
  }
  return axis;
}

absl::StatusOr<Frame> ScaleBicubic(const Frame& source, const FrameGeometry& target) {
  const FrameGeometry& sg = source.geometry();
  if (absl::Status s = ValidateGeometry(target); !s.ok()) return s;
  if (!(sg.format == target.format)) {
    return absl::InvalidArgumentError(absl::StrCat("scale: the source is ", GeometryDescription(sg),
                                                   " but the target is ", GeometryDescription(target),
                                                   ": the pixel format must be the same"));
  }
  absl::StatusOr<Frame> scaled = Frame::Create(target);
  if (!scaled.ok()) return scaled.status();
  for (int p = 0; p < sg.plane_count(); ++p) ScalePlane(source, p, *scaled);
  return scaled;
}

}  // namespace scale
}  // namespace exactq
