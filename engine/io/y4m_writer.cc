#include "engine/io/y4m_writer.h"

#include <cerrno>
#include <utility>

#include "absl/strings/str_cat.h"

namespace exactq {
namespace {

constexpr char kFrameLine[] = "FRAME\n";

bool WriteAll(std::FILE* stream, const void* data, size_t size) { return std::fwrite(data, 1, size, stream) == size; }

}  // namespace

absl::StatusOr<Y4mWriter> Y4mWriter::Create(const std::string& path, const Y4mHeader& header) {
  if (absl::Status s = ValidateGeometry(header.geometry); !s.ok()) return s;
  absl::StatusOr<FileHandle> file = FileHandle::Open(path, "wb");
  if (!file.ok()) return file.status();
  return FromHandle(*std::move(file), header);
}

absl::StatusOr<Y4mWriter> Y4mWriter::ToStream(std::FILE* stream, std::string name, const Y4mHeader& header) {
  if (absl::Status s = ValidateGeometry(header.geometry); !s.ok()) return s;
  return FromHandle(FileHandle::Borrow(stream, std::move(name)), header);
}

absl::StatusOr<Y4mWriter> Y4mWriter::FromHandle(FileHandle file, const Y4mHeader& header) {
  const std::string line = FormatY4mHeader(header);
  errno = 0;
  if (!WriteAll(file.get(), line.data(), line.size())) {
    return file.ErrorStatus("cannot write the Y4M header");
  }
  return Y4mWriter(std::move(file), header);
}

absl::Status Y4mWriter::WriteFrame(const Frame& frame) {
  if (frame.geometry() != header_.geometry) {
    return absl::InvalidArgumentError(absl::StrCat(file_.name(), ": frame ", frames_written_, " is ",
                                                   GeometryDescription(frame.geometry()), " but the stream is ",
                                                   GeometryDescription(header_.geometry)));
  }
  errno = 0;
  if (!WriteAll(file_.get(), kFrameLine, sizeof(kFrameLine) - 1) ||
      !WriteAll(file_.get(), frame.bytes(), frame.size_bytes())) {
    return file_.ErrorStatus(absl::StrCat("cannot write frame ", frames_written_));
  }
  ++frames_written_;
  return absl::OkStatus();
}

absl::Status Y4mWriter::Close() {
  if (file_.get() != nullptr) {
    errno = 0;
    if (std::fflush(file_.get()) != 0) {
      absl::Status status = file_.ErrorStatus("cannot flush");
      file_.Close().IgnoreError();
      return status;
    }
  }
  return file_.Close();
}

}  // namespace exactq
