#include "client/picture_source.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "engine/io/raw_yuv_reader.h"
#include "engine/io/y4m_reader.h"

namespace exactq::client {

namespace {

// The frames of a regular Y4M file whose frames all have the header's size (no
// per-frame parameters): the total the console's progress counts to.
std::optional<int64_t> Y4mFrameCount(const std::string& path, int64_t size, const FrameGeometry& geometry) {
  if (size < 0) return std::nullopt;  // a pipe
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return std::nullopt;
  int64_t header = 0;
  for (int c; (c = std::fgetc(f)) != EOF;) {
    ++header;
    if (c == '\n') break;
  }
  std::fclose(f);
  const int64_t per_frame = 6 + static_cast<int64_t>(geometry.frame_bytes());
  const int64_t body = size - header;
  if (body < 0 || body % per_frame != 0) return std::nullopt;
  return body / per_frame;
}

class Y4mSource final : public PictureSource {
 public:
  Y4mSource(std::unique_ptr<InputFile> input, Y4mReader reader, std::optional<int64_t> frames)
      : input_(std::move(input)), reader_(std::move(reader)), frames_(frames) {}
  const FrameGeometry& geometry() const override { return reader_.geometry(); }
  std::optional<ColorRange> color_range() const override { return reader_.color_range(); }
  absl::StatusOr<bool> Next(Frame* frame) override { return reader_.ReadFrame(frame); }
  std::optional<int64_t> frame_count() const override { return frames_; }

 private:
  std::unique_ptr<InputFile> input_;  // the stream the reader borrows
  Y4mReader reader_;
  std::optional<int64_t> frames_;
};

class RawSource final : public PictureSource {
 public:
  RawSource(std::unique_ptr<InputFile> input, RawYuvReader reader, std::optional<int64_t> frames)
      : input_(std::move(input)), reader_(std::move(reader)), frames_(frames) {}
  const FrameGeometry& geometry() const override { return reader_.geometry(); }
  absl::StatusOr<bool> Next(Frame* frame) override { return reader_.ReadFrame(frame); }
  std::optional<int64_t> frame_count() const override { return frames_; }

 private:
  std::unique_ptr<InputFile> input_;
  RawYuvReader reader_;
  std::optional<int64_t> frames_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<PictureSource>> OpenPictureSource(const std::string& path,
                                                                 const std::optional<FrameGeometry>& raw_geometry) {
  absl::StatusOr<std::unique_ptr<InputFile>> input = InputFile::Open(path, raw_geometry.has_value());
  if (!input.ok()) return input.status();
  return OpenPictureSource(*std::move(input), raw_geometry);
}

absl::StatusOr<std::unique_ptr<PictureSource>> OpenPictureSource(std::unique_ptr<InputFile> input,
                                                                 const std::optional<FrameGeometry>& raw_geometry) {
  if (input->kind() == InputFile::kY4m) {
    absl::StatusOr<Y4mReader> reader = Y4mReader::FromStream(input->stream(), input->name());
    if (!reader.ok()) return reader.status();
    const std::optional<int64_t> frames = Y4mFrameCount(input->name(), input->size_bytes(), reader->geometry());
    return std::make_unique<Y4mSource>(std::move(input), std::move(*reader), frames);
  }
  if (!raw_geometry.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(input->name(), ": not a Y4M file; for raw YUV give --width, --height and --pixfmt"));
  }
  absl::StatusOr<RawYuvReader> reader = RawYuvReader::FromStream(input->stream(), input->name(), *raw_geometry);
  if (!reader.ok()) return reader.status();
  // A whole number of frames tells the server how many to expect (progress in its logs).
  std::optional<int64_t> frames;
  const int64_t size = input->size_bytes();
  if (size >= 0 && size % static_cast<int64_t>(raw_geometry->frame_bytes()) == 0) {
    frames = size / static_cast<int64_t>(raw_geometry->frame_bytes());
  }
  return std::make_unique<RawSource>(std::move(input), std::move(*reader), frames);
}

}  // namespace exactq::client
