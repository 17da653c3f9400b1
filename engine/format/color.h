// Colour description of YUV samples: the range the values use and the matrix that
// relates them to RGB.
//
// Neither changes how pixels are stored, so they are not part of PixelFormat; they
// matter only to metrics that convert to RGB (SSIMULACRA2). Y4M files may tag the
// range (XCOLORRANGE) but never the matrix. The service's default is BT.709 limited
// range (docs/design.md), and options given in a request win over tags in a file.
//
//   absl::StatusOr<ColorMatrix> matrix = ParseColorMatrix("bt709");
//   ColorRangeName(ColorRange::kFull);  // "full"

#ifndef EXACTQ_ENGINE_FORMAT_COLOR_H_
#define EXACTQ_ENGINE_FORMAT_COLOR_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace exactq {

enum class ColorRange {
  kLimited,  // "tv"/"mpeg": luma 16..235, chroma 16..240 (scaled by 2^(bpc-8))
  kFull,     // "pc"/"jpeg": 0..2^bpc-1
};

enum class ColorMatrix {
  kBt709,
  kBt601,
  // BT.2020 non-constant luminance: named so requests can carry it, but no metric
  // converts with it yet (docs/design.md: BT.2020 later).
  kBt2020Ncl,
};

// "limited" or "full".
const char* ColorRangeName(ColorRange range);
// Accepts "limited"/"tv"/"mpeg" and "full"/"pc"/"jpeg" (ffmpeg's spellings), any case.
absl::StatusOr<ColorRange> ParseColorRange(absl::string_view name);

// "bt709", "bt601" or "bt2020nc".
const char* ColorMatrixName(ColorMatrix matrix);
// Accepts the names above and ffmpeg's aliases for BT.601 ("smpte170m", "bt470bg").
absl::StatusOr<ColorMatrix> ParseColorMatrix(absl::string_view name);

}  // namespace exactq

#endif  // EXACTQ_ENGINE_FORMAT_COLOR_H_
