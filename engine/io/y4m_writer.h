// Y4mWriter: writes frames as a YUV4MPEG2 stream, in ffmpeg's byte format.
//
// The header is written on creation (tags as ffmpeg's muxer writes them), then each
// WriteFrame emits "FRAME\n" and the frame's wire bytes unchanged. Used by the sample
// generator, by tests, and by tools that dump what the service scored.
//
//   Y4mHeader header;
//   header.geometry = geometry;
//   header.frame_rate = {25, 1};
//   absl::StatusOr<Y4mWriter> writer = Y4mWriter::Create("out.y4m", header);
//   writer->WriteFrame(frame);
//   writer->Close();  // reports write errors

#ifndef EXACTQ_ENGINE_IO_Y4M_WRITER_H_
#define EXACTQ_ENGINE_IO_Y4M_WRITER_H_

#include <cstdint>
#include <cstdio>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/format/frame.h"
#include "engine/io/file_handle.h"
#include "engine/io/y4m_header.h"

namespace exactq {

class Y4mWriter {
 public:
  // Creates (truncates) `path` and writes the header. The header's geometry must be
  // valid.
  static absl::StatusOr<Y4mWriter> Create(const std::string& path, const Y4mHeader& header);
  // Writes to a stream the caller owns (stdout, a pipe).
  static absl::StatusOr<Y4mWriter> ToStream(std::FILE* stream, std::string name, const Y4mHeader& header);

  const Y4mHeader& header() const { return header_; }

  // InvalidArgument when the frame's geometry is not the header's.
  absl::Status WriteFrame(const Frame& frame);

  // Flushes and, for a file, closes it; reports any write error. The destructor
  // closes too but cannot report.
  absl::Status Close();

  int64_t frames_written() const { return frames_written_; }

 private:
  Y4mWriter(FileHandle file, Y4mHeader header) : file_(std::move(file)), header_(std::move(header)) {}
  static absl::StatusOr<Y4mWriter> FromHandle(FileHandle file, const Y4mHeader& header);

  FileHandle file_;
  Y4mHeader header_;
  int64_t frames_written_ = 0;
};

}  // namespace exactq

#endif  // EXACTQ_ENGINE_IO_Y4M_WRITER_H_
