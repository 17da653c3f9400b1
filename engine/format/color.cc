#include "engine/format/color.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace exactq {

const char* ColorRangeName(ColorRange range) { return range == ColorRange::kFull ? "full" : "limited"; }

absl::StatusOr<ColorRange> ParseColorRange(absl::string_view name) {
  const std::string lowered = absl::AsciiStrToLower(name);
  if (lowered == "limited" || lowered == "tv" || lowered == "mpeg") {
    return ColorRange::kLimited;
  }
  if (lowered == "full" || lowered == "pc" || lowered == "jpeg") {
    return ColorRange::kFull;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown colour range '", name, "' (expected limited or full)"));
}

const char* ColorMatrixName(ColorMatrix matrix) {
  switch (matrix) {
    case ColorMatrix::kBt709:
      return "bt709";
    case ColorMatrix::kBt601:
      return "bt601";
    case ColorMatrix::kBt2020Ncl:
      return "bt2020nc";
  }
  return "?";
}

absl::StatusOr<ColorMatrix> ParseColorMatrix(absl::string_view name) {
  const std::string lowered = absl::AsciiStrToLower(name);
  if (lowered == "bt709") return ColorMatrix::kBt709;
  if (lowered == "bt601" || lowered == "smpte170m" || lowered == "bt470bg") {
    return ColorMatrix::kBt601;
  }
  if (lowered == "bt2020nc") return ColorMatrix::kBt2020Ncl;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown colour matrix '", name, "' (expected bt709, bt601 or bt2020nc)"));
}

}  // namespace exactq
