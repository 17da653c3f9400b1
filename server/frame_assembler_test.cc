#include "server/frame_assembler.h"

#include <memory_resource>
#include <string>
#include <vector>

#include "engine/format/testing/counting_resource.h"
#include "gtest/gtest.h"

namespace exactq::server {
namespace {

FrameGeometry Geometry3x3Yuv420() {
  FrameGeometry g;
  g.width = 3;
  g.height = 3;
  g.format = PixelFormat{ChromaLayout::k420, 8};
  return g;  // 9 + 2 * (2 * 2) = 17 bytes
}

v1::FrameChunk Chunk(uint64_t frame, v1::Picture picture, uint64_t offset, const std::string& data, bool last) {
  v1::FrameChunk c;
  c.set_frame_index(frame);
  c.set_picture(picture);
  c.set_offset(offset);
  c.set_data(data);
  c.set_last(last);
  return c;
}

TEST(FrameAssemblerTest, ReassemblesInterleavedChunksIntoWholePictures) {
  FrameAssembler a(Geometry3x3Yuv420(), 1 << 20);
  const auto t = Clock::now();
  const std::string ref(17, '\x10'), dist(17, '\x20');
  ASSERT_TRUE(a.Add(Chunk(0, v1::PICTURE_REFERENCE, 0, ref.substr(0, 10), false), t).ok());
  ASSERT_TRUE(a.Add(Chunk(0, v1::PICTURE_DISTORTED, 0, dist, true), t).ok());
  EXPECT_FALSE(a.FrameReady());
  EXPECT_TRUE(a.HasPartialFrame());
  ASSERT_TRUE(a.Add(Chunk(0, v1::PICTURE_REFERENCE, 10, ref.substr(10), true), t).ok());
  ASSERT_TRUE(a.FrameReady());
  AssembledFrame f = a.TakeFrame();
  EXPECT_EQ(f.index, 0u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(f.reference.bytes()), 17), ref);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(f.distorted.bytes()), 17), dist);
  EXPECT_FALSE(a.HasPartialFrame());
  EXPECT_EQ(a.next_frame_index(), 1u);
}

TEST(FrameAssemblerTest, RecycledBuffersCarryTheNextFrame) {
  FrameAssembler a(Geometry3x3Yuv420(), 1 << 20);
  const auto t = Clock::now();
  ASSERT_TRUE(a.Add(Chunk(0, v1::PICTURE_REFERENCE, 0, std::string(17, 'a'), true), t).ok());
  ASSERT_TRUE(a.Add(Chunk(0, v1::PICTURE_DISTORTED, 0, std::string(17, 'b'), true), t).ok());
  AssembledFrame first = a.TakeFrame();
  const uint8_t* reference_buffer = first.reference.bytes();
  a.Recycle(std::move(first));
  ASSERT_TRUE(a.Add(Chunk(1, v1::PICTURE_REFERENCE, 0, std::string(17, 'c'), true), t).ok());
  ASSERT_TRUE(a.Add(Chunk(1, v1::PICTURE_DISTORTED, 0, std::string(17, 'd'), true), t).ok());
  AssembledFrame second = a.TakeFrame();
  EXPECT_EQ(second.index, 1u);
  EXPECT_EQ(second.reference.bytes(), reference_buffer);  // the same allocation, reused
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(second.reference.bytes()), 17), std::string(17, 'c'));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(second.distorted.bytes()), 17), std::string(17, 'd'));
}

using testing_memory::CountingResource;

TEST(FrameAssemblerTest, PicturesComeFromTheGivenMemoryAndAreRecycledThere) {
  CountingResource memory;
  {
    FrameAssembler a(Geometry3x3Yuv420(), 1 << 20, &memory);
    const auto t = Clock::now();
    for (uint64_t frame = 0; frame < 5; ++frame) {
      ASSERT_TRUE(a.Add(Chunk(frame, v1::PICTURE_REFERENCE, 0, std::string(17, 'a'), true), t).ok());
      ASSERT_TRUE(a.Add(Chunk(frame, v1::PICTURE_DISTORTED, 0, std::string(17, 'b'), true), t).ok());
      AssembledFrame f = a.TakeFrame();
      EXPECT_EQ(f.reference.memory_resource(), &memory);
      EXPECT_EQ(f.distorted.memory_resource(), &memory);
      a.Recycle(std::move(f));
    }
    EXPECT_EQ(memory.allocations, 2);  // one pair, reused for every frame
  }
  EXPECT_EQ(memory.live, 0);
}

TEST(FrameAssemblerTest, FramesFollowEachOtherWithoutRecycling) {
  // With frames in flight the taken frames are still being scored: the next frame
  // gets buffers of its own, and the taken one keeps its bytes.
  FrameAssembler a(Geometry3x3Yuv420(), 1 << 20);
  const auto t = Clock::now();
  std::vector<AssembledFrame> taken;
  for (uint64_t i = 0; i < 3; ++i) {
    const std::string ref(17, static_cast<char>(0x10 + i)), dist(17, static_cast<char>(0x20 + i));
    ASSERT_TRUE(a.Add(Chunk(i, v1::PICTURE_REFERENCE, 0, ref, true), t).ok());
    ASSERT_TRUE(a.Add(Chunk(i, v1::PICTURE_DISTORTED, 0, dist, true), t).ok());
    ASSERT_TRUE(a.FrameReady());
    taken.push_back(a.TakeFrame());
  }
  for (uint64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(taken[i].index, i);
    EXPECT_EQ(taken[i].reference.bytes()[16], 0x10 + i);
    EXPECT_EQ(taken[i].distorted.bytes()[0], 0x20 + i);
  }
}

TEST(FrameAssemblerTest, RejectsAGapInOffsets) {
  FrameAssembler a(Geometry3x3Yuv420(), 1 << 20);
  ASSERT_TRUE(a.Add(Chunk(0, v1::PICTURE_REFERENCE, 0, "abcd", false), Clock::now()).ok());
  absl::Status s = a.Add(Chunk(0, v1::PICTURE_REFERENCE, 5, "x", false), Clock::now());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("chunk.offset: expected 4, got 5"), absl::string_view::npos) << s;
}

TEST(FrameAssemblerTest, RejectsFramesOutOfOrder) {
  FrameAssembler a(Geometry3x3Yuv420(), 1 << 20);
  absl::Status s = a.Add(Chunk(1, v1::PICTURE_REFERENCE, 0, "abcd", false), Clock::now());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("chunk.frame_index"), absl::string_view::npos) << s;
}

TEST(FrameAssemblerTest, RejectsAPictureOfTheWrongSize) {
  FrameAssembler a(Geometry3x3Yuv420(), 1 << 20);
  absl::Status short_last = a.Add(Chunk(0, v1::PICTURE_REFERENCE, 0, std::string(16, 'a'), true), Clock::now());
  EXPECT_EQ(short_last.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(short_last.message().find("chunk.last: picture ended at byte 16, expected 17"), absl::string_view::npos)
      << short_last;
  FrameAssembler b(Geometry3x3Yuv420(), 1 << 20);
  absl::Status too_long = b.Add(Chunk(0, v1::PICTURE_DISTORTED, 0, std::string(18, 'a'), false), Clock::now());
  EXPECT_EQ(too_long.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(too_long.message().find("past the picture size 17"), absl::string_view::npos) << too_long;
}

TEST(FrameAssemblerTest, RejectsUnspecifiedPictureAndOversizeChunk) {
  FrameAssembler a(Geometry3x3Yuv420(), 8);
  EXPECT_EQ(a.Add(Chunk(0, v1::PICTURE_UNSPECIFIED, 0, "a", false), Clock::now()).code(),
            absl::StatusCode::kInvalidArgument);
  absl::Status big = a.Add(Chunk(0, v1::PICTURE_REFERENCE, 0, std::string(9, 'a'), false), Clock::now());
  EXPECT_EQ(big.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(big.message().find("max_chunk_bytes=8"), absl::string_view::npos) << big;
}

TEST(FrameAssemblerTest, RejectsChunksAfterAPictureIsComplete) {
  FrameAssembler a(Geometry3x3Yuv420(), 1 << 20);
  ASSERT_TRUE(a.Add(Chunk(0, v1::PICTURE_REFERENCE, 0, std::string(17, 'a'), true), Clock::now()).ok());
  EXPECT_EQ(a.Add(Chunk(0, v1::PICTURE_REFERENCE, 17, "", true), Clock::now()).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace exactq::server
