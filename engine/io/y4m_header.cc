#include "engine/io/y4m_header.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace exactq {
namespace {

constexpr absl::string_view kMagic = "YUV4MPEG2";

absl::Status TagError(absl::string_view tag, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("Y4M header tag '", tag, "': ", problem));
}

// Digits only: no sign, no spaces, no empty string (SimpleAtoi would allow some).
bool ParseDecimal(absl::string_view text, uint32_t* value) {
  if (text.empty() || text.size() > 10) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return absl::SimpleAtoi(text, value);
}

bool ParseRatio(absl::string_view text, Y4mRatio* ratio) {
  const std::vector<absl::string_view> parts = absl::StrSplit(text, ':');
  return parts.size() == 2 && ParseDecimal(parts[0], &ratio->numerator) && ParseDecimal(parts[1], &ratio->denominator);
}

absl::Status ParseDimension(absl::string_view tag, int* dimension) {
  uint32_t value = 0;
  if (!ParseDecimal(tag.substr(1), &value) || value < 1 || value > static_cast<uint32_t>(kMaxFrameDimension)) {
    return TagError(tag, absl::StrCat("expected an integer in 1..", kMaxFrameDimension));
  }
  *dimension = static_cast<int>(value);
  return absl::OkStatus();
}

}  // namespace

std::string Y4mColorspaceName(const PixelFormat& format) {
  if (format.bit_depth == 8) {
    switch (format.layout) {
      case ChromaLayout::k400:
        return "mono";
      case ChromaLayout::k420:
        return "420jpeg";  // ffmpeg's choice when the chroma siting is unspecified
      case ChromaLayout::k422:
        return "422";
      case ChromaLayout::k444:
        return "444";
    }
  }
  if (format.layout == ChromaLayout::k400) return absl::StrCat("mono", format.bit_depth);
  return absl::StrCat(ChromaLayoutName(format.layout), "p", format.bit_depth);
}

absl::StatusOr<PixelFormat> ParseY4mColorspace(absl::string_view name) {
  const std::string lowered = absl::AsciiStrToLower(name);
  // 8-bit names; the 4:2:0 variants differ only in chroma siting, which no metric here
  // uses (the fork's SSIMULACRA2 takes the nearest chroma sample).
  if (lowered == "420jpeg" || lowered == "420mpeg2" || lowered == "420paldv" || lowered == "420") {
    return PixelFormat{ChromaLayout::k420, 8};
  }
  if (lowered == "422") return PixelFormat{ChromaLayout::k422, 8};
  if (lowered == "444") return PixelFormat{ChromaLayout::k444, 8};
  if (lowered == "mono") return PixelFormat{ChromaLayout::k400, 8};

  absl::string_view depth_text = lowered;
  ChromaLayout layout = ChromaLayout::k420;
  if (absl::ConsumePrefix(&depth_text, "mono")) {
    layout = ChromaLayout::k400;
  } else if (absl::ConsumePrefix(&depth_text, "420p")) {
    layout = ChromaLayout::k420;
  } else if (absl::ConsumePrefix(&depth_text, "422p")) {
    layout = ChromaLayout::k422;
  } else if (absl::ConsumePrefix(&depth_text, "444p")) {
    layout = ChromaLayout::k444;
  } else {
    depth_text = "";
  }
  uint32_t depth = 0;
  if (depth_text.size() <= 2 && ParseDecimal(depth_text, &depth) && depth > 8 &&
      depth <= static_cast<uint32_t>(kMaxBitDepth) && depth_text[0] != '0') {
    return PixelFormat{layout, static_cast<int>(depth)};
  }
  return absl::InvalidArgumentError(
      absl::StrCat("colour space '", name,
                   "' is not supported (planar 420jpeg/420mpeg2/420paldv/420/422/444/mono at 8 bits, "
                   "420pN/422pN/444pN/monoN for N in 9..16)"));
}

absl::StatusOr<Y4mHeader> ParseY4mHeader(absl::string_view line) {
  const std::vector<absl::string_view> tokens = absl::StrSplit(line, ' ', absl::SkipEmpty());
  if (tokens.empty() || tokens[0] != kMagic) {
    return absl::InvalidArgumentError(absl::StrCat("not a Y4M stream: the header does not start with ", kMagic));
  }
  Y4mHeader header;
  bool has_width = false;
  bool has_height = false;
  std::optional<PixelFormat> c_format;
  std::optional<PixelFormat> xyscss_format;
  for (size_t i = 1; i < tokens.size(); ++i) {
    const absl::string_view tag = tokens[i];
    const absl::string_view value = tag.substr(1);
    switch (tag[0]) {
      case 'W':
        if (absl::Status s = ParseDimension(tag, &header.geometry.width); !s.ok()) return s;
        has_width = true;
        break;
      case 'H':
        if (absl::Status s = ParseDimension(tag, &header.geometry.height); !s.ok()) return s;
        has_height = true;
        break;
      case 'F':
        if (!ParseRatio(value, &header.frame_rate) ||
            (header.frame_rate.numerator == 0) != (header.frame_rate.denominator == 0)) {
          return TagError(tag, "expected a frame rate <num>:<den>, or 0:0 for unknown");
        }
        break;
      case 'A':
        if (!ParseRatio(value, &header.pixel_aspect)) {
          return TagError(tag, "expected a pixel aspect <num>:<den>");
        }
        break;
      case 'I':
        if (value.size() != 1 || absl::string_view("ptbm?").find(value[0]) == absl::string_view::npos) {
          return TagError(tag, "expected interlacing p, t, b, m or ?");
        }
        header.interlace = value[0];
        break;
      case 'C': {
        absl::StatusOr<PixelFormat> format = ParseY4mColorspace(value);
        if (!format.ok()) return TagError(tag, format.status().message());
        c_format = *format;
        break;
      }
      case 'X': {
        absl::string_view extension = value;
        if (absl::ConsumePrefix(&extension, "YSCSS=")) {
          absl::StatusOr<PixelFormat> format = ParseY4mColorspace(extension);
          if (!format.ok()) return TagError(tag, format.status().message());
          xyscss_format = *format;
        } else if (absl::ConsumePrefix(&extension, "COLORRANGE=")) {
          if (extension == "LIMITED") {
            header.color_range = ColorRange::kLimited;
          } else if (extension == "FULL") {
            header.color_range = ColorRange::kFull;
          } else {
            return TagError(tag, "expected XCOLORRANGE=LIMITED or XCOLORRANGE=FULL");
          }
        }
        // Other X tags are application extensions: ignored by design.
        break;
      }
      default:
        return TagError(tag, "unknown tag (expected W, H, F, I, A, C or X)");
    }
  }
  if (!has_width) return absl::InvalidArgumentError("Y4M header has no W (width) tag");
  if (!has_height) return absl::InvalidArgumentError("Y4M header has no H (height) tag");
  if (c_format && xyscss_format && *c_format != *xyscss_format) {
    return absl::InvalidArgumentError(absl::StrCat("Y4M header tags disagree: C says ", PixelFormatName(*c_format),
                                                   ", XYSCSS says ", PixelFormatName(*xyscss_format)));
  }
  // The Y4M default colour space is 4:2:0 8-bit (420jpeg).
  header.geometry.format = c_format ? *c_format : xyscss_format.value_or(PixelFormat{ChromaLayout::k420, 8});
  if (absl::Status s = ValidateGeometry(header.geometry); !s.ok()) return s;
  return header;
}

std::string FormatY4mHeader(const Y4mHeader& header) {
  const std::string colorspace = Y4mColorspaceName(header.geometry.format);
  std::string line =
      absl::StrCat(kMagic, " W", header.geometry.width, " H", header.geometry.height, " F", header.frame_rate.numerator,
                   ":", header.frame_rate.denominator, " I", std::string(1, header.interlace), " A",
                   header.pixel_aspect.numerator, ":", header.pixel_aspect.denominator, " C", colorspace);
  // ffmpeg adds the mjpegtools spelling for every colour space but mono.
  if (header.geometry.format.layout != ChromaLayout::k400) {
    absl::StrAppend(&line, " XYSCSS=", absl::AsciiStrToUpper(colorspace));
  }
  if (header.color_range) {
    absl::StrAppend(&line, " XCOLORRANGE=", *header.color_range == ColorRange::kFull ? "FULL" : "LIMITED");
  }
  line += '\n';
  return line;
}

}  // namespace exactq
