// FrameGeometry: a frame's size and pixel format, and the byte layout that follows.
//
// Every frame in ExactQ uses one layout, the "wire layout", shared by Y4M, raw .yuv
// files and the gRPC stream: planes Y, Cb, Cr one after another, rows packed without
// padding, one byte per sample at 8 bits and a 16-bit little-endian word above. Odd
// sizes round chroma up (a 17x33 4:2:0 frame has 9x17 chroma planes), as ffmpeg and
// the libvmaf fork do. The geometry is all a reader needs to find a sample.
//
//   FrameGeometry geometry{1920, 1080, {ChromaLayout::k420, 10}};
//   if (absl::Status s = ValidateGeometry(geometry); !s.ok()) return s;
//   geometry.plane_width(1);  // 960
//   geometry.frame_bytes();   // (1920*1080 + 2*960*540) * 2

#ifndef EXACTQ_ENGINE_FORMAT_FRAME_GEOMETRY_H_
#define EXACTQ_ENGINE_FORMAT_FRAME_GEOMETRY_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "engine/format/pixel_format.h"

namespace exactq {

// The largest width or height accepted. Twice 8K: far above what farms send, small
// enough that every plane size fits comfortably in 32 bits of samples.
inline constexpr int kMaxFrameDimension = 16384;

struct FrameGeometry {
  int width = 0;
  int height = 0;
  PixelFormat format;

  int plane_count() const { return PlaneCount(format.layout); }

  // Size of plane 0 (Y), 1 (Cb) or 2 (Cr); chroma rounds up for odd luma sizes.
  int plane_width(int plane) const {
    const int shift = plane == 0 ? 0 : ChromaShiftX(format.layout);
    return (width + (1 << shift) - 1) >> shift;
  }
  int plane_height(int plane) const {
    const int shift = plane == 0 ? 0 : ChromaShiftY(format.layout);
    return (height + (1 << shift) - 1) >> shift;
  }
  size_t plane_samples(int plane) const { return static_cast<size_t>(plane_width(plane)) * plane_height(plane); }

  int bytes_per_sample() const { return format.bit_depth > 8 ? 2 : 1; }
  // 2^bit_depth - 1: the largest legal sample value and libvmaf's PSNR peak.
  uint32_t max_sample_value() const { return (uint32_t{1} << format.bit_depth) - 1; }

  size_t plane_bytes(int plane) const { return plane_samples(plane) * bytes_per_sample(); }
  // Where the plane starts in the wire layout.
  size_t plane_offset(int plane) const;
  size_t frame_bytes() const;

  friend bool operator==(const FrameGeometry& a, const FrameGeometry& b) {
    return a.width == b.width && a.height == b.height && a.format == b.format;
  }
  friend bool operator!=(const FrameGeometry& a, const FrameGeometry& b) { return !(a == b); }
};

// InvalidArgument naming the field when width or height is outside
// 1..kMaxFrameDimension or the bit depth outside 8..16.
absl::Status ValidateGeometry(const FrameGeometry& geometry);

// "1920x1080 yuv420p10le", for messages and logs.
std::string GeometryDescription(const FrameGeometry& geometry);

// "Y", "Cb" or "Cr".
const char* PlaneName(int plane);

}  // namespace exactq

#endif  // EXACTQ_ENGINE_FORMAT_FRAME_GEOMETRY_H_
