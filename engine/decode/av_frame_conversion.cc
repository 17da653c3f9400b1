#include "engine/decode/av_frame_conversion.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"

extern "C" {
#include <libavutil/pixdesc.h>
}

namespace exactq::decode::internal {
namespace {

std::string FormatName(AVPixelFormat format) {
  const char* name = av_get_pix_fmt_name(format);
  return name != nullptr ? name : absl::StrCat("pixel format ", static_cast<int>(format));
}

bool IsJpegRangeFormat(AVPixelFormat format) {
  switch (format) {
    case AV_PIX_FMT_YUVJ420P:
    case AV_PIX_FMT_YUVJ422P:
    case AV_PIX_FMT_YUVJ444P:
      return true;
    default:
      return false;
  }
}

}  // namespace

absl::StatusOr<PixelFormat> PixelFormatFromAv(AVPixelFormat format) {
  const AVPixFmtDescriptor* desc = av_pix_fmt_desc_get(format);
  const auto refuse = [&](const char* why) {
    return absl::UnimplementedError(absl::StrCat("decoded pixel format ", FormatName(format), " is not supported (",
                                                 why,
                                                 "); ExactQ scores planar YUV or gray, 8 to 16 bits, little-endian"));
  };
  if (desc == nullptr) return refuse("unknown");
  if (desc->flags & (AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_BITSTREAM | AV_PIX_FMT_FLAG_PAL)) {
    return refuse("not a plain picture");
  }
  if (desc->flags & AV_PIX_FMT_FLAG_RGB) return refuse("RGB");
  if (desc->flags & AV_PIX_FMT_FLAG_ALPHA) return refuse("alpha plane");
  if (desc->flags & AV_PIX_FMT_FLAG_FLOAT) return refuse("floating point");
  if (desc->flags & AV_PIX_FMT_FLAG_BE) return refuse("big-endian");
  if (desc->nb_components != 1 && desc->nb_components != 3) return refuse("component count");
  const int depth = desc->comp[0].depth;
  if (depth < kMinBitDepth || depth > kMaxBitDepth) return refuse("bit depth");
  const int step = depth > 8 ? 2 : 1;
  for (int c = 0; c < desc->nb_components; ++c) {
    const AVComponentDescriptor& comp = desc->comp[c];
    if (comp.plane != c || comp.step != step || comp.offset != 0 || comp.shift != 0 || comp.depth != depth) {
      return refuse("not planar with one sample per word");
    }
  }
  PixelFormat result;
  result.bit_depth = depth;
  if (desc->nb_components == 1) {
    result.layout = ChromaLayout::k400;
  } else if (desc->log2_chroma_w == 1 && desc->log2_chroma_h == 1) {
    result.layout = ChromaLayout::k420;
  } else if (desc->log2_chroma_w == 1 && desc->log2_chroma_h == 0) {
    result.layout = ChromaLayout::k422;
  } else if (desc->log2_chroma_w == 0 && desc->log2_chroma_h == 0) {
    result.layout = ChromaLayout::k444;
  } else {
    return refuse("chroma subsampling");
  }
  return result;
}

namespace {

// An AVFrame's colour field as the number the bitstream gave: FFmpeg stores any value
// there, also ones outside its enum, and loading such an enum is undefined behaviour.
template <typename Enum>
int RawColourValue(const Enum& field) {
  std::underlying_type_t<Enum> raw;
  std::memcpy(&raw, &field, sizeof raw);
  return static_cast<int>(raw);
}

// FFmpeg's name of a colour value, or the number when FFmpeg's enum has none.
template <typename Enum>
std::string ColourName(int raw, int count, const char* (*name)(Enum)) {
  const char* known = raw >= 0 && raw < count ? name(static_cast<Enum>(raw)) : nullptr;
  return known != nullptr ? std::string(known) : absl::StrCat("the undefined value ", raw);
}

}  // namespace

absl::StatusOr<AvColour> ColourFromAv(const AVFrame& picture) {
  const auto refuse = [](const char* what, const std::string& name) {
    return absl::UnimplementedError(absl::StrCat("the bitstream's colour ", what, " is ", name,
                                                 ", which the metrics do not define (BT.709 and BT.601 only)"));
  };
  const int primaries = RawColourValue(picture.color_primaries);
  switch (primaries) {
    case AVCOL_PRI_BT2020:
    case AVCOL_PRI_SMPTE428:
    case AVCOL_PRI_SMPTE431:
    case AVCOL_PRI_SMPTE432:
      return refuse("primaries", ColourName(primaries, AVCOL_PRI_NB, av_color_primaries_name));
    default:
      break;
  }
  const int transfer = RawColourValue(picture.color_trc);
  switch (transfer) {
    case AVCOL_TRC_SMPTE2084:
    case AVCOL_TRC_ARIB_STD_B67:
    case AVCOL_TRC_BT2020_10:
    case AVCOL_TRC_BT2020_12:
    case AVCOL_TRC_SMPTE428:
      return refuse("transfer", ColourName(transfer, AVCOL_TRC_NB, av_color_transfer_name));
    default:
      break;
  }
  AvColour colour;
  const int matrix = RawColourValue(picture.colorspace);
  switch (matrix) {
    case AVCOL_SPC_UNSPECIFIED:
    case AVCOL_SPC_RESERVED:
      break;
    case AVCOL_SPC_BT709:
      colour.matrix = ColorMatrix::kBt709;
      break;
    case AVCOL_SPC_BT470BG:
    case AVCOL_SPC_SMPTE170M:
      colour.matrix = ColorMatrix::kBt601;
      break;
    default:
      return refuse("matrix", ColourName(matrix, AVCOL_SPC_NB, av_color_space_name));
  }
  const int range = RawColourValue(picture.color_range);
  if (range == AVCOL_RANGE_JPEG || IsJpegRangeFormat(static_cast<AVPixelFormat>(picture.format))) {
    colour.range = ColorRange::kFull;
  } else if (range == AVCOL_RANGE_MPEG) {
    colour.range = ColorRange::kLimited;
  }
  return colour;
}

absl::Status CopyAvFrame(const AVFrame& picture, const FrameGeometry& geometry, Frame* frame) {
  if (absl::Status s = frame->Reset(geometry); !s.ok()) return s;
  for (int p = 0; p < geometry.plane_count(); ++p) {
    const size_t row_bytes = static_cast<size_t>(geometry.plane_width(p)) * geometry.bytes_per_sample();
    const uint8_t* src = picture.data[p];
    uint8_t* dst = frame->mutable_plane_bytes(p);
    for (int y = 0; y < geometry.plane_height(p); ++y) {
      std::memcpy(dst + y * row_bytes, src + static_cast<ptrdiff_t>(y) * picture.linesize[p], row_bytes);
    }
  }
  return absl::OkStatus();
}

namespace {

// Rows of 16-bit words whose samples sit in the top bits: shifted down by `shift`,
// `step` words apart (1: planar, 2: one half of an interleaved pair). False when a
// dropped bit was set.
bool CopyHighBitRow(const uint8_t* src, int step, int width, int shift, uint8_t* dst) {
  const uint16_t low_mask = static_cast<uint16_t>((1u << shift) - 1);
  uint16_t dropped = 0;
  for (int x = 0; x < width; ++x) {
    uint16_t v;
    std::memcpy(&v, src + 2 * static_cast<size_t>(x) * step, 2);
    dropped |= v & low_mask;
    v = static_cast<uint16_t>(v >> shift);
    std::memcpy(dst + 2 * static_cast<size_t>(x), &v, 2);
  }
  return dropped == 0;
}

}  // namespace

absl::StatusOr<std::vector<SurfacePlane>> SurfaceLayout(AVPixelFormat format, const FrameGeometry& geometry) {
  const PixelFormat& want = geometry.format;
  const bool semi_planar_420 = want.layout == ChromaLayout::k420;
  const bool planar_444 = want.layout == ChromaLayout::k444;
  bool fits = false;
  switch (format) {
    case AV_PIX_FMT_NV12:
      fits = semi_planar_420 && want.bit_depth == 8;
      break;
    case AV_PIX_FMT_P010LE:
    case AV_PIX_FMT_P016LE:
      fits = semi_planar_420 && want.bit_depth > 8;
      break;
    case AV_PIX_FMT_YUV444P:
      fits = planar_444 && want.bit_depth == 8;
      break;
    case AV_PIX_FMT_YUV444P16LE:
      fits = planar_444 && want.bit_depth > 8;
      break;
    default:
      break;
  }
  if (!fits) {
    return absl::UnimplementedError(absl::StrCat("the GPU decoder's surface format ", FormatName(format),
                                                 " does not hold ", PixelFormatName(want)));
  }
  const bool semi_planar = format == AV_PIX_FMT_NV12 || format == AV_PIX_FMT_P010LE || format == AV_PIX_FMT_P016LE;
  const int shift = want.bit_depth == 8 ? 0 : 16 - want.bit_depth;  // samples in the words' top bits
  std::vector<SurfacePlane> planes;
  for (int p = 0; p < geometry.plane_count(); ++p) {
    // Semi-planar: U and V interleaved in the surface's second plane.
    planes.push_back(
        {semi_planar ? std::min(p, 1) : p, semi_planar && p > 0 ? 2 : 1, semi_planar && p == 2 ? 1 : 0, shift});
  }
  return planes;
}

absl::Status CopyGpuSurface(const AVFrame& surface, const FrameGeometry& geometry, Frame* frame) {
  const auto format = static_cast<AVPixelFormat>(surface.format);
  absl::StatusOr<std::vector<SurfacePlane>> layout = SurfaceLayout(format, geometry);
  if (!layout.ok()) return layout.status();
  if (absl::Status s = frame->Reset(geometry); !s.ok()) return s;
  for (int p = 0; p < geometry.plane_count(); ++p) {
    const SurfacePlane& plane = (*layout)[p];
    const int width = geometry.plane_width(p);
    const size_t row_bytes = static_cast<size_t>(width) * geometry.bytes_per_sample();
    uint8_t* dst = frame->mutable_plane_bytes(p);
    for (int y = 0; y < geometry.plane_height(p); ++y) {
      const uint8_t* src =
          surface.data[plane.surface_plane] + static_cast<ptrdiff_t>(y) * surface.linesize[plane.surface_plane];
      uint8_t* row = dst + y * row_bytes;
      if (geometry.bytes_per_sample() == 1) {
        if (plane.step == 1) {
          std::memcpy(row, src, row_bytes);
        } else {
          for (int x = 0; x < width; ++x) row[x] = src[plane.step * x + plane.offset];
        }
      } else if (!CopyHighBitRow(src + 2 * plane.offset, plane.step, width, plane.shift, row)) {
        return SurfaceBitsError(format, geometry.format.bit_depth);
      }
    }
  }
  return absl::OkStatus();
}

absl::Status SurfaceBitsError(AVPixelFormat format, int bit_depth) {
  return absl::InternalError(absl::StrCat("the GPU decoder's ", FormatName(format), " surface has bits set below ",
                                          bit_depth, "-bit samples"));
}

}  // namespace exactq::decode::internal
