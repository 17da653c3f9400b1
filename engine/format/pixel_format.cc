#include "engine/format/pixel_format.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace exactq {
namespace {

// The part of an ffmpeg name before the depth suffix, per layout.
const char* NamePrefix(ChromaLayout layout) {
  switch (layout) {
    case ChromaLayout::k400:
      return "gray";
    case ChromaLayout::k420:
      return "yuv420p";
    case ChromaLayout::k422:
      return "yuv422p";
    case ChromaLayout::k444:
      return "yuv444p";
  }
  return "";
}

constexpr ChromaLayout kAllLayouts[] = {ChromaLayout::k400, ChromaLayout::k420, ChromaLayout::k422, ChromaLayout::k444};

}  // namespace

int PlaneCount(ChromaLayout layout) { return layout == ChromaLayout::k400 ? 1 : 3; }

int ChromaShiftX(ChromaLayout layout) { return (layout == ChromaLayout::k420 || layout == ChromaLayout::k422) ? 1 : 0; }

int ChromaShiftY(ChromaLayout layout) { return layout == ChromaLayout::k420 ? 1 : 0; }

const char* ChromaLayoutName(ChromaLayout layout) {
  switch (layout) {
    case ChromaLayout::k400:
      return "400";
    case ChromaLayout::k420:
      return "420";
    case ChromaLayout::k422:
      return "422";
    case ChromaLayout::k444:
      return "444";
  }
  return "?";
}

absl::Status ValidatePixelFormat(const PixelFormat& format) {
  if (format.bit_depth < kMinBitDepth || format.bit_depth > kMaxBitDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat("bit depth ", format.bit_depth, " is outside ", kMinBitDepth, "..", kMaxBitDepth));
  }
  return absl::OkStatus();
}

std::string PixelFormatName(const PixelFormat& format) {
  if (format.bit_depth == 8) return NamePrefix(format.layout);
  return absl::StrCat(NamePrefix(format.layout), format.bit_depth, "le");
}

absl::StatusOr<PixelFormat> ParsePixelFormat(absl::string_view name) {
  const std::string lowered = absl::AsciiStrToLower(name);
  for (ChromaLayout layout : kAllLayouts) {
    absl::string_view rest = lowered;
    if (!absl::ConsumePrefix(&rest, NamePrefix(layout))) continue;
    if (rest.empty()) return PixelFormat{layout, 8};
    if (absl::EndsWith(rest, "be")) {
      return absl::InvalidArgumentError(
          absl::StrCat("pixel format '", name, "' is big-endian; only little-endian is supported"));
    }
    int depth = 0;
    // "yuv420p8le" is not an ffmpeg name: 8-bit samples are single bytes.
    if (absl::ConsumeSuffix(&rest, "le") && (rest.size() == 1 || rest.size() == 2) && rest[0] != '0' &&
        absl::ascii_isdigit(static_cast<unsigned char>(rest[0])) && absl::SimpleAtoi(rest, &depth) && depth > 8 &&
        depth <= kMaxBitDepth) {
      return PixelFormat{layout, depth};
    }
    break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown pixel format '", name,
                   "' (expected planar YUV like yuv420p, yuv422p10le, yuv444p16le, gray, gray10le)"));
}

}  // namespace exactq
