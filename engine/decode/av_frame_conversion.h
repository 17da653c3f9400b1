// Translation of FFmpeg's decoded pictures into engine Frames: pixel format, colour
// description and the planes, copied row by row into the wire layout.
//
// Only formats that are already planar YUV (or gray) with one sample per byte or per
// little-endian 16-bit word are taken; anything else (semi-planar, packed, RGB,
// big-endian, alpha, 4:1:1, 4:4:0) is refused by name rather than converted, so a
// decoded picture reaches the metrics with the decoder's exact samples. Colour that no
// metric defines (BT.2020 primaries or matrix, PQ, HLG) is refused the same way.
// Internal to engine/decode: the only header here that names FFmpeg types.

#ifndef EXACTQ_ENGINE_DECODE_AV_FRAME_CONVERSION_H_
#define EXACTQ_ENGINE_DECODE_AV_FRAME_CONVERSION_H_

#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/format/color.h"
#include "engine/format/frame.h"
#include "engine/format/pixel_format.h"

extern "C" {
#include <libavutil/frame.h>
#include <libavutil/pixfmt.h>
}

namespace exactq::decode::internal {

// Unimplemented naming FFmpeg's format ("nv12", "p010le", "rgb24") when ExactQ cannot
// take its samples as they are.
absl::StatusOr<PixelFormat> PixelFormatFromAv(AVPixelFormat format);

struct AvColour {
  std::optional<ColorRange> range;    // unset: the bitstream does not say
  std::optional<ColorMatrix> matrix;  // unset: the bitstream does not say
};

// The picture's range and matrix; Unimplemented naming the primaries, transfer or
// matrix when the metrics do not define it (BT.2020, PQ, HLG, SMPTE 240M, ...).
// `format` decides the range of the "yuvj" formats.
absl::StatusOr<AvColour> ColourFromAv(const AVFrame& picture);

// Copies the planes of `picture` (whose format maps to `geometry`) into *frame.
absl::Status CopyAvFrame(const AVFrame& picture, const FrameGeometry& geometry, Frame* frame);

// Copies a picture the GPU decoder produced, downloaded to the host in the decoder's
// surface format, into *frame in `geometry` (the software decoder's planar format for
// the same stream): NV12 (8-bit 4:2:0) is de-interleaved; P010/P016 (4:2:0) and
// YUV444P16 carry their samples in the top bits of 16-bit words and are shifted down to
// `geometry`'s depth; YUV444P is copied. A sample with a bit set below its depth means
// the surface does not hold what the decoder was asked for: Internal, never rounded
// away. Other surface formats are Unimplemented by name.
absl::Status CopyGpuSurface(const AVFrame& surface, const FrameGeometry& geometry, Frame* frame);

// Where plane p of `geometry` lies in a GPU decoder surface of `format` (its software
// format): plane p's sample x of row y is the `surface_plane`'s sample
// step * x + offset of row y, shifted right by `shift` (16-bit words with the samples in
// their top bits; 0 at 8 bits). The one definition CopyGpuSurface and the device's
// conversion (device_surfaces.h) follow. Unimplemented by name, as CopyGpuSurface.
struct SurfacePlane {
  int surface_plane;
  int step;
  int offset;
  int shift;
};
absl::StatusOr<std::vector<SurfacePlane>> SurfaceLayout(AVPixelFormat format, const FrameGeometry& geometry);

// Internal naming the surface format: a sample with a bit set below `bit_depth`.
absl::Status SurfaceBitsError(AVPixelFormat format, int bit_depth);

}  // namespace exactq::decode::internal

#endif  // EXACTQ_ENGINE_DECODE_AV_FRAME_CONVERSION_H_
