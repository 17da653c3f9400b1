// A sequence of pictures read from a file: Y4M (by its header, or "-" for Y4M on
// stdin, e.g. an ffmpeg pipe) or raw planar YUV, whose geometry the user gives.
#ifndef EXACTQ_CLIENT_PICTURE_SOURCE_H_
#define EXACTQ_CLIENT_PICTURE_SOURCE_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "client/input_file.h"
#include "engine/format/color.h"
#include "engine/format/frame.h"

namespace exactq::client {

class PictureSource {
 public:
  virtual ~PictureSource() = default;
  virtual const FrameGeometry& geometry() const = 0;
  // The file's colour range tag, when it has one.
  virtual std::optional<ColorRange> color_range() const { return std::nullopt; }
  // Reads the next picture; false at the clean end of the file.
  virtual absl::StatusOr<bool> Next(Frame* frame) = 0;
  // Total frames when known without reading (raw files), else nullopt.
  virtual std::optional<int64_t> frame_count() const { return std::nullopt; }
};

// Y4M when the input has a Y4M header; raw when `raw_geometry` is given (required for
// files that are not Y4M). The input is opened once (pipes and process substitution
// work; see InputFile).
absl::StatusOr<std::unique_ptr<PictureSource>> OpenPictureSource(const std::string& path,
                                                                 const std::optional<FrameGeometry>& raw_geometry);

// The same for an input already opened; the source keeps it.
absl::StatusOr<std::unique_ptr<PictureSource>> OpenPictureSource(std::unique_ptr<InputFile> input,
                                                                 const std::optional<FrameGeometry>& raw_geometry);

}  // namespace exactq::client

#endif  // EXACTQ_CLIENT_PICTURE_SOURCE_H_
