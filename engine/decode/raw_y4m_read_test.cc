// VideoDecoder reads a Y4M stream's pictures after the first straight from its bytes
// (StartRawY4mReads): every picture must equal what engine/io's Y4mReader reads, from a
// file and from an upload that arrives in small chunks, with FRAME parameters, odd sizes
// and 16-bit samples; a file cut short ends with the frames before the cut and an error
// naming the frame.
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "engine/decode/byte_source.h"
#include "engine/decode/spool_file.h"
#include "engine/decode/video_decoder.h"
#include "engine/io/y4m_reader.h"
#include "gtest/gtest.h"

namespace exactq {
namespace {

constexpr int kFrames = 5;

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir != nullptr ? dir : "/tmp", "/", name);
}

struct Y4mCase {
  const char* name;
  int width, height;
  const char* colorspace;  // the C tag
  size_t frame_bytes;
  const char* frame_line;  // each picture's FRAME line, '\n' included
};

// Random pictures behind a header; 16-bit samples are kept within their bit depth by
// the reader's definition only (the decoder copies bytes, it does not check samples).
std::string MakeY4m(const Y4mCase& c) {
  std::string bytes = absl::StrCat("YUV4MPEG2 W", c.width, " H", c.height, " F25:1 Ip A1:1 C", c.colorspace, "\n");
  std::mt19937 random(c.width * 31 + c.height);
  for (int f = 0; f < kFrames; ++f) {
    bytes += c.frame_line;
    for (size_t i = 0; i < c.frame_bytes; ++i) bytes.push_back(static_cast<char>(random() & 0x03));
  }
  return bytes;
}

std::string Write(const std::string& name, const std::string& bytes) {
  const std::string path = TempPath(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// Every picture from `source`, compared with Y4mReader's of `path`; the decoder's final
// status (OK at the clean end).
absl::Status ExpectSamePictures(std::unique_ptr<ByteSource> source, const std::string& path, int frames) {
  absl::StatusOr<std::unique_ptr<VideoDecoder>> decoder = VideoDecoder::Open(std::move(source), DecoderOptions{});
  if (!decoder.ok()) return decoder.status();
  absl::StatusOr<Y4mReader> reader = Y4mReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*decoder)->info().geometry, reader->geometry());
  Frame got, want;
  for (int f = 0;; ++f) {
    absl::StatusOr<bool> more = (*decoder)->ReadFrame(&got);
    if (!more.ok()) {
      EXPECT_EQ(f, frames) << "pictures before the error";
      return more.status();
    }
    if (!*more) {
      EXPECT_EQ(f, frames);
      return absl::OkStatus();
    }
    EXPECT_LT(f, frames);
    absl::StatusOr<bool> expected = reader->ReadFrame(&want);
    EXPECT_TRUE(expected.ok() && *expected) << "frame " << f;
    EXPECT_EQ(got.geometry(), want.geometry());
    EXPECT_EQ(std::memcmp(got.bytes(), want.bytes(), want.size_bytes()), 0) << "frame " << f << " differs";
  }
}

std::unique_ptr<ByteSource> FromFile(const std::string& path) { return *FileByteSource::Open(path); }

// The bytes arrive in 997-byte chunks from another thread, as an upload's do.
class ChunkedUpload {
 public:
  explicit ChunkedUpload(const std::string& bytes) {
    spool_ = *SpoolFile::Create(TempPath(""), 64 << 20, "upload");
    writer_ = std::thread([bytes, spool = spool_] {
      for (size_t at = 0; at < bytes.size(); at += 997) {
        if (!spool->Append(bytes.data() + at, std::min<size_t>(997, bytes.size() - at)).ok()) return;
      }
      spool->Finish();
    });
  }
  ~ChunkedUpload() { writer_.join(); }
  std::unique_ptr<ByteSource> Reader() { return spool_->OpenReader(); }

 private:
  std::shared_ptr<SpoolFile> spool_;
  std::thread writer_;
};

const Y4mCase kCases[] = {
    {"odd_420_8bit", 33, 31, "420jpeg", 33 * 31 + 2 * 17 * 16, "FRAME\n"},
    {"422_10bit", 64, 48, "422p10", 2 * (64 * 48 + 2 * 32 * 48), "FRAME\n"},
    {"444_16bit_frame_params", 17, 9, "444p16", 2 * 3 * 17 * 9, "FRAME Ip XTAG=1\n"},
    {"4k_420_8bit", 3840, 2160, "420jpeg", 3840 * 2160 * 3 / 2, "FRAME\n"},
};

TEST(RawY4mReadTest, EveryPictureIsTheY4mReadersFromAFileAndAnUpload) {
  for (const Y4mCase& c : kCases) {
    SCOPED_TRACE(c.name);
    const std::string bytes = MakeY4m(c);
    const std::string path = Write(absl::StrCat(c.name, ".y4m"), bytes);
    EXPECT_TRUE(ExpectSamePictures(FromFile(path), path, kFrames).ok());
    ChunkedUpload upload(bytes);
    EXPECT_TRUE(ExpectSamePictures(upload.Reader(), path, kFrames).ok());
  }
}

TEST(RawY4mReadTest, ACutShortFileEndsWithTheFramesBeforeTheCut) {
  const Y4mCase& c = kCases[1];
  const std::string bytes = MakeY4m(c);
  const size_t header = bytes.find('\n') + 1;
  const size_t picture = 6 + c.frame_bytes;
  struct Cut {
    size_t at;
    const char* says;
  };
  // Inside frame 3's picture; inside its FRAME line; the first picture (FFmpeg's read).
  for (const Cut& cut : {Cut{header + 3 * picture + 6 + 100, "frame 3: the input ends inside the picture"},
                         Cut{header + 3 * picture + 3, "frame 3: the input ends inside its FRAME line"}}) {
    const std::string path = Write("cut.y4m", bytes.substr(0, cut.at));
    const absl::Status status = ExpectSamePictures(FromFile(path), path, 3);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_NE(status.message().find(cut.says), std::string::npos) << status;
    EXPECT_NE(status.message().find("truncated"), std::string::npos) << status;
  }
}

TEST(RawY4mReadTest, AMissingFrameLineIsNamed) {
  const Y4mCase& c = kCases[0];
  std::string bytes = MakeY4m(c);
  const size_t header = bytes.find('\n') + 1;
  bytes.replace(header + 2 * (6 + c.frame_bytes), 5, "FRAXE");
  const std::string path = Write("no_frame_line.y4m", bytes);
  const absl::Status status = ExpectSamePictures(FromFile(path), path, 2);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("frame 2: no FRAME line"), std::string::npos) << status;
}

}  // namespace
}  // namespace exactq
