// Y4mReader: reads a YUV4MPEG2 stream frame by frame, from a file or a pipe.
//
// The header is parsed when the reader is opened; each ReadFrame then reads one
// "FRAME" line and the frame's bytes straight into the caller's Frame, so memory use
// is one frame whatever the stream's length, and stdin from an ffmpeg pipe works as
// well as a file. The end of the stream at a frame boundary is a clean end; anything
// else (a cut frame, a missing FRAME marker) is an error naming the frame index.
// Sample values are not checked here: call ValidateSampleRange where that matters.
//
//   absl::StatusOr<Y4mReader> reader = Y4mReader::Open("ref.y4m");
//   Frame frame;
//   while (true) {
//     absl::StatusOr<bool> more = reader->ReadFrame(&frame);
//     if (!more.ok()) return more.status();
//     if (!*more) break;
//     ... use frame ...
//   }

#ifndef EXACTQ_ENGINE_IO_Y4M_READER_H_
#define EXACTQ_ENGINE_IO_Y4M_READER_H_

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/format/frame.h"
#include "engine/io/file_handle.h"
#include "engine/io/y4m_header.h"

namespace exactq {

class Y4mReader {
 public:
  // Opens a file and parses its header.
  static absl::StatusOr<Y4mReader> Open(const std::string& path);
  // Reads from a stream the caller owns (stdin, a pipe); `name` appears in errors.
  static absl::StatusOr<Y4mReader> FromStream(std::FILE* stream, std::string name);

  const Y4mHeader& header() const { return header_; }
  const FrameGeometry& geometry() const { return header_.geometry; }
  Y4mRatio frame_rate() const { return header_.frame_rate; }
  std::optional<ColorRange> color_range() const { return header_.color_range; }

  // Reads the next frame into *frame, giving it this stream's geometry (its buffer is
  // reused when large enough). true: a frame was read; false: the stream ended
  // cleanly. After an error the reader keeps returning that error.
  absl::StatusOr<bool> ReadFrame(Frame* frame);

  // Frames read so far; also the index of the next frame.
  int64_t frames_read() const { return frames_read_; }

 private:
  Y4mReader(FileHandle file, Y4mHeader header) : file_(std::move(file)), header_(std::move(header)) {}
  static absl::StatusOr<Y4mReader> FromHandle(FileHandle file);
  // Reads the "FRAME..." line; false at a clean end of stream.
  absl::StatusOr<bool> ReadFrameMarker();

  FileHandle file_;
  Y4mHeader header_;
  int64_t frames_read_ = 0;
  absl::Status error_;  // sticky: the first error ends the stream
};

}  // namespace exactq

#endif  // EXACTQ_ENGINE_IO_Y4M_READER_H_
