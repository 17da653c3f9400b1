#include "engine/format/frame_geometry.h"

#include "absl/strings/str_cat.h"

namespace exactq {

size_t FrameGeometry::plane_offset(int plane) const {
  size_t offset = 0;
  for (int p = 0; p < plane; ++p) offset += plane_bytes(p);
  return offset;
}

size_t FrameGeometry::frame_bytes() const { return plane_offset(plane_count()); }

absl::Status ValidateGeometry(const FrameGeometry& geometry) {
  if (geometry.width < 1 || geometry.width > kMaxFrameDimension) {
    return absl::InvalidArgumentError(absl::StrCat("width ", geometry.width, " is outside 1..", kMaxFrameDimension));
  }
  if (geometry.height < 1 || geometry.height > kMaxFrameDimension) {
    return absl::InvalidArgumentError(absl::StrCat("height ", geometry.height, " is outside 1..", kMaxFrameDimension));
  }
  return ValidatePixelFormat(geometry.format);
}

std::string GeometryDescription(const FrameGeometry& geometry) {
  return absl::StrCat(geometry.width, "x", geometry.height, " ", PixelFormatName(geometry.format));
}

const char* PlaneName(int plane) {
  switch (plane) {
    case 0:
      return "Y";
    case 1:
      return "Cb";
    case 2:
      return "Cr";
  }
  return "?";
}

}  // namespace exactq
