#include "engine/io/y4m_reader.h"

#include <cerrno>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "engine/io/frame_payload.h"

namespace exactq {
namespace {

// Generous bounds: ffmpeg writes ~80-byte headers and bare "FRAME" lines. A bound
// keeps a non-Y4M input from being read whole in search of a newline.
constexpr size_t kMaxHeaderLine = 4096;
constexpr size_t kMaxFrameLine = 1024;

enum class LineEnd { kNewline, kEndOfStream, kTooLong, kReadError };

// Reads up to and excluding '\n'.
LineEnd ReadLine(std::FILE* stream, size_t max_length, std::string* line) {
  line->clear();
  while (line->size() < max_length) {
    const int c = std::getc(stream);
    if (c == '\n') return LineEnd::kNewline;
    if (c == EOF) return std::ferror(stream) ? LineEnd::kReadError : LineEnd::kEndOfStream;
    line->push_back(static_cast<char>(c));
  }
  return LineEnd::kTooLong;
}

}  // namespace

absl::StatusOr<Y4mReader> Y4mReader::Open(const std::string& path) {
  absl::StatusOr<FileHandle> file = FileHandle::Open(path, "rb");
  if (!file.ok()) return file.status();
  return FromHandle(*std::move(file));
}

absl::StatusOr<Y4mReader> Y4mReader::FromStream(std::FILE* stream, std::string name) {
  return FromHandle(FileHandle::Borrow(stream, std::move(name)));
}

absl::StatusOr<Y4mReader> Y4mReader::FromHandle(FileHandle file) {
  std::string line;
  errno = 0;
  switch (ReadLine(file.get(), kMaxHeaderLine, &line)) {
    case LineEnd::kNewline:
      break;
    case LineEnd::kReadError:
      return file.ErrorStatus("read error in the Y4M header");
    case LineEnd::kEndOfStream:
      return absl::InvalidArgumentError(absl::StrCat(file.name(), line.empty()
                                                                      ? ": empty input, expected a Y4M stream"
                                                                      : ": the Y4M header line is not terminated"));
    case LineEnd::kTooLong:
      return absl::InvalidArgumentError(
          absl::StrCat(file.name(), ": no Y4M header line within ", kMaxHeaderLine, " bytes"));
  }
  absl::StatusOr<Y4mHeader> header = ParseY4mHeader(line);
  if (!header.ok()) {
    return absl::Status(header.status().code(), absl::StrCat(file.name(), ": ", header.status().message()));
  }
  return Y4mReader(std::move(file), *std::move(header));
}

absl::StatusOr<bool> Y4mReader::ReadFrameMarker() {
  std::string line;
  errno = 0;
  switch (ReadLine(file_.get(), kMaxFrameLine, &line)) {
    case LineEnd::kNewline:
      break;
    case LineEnd::kReadError:
      return file_.ErrorStatus(absl::StrCat("read error before frame ", frames_read_));
    case LineEnd::kEndOfStream:
      if (line.empty()) return false;
      return absl::DataLossError(
          absl::StrCat(file_.name(), ": frame ", frames_read_, " is truncated inside its FRAME line"));
    case LineEnd::kTooLong:
      return absl::InvalidArgumentError(absl::StrCat(file_.name(), ": frame ", frames_read_,
                                                     " has no FRAME line end within ", kMaxFrameLine, " bytes"));
  }
  // "FRAME", optionally followed by space-separated frame parameters (ignored).
  absl::string_view rest = line;
  if (!absl::ConsumePrefix(&rest, "FRAME") || !(rest.empty() || rest[0] == ' ')) {
    return absl::InvalidArgumentError(absl::StrCat(
        file_.name(), ": frame ", frames_read_, " does not start with a FRAME line (got '", line.substr(0, 16), "')"));
  }
  return true;
}

absl::StatusOr<bool> Y4mReader::ReadFrame(Frame* frame) {
  if (!error_.ok()) return error_;
  absl::StatusOr<bool> read = ReadFrameMarker();
  if (read.ok() && *read) {
    if (frame->geometry() != header_.geometry) {
      if (absl::Status s = frame->Reset(header_.geometry); !s.ok()) read = s;
    }
    if (read.ok()) read = ReadFramePayload(file_, frames_read_, /*end_allowed=*/false, frame);
  }
  if (!read.ok()) {
    error_ = read.status();
    return error_;
  }
  if (*read) ++frames_read_;
  return *read;
}

}  // namespace exactq
