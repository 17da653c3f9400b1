#include "engine/io/y4m_reader.h"

#include <cstdio>
#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace exactq {
namespace {

// An in-memory FILE* (POSIX fmemopen) over `bytes`, closed with the returned handle.
struct StreamCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using Stream = std::unique_ptr<std::FILE, StreamCloser>;

Stream MemoryStream(std::string& bytes) {
  // fmemopen rejects size 0.
  if (bytes.empty()) return Stream(std::fopen("/dev/null", "rb"));
  return Stream(fmemopen(bytes.data(), bytes.size(), "rb"));
}

// A 3x3 4:2:0 8-bit frame: 9 luma + 2x4 chroma = 17 bytes.
std::string FramePayload(char fill) { return std::string(17, fill); }

TEST(Y4mReaderTest, ReadsFramesUntilCleanEnd) {
  std::string bytes =
      "YUV4MPEG2 W3 H3 F30:1 C420jpeg\nFRAME\n" + FramePayload('a') + "FRAME Ixyz\n" + FramePayload('b');
  Stream stream = MemoryStream(bytes);
  absl::StatusOr<Y4mReader> reader = Y4mReader::FromStream(stream.get(), "memory");
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ(reader->geometry(), (FrameGeometry{3, 3, {ChromaLayout::k420, 8}}));
  EXPECT_EQ(reader->frame_rate(), (Y4mRatio{30, 1}));
  EXPECT_FALSE(reader->color_range().has_value());

  Frame frame;
  absl::StatusOr<bool> more = reader->ReadFrame(&frame);
  ASSERT_TRUE(more.ok()) << more.status();
  EXPECT_TRUE(*more);
  EXPECT_EQ(frame.geometry(), reader->geometry());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(frame.bytes()), frame.size_bytes()), FramePayload('a'));

  more = reader->ReadFrame(&frame);
  ASSERT_TRUE(more.ok()) << more.status();
  EXPECT_TRUE(*more);
  EXPECT_EQ(frame.plane8(2)[3], 'b');

  more = reader->ReadFrame(&frame);
  ASSERT_TRUE(more.ok()) << more.status();
  EXPECT_FALSE(*more);
  EXPECT_EQ(reader->frames_read(), 2);
}

TEST(Y4mReaderTest, HeaderOnlyStreamHasNoFrames) {
  std::string bytes = "YUV4MPEG2 W3 H3\n";
  Stream stream = MemoryStream(bytes);
  absl::StatusOr<Y4mReader> reader = Y4mReader::FromStream(stream.get(), "memory");
  ASSERT_TRUE(reader.ok());
  Frame frame;
  absl::StatusOr<bool> more = reader->ReadFrame(&frame);
  ASSERT_TRUE(more.ok());
  EXPECT_FALSE(*more);
}

absl::Status ReadAll(std::string bytes) {
  Stream stream = MemoryStream(bytes);
  absl::StatusOr<Y4mReader> reader = Y4mReader::FromStream(stream.get(), "memory");
  if (!reader.ok()) return reader.status();
  Frame frame;
  while (true) {
    absl::StatusOr<bool> more = reader->ReadFrame(&frame);
    if (!more.ok()) return more.status();
    if (!*more) return absl::OkStatus();
  }
}

TEST(Y4mReaderTest, TruncatedFrameIsDataLossNamingTheFrame) {
  const absl::Status status =
      ReadAll("YUV4MPEG2 W3 H3\nFRAME\n" + FramePayload('a') + "FRAME\n" + FramePayload('b').substr(0, 5));
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(std::string(status.message()), "memory: frame 1 is truncated: 5 of 17 bytes (3x3 yuv420p)");
}

TEST(Y4mReaderTest, FrameWithoutPixelsIsTruncated) {
  const absl::Status status = ReadAll("YUV4MPEG2 W3 H3\nFRAME\n");
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(status.message().find("frame 0 is truncated: 0 of 17"), absl::string_view::npos);
}

TEST(Y4mReaderTest, CutFrameLineIsDataLoss) {
  const absl::Status status = ReadAll("YUV4MPEG2 W3 H3\nFRAME\n" + FramePayload('a') + "FRA");
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(status.message().find("frame 1"), absl::string_view::npos) << status;
}

TEST(Y4mReaderTest, MissingFrameMarkerIsInvalid) {
  // One byte too many in frame 0 shifts frame 1's marker.
  const absl::Status status = ReadAll("YUV4MPEG2 W3 H3\nFRAME\n" + FramePayload('a') + "xFRAME\n" + FramePayload('b'));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("frame 1 does not start with a FRAME line"), absl::string_view::npos) << status;
  EXPECT_EQ(ReadAll("YUV4MPEG2 W3 H3\nFRAMES\n" + FramePayload('a')).code(), absl::StatusCode::kInvalidArgument);
}

TEST(Y4mReaderTest, ErrorsAreSticky) {
  std::string bytes = "YUV4MPEG2 W3 H3\nJUNK\n" + FramePayload('a');
  Stream stream = MemoryStream(bytes);
  absl::StatusOr<Y4mReader> reader = Y4mReader::FromStream(stream.get(), "memory");
  ASSERT_TRUE(reader.ok());
  Frame frame;
  const absl::Status first = reader->ReadFrame(&frame).status();
  EXPECT_FALSE(first.ok());
  EXPECT_EQ(reader->ReadFrame(&frame).status(), first);
}

TEST(Y4mReaderTest, BadOrMissingHeader) {
  EXPECT_EQ(ReadAll("").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadAll("YUV4MPEG2 W3 H3").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadAll(std::string(10000, 'x')).code(), absl::StatusCode::kInvalidArgument);
  const absl::Status status = ReadAll("YUV4MPEG2 W3 H3 C411\n");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("memory: Y4M header tag 'C411'"), absl::string_view::npos) << status;
}

TEST(Y4mReaderTest, OpenMissingFileIsNotFound) {
  EXPECT_EQ(Y4mReader::Open("/nonexistent/exactq/none.y4m").status().code(), absl::StatusCode::kNotFound);
}

TEST(Y4mReaderTest, SixteenBitFrameIsReadAsLittleEndianWords) {
  std::string bytes = "YUV4MPEG2 W1 H1 C444p16\nFRAME\n";
  bytes += std::string("\x01\x02\x03\x04\xff\xff", 6);
  Stream stream = MemoryStream(bytes);
  absl::StatusOr<Y4mReader> reader = Y4mReader::FromStream(stream.get(), "memory");
  ASSERT_TRUE(reader.ok());
  Frame frame;
  ASSERT_TRUE(*reader->ReadFrame(&frame));
  EXPECT_EQ(frame.plane16(0)[0], 0x0201);
  EXPECT_EQ(frame.plane16(1)[0], 0x0403);
  EXPECT_EQ(frame.plane16(2)[0], 0xffff);
}

}  // namespace
}  // namespace exactq
