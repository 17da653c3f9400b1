#include "engine/io/y4m_writer.h"

#include <fstream>
#include <sstream>
#include <string>

#include "engine/io/y4m_reader.h"
#include "gtest/gtest.h"

namespace exactq {
namespace {

std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Y4mHeader TinyHeader() {
  Y4mHeader header;
  header.geometry = {3, 1, {ChromaLayout::k422, 10}};
  header.frame_rate = {25, 1};
  header.pixel_aspect = {1, 1};
  header.interlace = 'p';
  header.color_range = ColorRange::kLimited;
  return header;
}

TEST(Y4mWriterTest, WritesFfmpegBytes) {
  const std::string path = ::testing::TempDir() + "/y4m_writer_test_tiny.y4m";
  const Y4mHeader header = TinyHeader();
  absl::StatusOr<Y4mWriter> writer = Y4mWriter::Create(path, header);
  ASSERT_TRUE(writer.ok()) << writer.status();
  absl::StatusOr<Frame> frame = Frame::Create(header.geometry);
  ASSERT_TRUE(frame.ok());
  // Y = 1, 2, 3; Cb = 0x3ff, 4 (2 samples: (3+1)/2); Cr = 5, 6.
  const uint32_t values[] = {1, 2, 3, 0x3ff, 4, 5, 6};
  for (int i = 0; i < 7; ++i) frame->mutable_plane16(0)[i] = static_cast<uint16_t>(values[i]);
  ASSERT_TRUE(writer->WriteFrame(*frame).ok());
  ASSERT_TRUE(writer->WriteFrame(*frame).ok());
  EXPECT_EQ(writer->frames_written(), 2);
  ASSERT_TRUE(writer->Close().ok());

  const std::string payload("\x01\x00\x02\x00\x03\x00\xff\x03\x04\x00\x05\x00\x06\x00", 14);
  EXPECT_EQ(ReadFileBytes(path),
            "YUV4MPEG2 W3 H1 F25:1 Ip A1:1 C422p10 XYSCSS=422P10 XCOLORRANGE=LIMITED\n"
            "FRAME\n" +
                payload + "FRAME\n" + payload);
}

TEST(Y4mWriterTest, WhatItWritesReadsBack) {
  const std::string path = ::testing::TempDir() + "/y4m_writer_test_roundtrip.y4m";
  Y4mHeader header = TinyHeader();
  header.geometry = {5, 3, {ChromaLayout::k420, 8}};
  absl::StatusOr<Frame> frame = Frame::Create(header.geometry);
  ASSERT_TRUE(frame.ok());
  for (size_t i = 0; i < frame->size_bytes(); ++i) {
    frame->mutable_bytes()[i] = static_cast<uint8_t>(i * 7);
  }
  {
    absl::StatusOr<Y4mWriter> writer = Y4mWriter::Create(path, header);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE(writer->WriteFrame(*frame).ok());
    ASSERT_TRUE(writer->Close().ok());
  }
  absl::StatusOr<Y4mReader> reader = Y4mReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ(reader->geometry(), header.geometry);
  Frame read;
  ASSERT_TRUE(*reader->ReadFrame(&read));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(read.bytes()), read.size_bytes()),
            std::string(reinterpret_cast<const char*>(frame->bytes()), frame->size_bytes()));
  EXPECT_FALSE(*reader->ReadFrame(&read));
}

TEST(Y4mWriterTest, RejectsAFrameOfAnotherGeometry) {
  const std::string path = ::testing::TempDir() + "/y4m_writer_test_mismatch.y4m";
  absl::StatusOr<Y4mWriter> writer = Y4mWriter::Create(path, TinyHeader());
  ASSERT_TRUE(writer.ok());
  absl::StatusOr<Frame> frame = Frame::Create({3, 1, {ChromaLayout::k422, 12}});
  ASSERT_TRUE(frame.ok());
  const absl::Status status = writer->WriteFrame(*frame);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("3x1 yuv422p12le"), absl::string_view::npos) << status;
}

TEST(Y4mWriterTest, RejectsInvalidGeometryAndUnwritablePath) {
  Y4mHeader header = TinyHeader();
  header.geometry.width = 0;
  EXPECT_EQ(Y4mWriter::Create(::testing::TempDir() + "/never.y4m", header).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(Y4mWriter::Create("/nonexistent/exactq/out.y4m", TinyHeader()).ok());
}

}  // namespace
}  // namespace exactq
