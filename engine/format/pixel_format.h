// PixelFormat: the chroma layout and bit depth of planar YUV frames.
//
// ExactQ scores planar YUV only: 4:0:0 (luma only), 4:2:0, 4:2:2 and 4:4:4, at any
// depth from 8 to 16 bits per sample. Samples above 8 bits travel as 16-bit
// little-endian words (the layout ffmpeg calls "...le"), so a PixelFormat is fully
// described by its layout and depth. Names follow ffmpeg ("yuv420p", "yuv420p10le",
// "gray", "gray12le") so users can pass what `ffmpeg -pix_fmt` prints; depths ffmpeg
// has no name for (11, 13, 15) get the analogous name ("yuv444p11le").
//
//   absl::StatusOr<PixelFormat> format = ParsePixelFormat("yuv420p10le");
//   // format->layout == ChromaLayout::k420, format->bit_depth == 10
//   PixelFormatName(*format);  // "yuv420p10le"

#ifndef EXACTQ_ENGINE_FORMAT_PIXEL_FORMAT_H_
#define EXACTQ_ENGINE_FORMAT_PIXEL_FORMAT_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace exactq {

// How the two chroma planes are subsampled relative to luma.
enum class ChromaLayout {
  k400,  // luma only
  k420,  // chroma halved horizontally and vertically
  k422,  // chroma halved horizontally
  k444,  // no subsampling
};

inline constexpr int kMinBitDepth = 8;
inline constexpr int kMaxBitDepth = 16;

struct PixelFormat {
  ChromaLayout layout = ChromaLayout::k420;
  int bit_depth = 8;  // bits per sample, kMinBitDepth..kMaxBitDepth

  friend bool operator==(const PixelFormat& a, const PixelFormat& b) {
    return a.layout == b.layout && a.bit_depth == b.bit_depth;
  }
  friend bool operator!=(const PixelFormat& a, const PixelFormat& b) { return !(a == b); }
};

// 1 for the luma-only layout, otherwise 3 (Y, Cb, Cr).
int PlaneCount(ChromaLayout layout);

// log2 of the chroma subsampling factor along x and y (0 or 1).
int ChromaShiftX(ChromaLayout layout);
int ChromaShiftY(ChromaLayout layout);

// "400", "420", "422" or "444".
const char* ChromaLayoutName(ChromaLayout layout);

// InvalidArgument when bit_depth is outside 8..16.
absl::Status ValidatePixelFormat(const PixelFormat& format);

// The ffmpeg-style name: "yuv420p", "yuv422p10le", "gray", "gray16le".
// The format must be valid.
std::string PixelFormatName(const PixelFormat& format);

// Parses an ffmpeg-style name. Big-endian ("...be"), packed, semi-planar and alpha
// formats are rejected with InvalidArgument naming the input.
absl::StatusOr<PixelFormat> ParsePixelFormat(absl::string_view name);

}  // namespace exactq

#endif  // EXACTQ_ENGINE_FORMAT_PIXEL_FORMAT_H_
