#include "engine/scale/bicubic_scaler_reference.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/scale/bicubic_scaler.h"

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

absl::StatusOr<Frame> ScaleBicubicReference(const Frame& source, const FrameGeometry& target) {
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
