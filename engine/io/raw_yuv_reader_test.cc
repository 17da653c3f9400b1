#include "engine/io/raw_yuv_reader.h"

#include <cstdio>
#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace exactq {
namespace {

struct StreamCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using Stream = std::unique_ptr<std::FILE, StreamCloser>;

// 2x2 4:2:0 at 12 bits: 4 + 1 + 1 words = 12 bytes per frame.
const FrameGeometry kGeometry{2, 2, {ChromaLayout::k420, 12}};

TEST(RawYuvReaderTest, ReadsWholeFramesThenEndsCleanly) {
  std::string bytes;
  for (int i = 0; i < 24; ++i) bytes.push_back(static_cast<char>(i));
  Stream stream(fmemopen(bytes.data(), bytes.size(), "rb"));
  absl::StatusOr<RawYuvReader> reader = RawYuvReader::FromStream(stream.get(), "raw", kGeometry);
  ASSERT_TRUE(reader.ok()) << reader.status();
  Frame frame;
  ASSERT_TRUE(*reader->ReadFrame(&frame));
  EXPECT_EQ(frame.geometry(), kGeometry);
  EXPECT_EQ(frame.plane16(0)[0], 0x0100);
  ASSERT_TRUE(*reader->ReadFrame(&frame));
  EXPECT_EQ(frame.plane16(2)[0], 0x1716);
  absl::StatusOr<bool> more = reader->ReadFrame(&frame);
  ASSERT_TRUE(more.ok());
  EXPECT_FALSE(*more);
  EXPECT_EQ(reader->frames_read(), 2);
}

TEST(RawYuvReaderTest, PartialLastFrameIsDataLoss) {
  std::string bytes(12 + 7, '\0');
  Stream stream(fmemopen(bytes.data(), bytes.size(), "rb"));
  absl::StatusOr<RawYuvReader> reader = RawYuvReader::FromStream(stream.get(), "raw", kGeometry);
  ASSERT_TRUE(reader.ok());
  Frame frame;
  ASSERT_TRUE(*reader->ReadFrame(&frame));
  const absl::Status status = reader->ReadFrame(&frame).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(std::string(status.message()), "raw: frame 1 is truncated: 7 of 12 bytes (2x2 yuv420p12le)");
}

TEST(RawYuvReaderTest, RejectsInvalidGeometryAndMissingFile) {
  EXPECT_EQ(RawYuvReader::FromStream(stdin, "stdin", {2, 2, {ChromaLayout::k420, 6}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RawYuvReader::Open("/nonexistent/exactq/x.yuv", kGeometry).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace exactq
