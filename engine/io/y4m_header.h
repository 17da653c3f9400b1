// Y4mHeader: the stream header of a YUV4MPEG2 (.y4m) file, parsed and formatted.
//
// A Y4M stream is one header line, "YUV4MPEG2" followed by space-separated tags, then
// frames that each start with a "FRAME" line. The tags read here:
//   W<width> H<height>          required
//   F<num>:<den>                frame rate (0:0 = unknown)
//   I<p|t|b|m|?>                interlacing (kept, not interpreted: frames are scored as stored)
//   A<num>:<den>                pixel aspect (0:0 = unknown)
//   C<colorspace>               pixel format; ffmpeg's names, including its >8-bit
//                               extensions: 420jpeg 420mpeg2 420paldv 420 422 444 mono,
//                               420p10 422p12 444p16 mono10 ... (absent: 420jpeg)
//   XYSCSS=<COLORSPACE>         mjpegtools' spelling of C; used when C is absent
//   XCOLORRANGE=<LIMITED|FULL>  sample range
// Other X tags are vendor extensions and are ignored; any other tag letter is an error,
// so a file is never scored under a misread geometry.
//
// FormatY4mHeader writes tags exactly as ffmpeg's muxer does, so reading an ffmpeg
// file and writing it back reproduces its bytes.

#ifndef EXACTQ_ENGINE_IO_Y4M_HEADER_H_
#define EXACTQ_ENGINE_IO_Y4M_HEADER_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/format/color.h"
#include "engine/format/frame_geometry.h"

namespace exactq {

// A ratio as Y4M writes it; 0:0 means "unknown".
struct Y4mRatio {
  uint32_t numerator = 0;
  uint32_t denominator = 0;

  bool known() const { return numerator != 0 && denominator != 0; }
  friend bool operator==(const Y4mRatio& a, const Y4mRatio& b) {
    return a.numerator == b.numerator && a.denominator == b.denominator;
  }
};

struct Y4mHeader {
  FrameGeometry geometry;
  Y4mRatio frame_rate;
  Y4mRatio pixel_aspect;
  char interlace = '?';                   // 'p' progressive, 't'/'b' top/bottom field first, 'm' mixed
  std::optional<ColorRange> color_range;  // present only when the file tags it
};

// Parses the header line without its trailing '\n'. InvalidArgument naming the tag
// for a malformed or unsupported one; the geometry is validated.
absl::StatusOr<Y4mHeader> ParseY4mHeader(absl::string_view line);

// The header line, '\n' included, as ffmpeg writes it:
// "YUV4MPEG2 W176 H144 F25:1 Ip A1:1 C420jpeg XYSCSS=420JPEG XCOLORRANGE=LIMITED\n".
std::string FormatY4mHeader(const Y4mHeader& header);

// The C tag's value for a format ("420jpeg", "422p10", "mono12") and back. 8-bit
// 4:2:0 siting variants (420mpeg2, 420paldv, 420) all parse to yuv420p.
std::string Y4mColorspaceName(const PixelFormat& format);
absl::StatusOr<PixelFormat> ParseY4mColorspace(absl::string_view name);

}  // namespace exactq

#endif  // EXACTQ_ENGINE_IO_Y4M_HEADER_H_
