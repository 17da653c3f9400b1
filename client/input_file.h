// InputFile: one input of `exactq score`, opened once and recognised by its first
// bytes, so that a named pipe or a process substitution (`<(ffmpeg ...)`) is read
// exactly once: the bytes looked at are replayed to whoever reads the stream next.
//
// Kinds: Y4M (by its "YUV4MPEG2" signature), raw YUV (when the user gave the raw
// geometry), and otherwise an encoded file (any container the server's FFmpeg reads:
// mkv, mp4, ivf, ts, Annex B, ...), which goes up as bytes for the server to decode. A
// ".yuv" or ".raw" file without the raw geometry is an error naming the flags.
//
//   absl::StatusOr<std::unique_ptr<InputFile>> in = InputFile::Open("dist.mp4", /*raw=*/false);
//   if ((*in)->kind() == InputFile::kEncoded) ... read (*in)->stream() to the end ...
#ifndef EXACTQ_CLIENT_INPUT_FILE_H_
#define EXACTQ_CLIENT_INPUT_FILE_H_

#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace exactq::client {

class InputFile {
 public:
  enum Kind { kY4m, kRaw, kEncoded };

  // "-" is stdin. `raw_geometry_given`: the user passed --width/--height/--pixfmt, so
  // an input that is not Y4M is raw YUV.
  static absl::StatusOr<std::unique_ptr<InputFile>> Open(const std::string& path, bool raw_geometry_given);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  Kind kind() const { return kind_; }
  const std::string& name() const { return name_; }
  // The whole input from its first byte (the bytes looked at included).
  std::FILE* stream() const { return stream_; }
  // The size of a regular file; -1 for a pipe or stdin.
  int64_t size_bytes() const { return size_bytes_; }

 private:
  InputFile() = default;
  Kind kind_ = kEncoded;
  std::string name_;
  std::FILE* stream_ = nullptr;
  int64_t size_bytes_ = -1;
};

}  // namespace exactq::client

#endif  // EXACTQ_CLIENT_INPUT_FILE_H_
