#include "client/picture_source.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "engine/io/raw_yuv_reader.h"
#include "engine/io/y4m_reader.h"

namespace exactq::client {

namespace {

class Y4mSource final : public PictureSource {
 public:
  Y4mSource(Y4mReader reader, std::optional<int64_t> frames = std::nullopt, std::FILE* owned = nullptr)
      : reader_(std::move(reader)), frames_(frames), owned_(owned) {}
  ~Y4mSource() override {
    if (owned_ != nullptr) std::fclose(owned_);
  }
  const FrameGeometry& geometry() const override { return reader_.geometry(); }
  std::optional<ColorRange> color_range() const override { return reader_.color_range(); }
  absl::StatusOr<bool> Next(Frame* frame) override { return reader_.ReadFrame(frame); }
  std::optional<int64_t> frame_count() const override { return frames_; }

 private:
  Y4mReader reader_;
  std::optional<int64_t> frames_;
  std::FILE* owned_;
};

// Frames in a regular Y4M file whose FRAME lines carry no parameters (what ffmpeg
// writes): (size - header) / (6 + picture bytes) when that divides evenly.
std::optional<int64_t> Y4mFrameCount(const std::string& path, const FrameGeometry& geometry) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return std::nullopt;
  int64_t header = 0;
  for (int c; (c = std::fgetc(f)) != EOF;) {
    ++header;
    if (c == '\n') break;
  }
  std::fclose(f);
  const int64_t per_frame = 6 + static_cast<int64_t>(geometry.frame_bytes());
  const int64_t body = static_cast<int64_t>(info.st_size) - header;
  if (body < 0 || body % per_frame != 0) return std::nullopt;
  return body / per_frame;
}

class RawSource final : public PictureSource {
 public:
  RawSource(RawYuvReader reader, std::optional<int64_t> frames)
      : reader_(std::move(reader)), frames_(frames) {}
  const FrameGeometry& geometry() const override { return reader_.geometry(); }
  absl::StatusOr<bool> Next(Frame* frame) override { return reader_.ReadFrame(frame); }
  std::optional<int64_t> frame_count() const override { return frames_; }

 private:
  RawYuvReader reader_;
  std::optional<int64_t> frames_;
};

bool HasY4mSignature(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  char magic[9] = {};
  const size_t n = std::fread(magic, 1, sizeof(magic), f);
  std::fclose(f);
  return n == sizeof(magic) && std::memcmp(magic, "YUV4MPEG2", 9) == 0;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PictureSource>> OpenPictureSource(
    const std::string& path, const std::optional<FrameGeometry>& raw_geometry) {
  if (path == "-") {
    absl::StatusOr<Y4mReader> reader = Y4mReader::FromStream(stdin, "stdin");
    if (!reader.ok()) return reader.status();
    return std::make_unique<Y4mSource>(std::move(*reader));
  }
  struct stat info;
  if (::stat(path.c_str(), &info) == 0) {
    if (S_ISDIR(info.st_mode)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, " is a directory; give a Y4M or raw YUV file (or '-' for Y4M on stdin)"));
    }
    // A named pipe or process substitution (<(ffmpeg ...)): read once, as a Y4M
    // stream, so that peeking at the signature loses nothing.
    // With --width/--height/--pixfmt a pipe is read as raw YUV below.
    if ((S_ISFIFO(info.st_mode) || S_ISCHR(info.st_mode) || S_ISSOCK(info.st_mode)) && !raw_geometry.has_value()) {
      std::FILE* f = std::fopen(path.c_str(), "rb");
      if (f == nullptr) return absl::NotFoundError(absl::StrCat(path, ": ", std::strerror(errno)));
      absl::StatusOr<Y4mReader> reader = Y4mReader::FromStream(f, path);
      if (!reader.ok()) {
        std::fclose(f);
        return reader.status();
      }
      return std::make_unique<Y4mSource>(std::move(*reader), std::nullopt, f);
    }
  }
  if (HasY4mSignature(path)) {
    absl::StatusOr<Y4mReader> reader = Y4mReader::Open(path);
    if (!reader.ok()) return reader.status();
    const std::optional<int64_t> frames = Y4mFrameCount(path, reader->geometry());
    return std::make_unique<Y4mSource>(std::move(*reader), frames);
  }
  if (!raw_geometry.has_value()) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) {
      return absl::NotFoundError(absl::StrCat(path, ": ", std::strerror(errno)));
    }
    std::fclose(f);
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": not a Y4M file; for raw YUV give --width, --height and --pixfmt"));
  }
  absl::StatusOr<RawYuvReader> reader = RawYuvReader::Open(path, *raw_geometry);
  if (!reader.ok()) return reader.status();
  // A whole number of frames tells the server how many to expect (progress in its logs).
  std::optional<int64_t> frames;
  if (::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
      info.st_size % static_cast<off_t>(raw_geometry->frame_bytes()) == 0) {
    frames = info.st_size / static_cast<off_t>(raw_geometry->frame_bytes());
  }
  return std::make_unique<RawSource>(std::move(*reader), frames);
}

}  // namespace exactq::client
