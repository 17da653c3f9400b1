// RawYuvReader: reads headerless planar YUV (.yuv) frame by frame, given the geometry.
//
// A raw file is frames in the wire layout back to back, with nothing to say what they
// are, so the caller supplies width, height and pixel format (as with
// `ffmpeg -f rawvideo -s WxH -pix_fmt ...`). A file whose length is not a whole number
// of frames fails at the cut frame with DataLoss.
//
//   absl::StatusOr<RawYuvReader> reader =
//       RawYuvReader::Open("ref.yuv", {352, 288, {ChromaLayout::k420, 16}});
//   Frame frame;
//   absl::StatusOr<bool> more = reader->ReadFrame(&frame);

#ifndef EXACTQ_ENGINE_IO_RAW_YUV_READER_H_
#define EXACTQ_ENGINE_IO_RAW_YUV_READER_H_

#include <cstdint>
#include <cstdio>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/format/frame.h"
#include "engine/io/file_handle.h"

namespace exactq {

class RawYuvReader {
 public:
  // InvalidArgument for an invalid geometry; errno-based codes when the file won't open.
  static absl::StatusOr<RawYuvReader> Open(const std::string& path, const FrameGeometry& geometry);
  // Reads from a stream the caller owns (stdin, a pipe); `name` appears in errors.
  static absl::StatusOr<RawYuvReader> FromStream(std::FILE* stream, std::string name, const FrameGeometry& geometry);

  const FrameGeometry& geometry() const { return geometry_; }

  // As Y4mReader::ReadFrame: true for a frame, false at a clean end, sticky errors.
  absl::StatusOr<bool> ReadFrame(Frame* frame);

  int64_t frames_read() const { return frames_read_; }

 private:
  RawYuvReader(FileHandle file, const FrameGeometry& geometry) : file_(std::move(file)), geometry_(geometry) {}

  FileHandle file_;
  FrameGeometry geometry_;
  int64_t frames_read_ = 0;
  absl::Status error_;
};

}  // namespace exactq

#endif  // EXACTQ_ENGINE_IO_RAW_YUV_READER_H_
