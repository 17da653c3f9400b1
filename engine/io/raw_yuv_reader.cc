#include "engine/io/raw_yuv_reader.h"

#include <utility>

#include "engine/io/frame_payload.h"

namespace exactq {

absl::StatusOr<RawYuvReader> RawYuvReader::Open(const std::string& path, const FrameGeometry& geometry) {
  if (absl::Status s = ValidateGeometry(geometry); !s.ok()) return s;
  absl::StatusOr<FileHandle> file = FileHandle::Open(path, "rb");
  if (!file.ok()) return file.status();
  return RawYuvReader(*std::move(file), geometry);
}

absl::StatusOr<RawYuvReader> RawYuvReader::FromStream(std::FILE* stream, std::string name,
                                                      const FrameGeometry& geometry) {
  if (absl::Status s = ValidateGeometry(geometry); !s.ok()) return s;
  return RawYuvReader(FileHandle::Borrow(stream, std::move(name)), geometry);
}

absl::StatusOr<bool> RawYuvReader::ReadFrame(Frame* frame) {
  if (!error_.ok()) return error_;
  if (frame->geometry() != geometry_) {
    if (absl::Status s = frame->Reset(geometry_); !s.ok()) return s;
  }
  absl::StatusOr<bool> read = ReadFramePayload(file_, frames_read_, /*end_allowed=*/true, frame);
  if (!read.ok()) {
    error_ = read.status();
    return error_;
  }
  if (*read) ++frames_read_;
  return *read;
}

}  // namespace exactq
