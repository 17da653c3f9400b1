#include "engine/format/frame.h"

#include <cstring>
#include <memory>
#include <memory_resource>
#include <string>
#include <utility>
#include <vector>

#include "engine/format/testing/counting_resource.h"
#include "gtest/gtest.h"

namespace exactq {
namespace {

TEST(FrameTest, CreateIsZeroFilledAndSized) {
  const FrameGeometry g{17, 33, {ChromaLayout::k420, 8}};
  absl::StatusOr<Frame> frame = Frame::Create(g);
  ASSERT_TRUE(frame.ok()) << frame.status();
  EXPECT_EQ(frame->geometry(), g);
  EXPECT_EQ(frame->size_bytes(), 867u);
  for (size_t i = 0; i < frame->size_bytes(); ++i) ASSERT_EQ(frame->bytes()[i], 0) << i;
}

TEST(FrameTest, CreateRejectsInvalidGeometry) {
  EXPECT_EQ(Frame::Create({0, 4, {}}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(FrameTest, SixteenBitPlanesReadTheLittleEndianWireWords) {
  const FrameGeometry g{2, 2, {ChromaLayout::k420, 10}};
  absl::StatusOr<Frame> frame = Frame::Create(g);
  ASSERT_TRUE(frame.ok());
  // Wire bytes: Y = 4 words, Cb = 1 word, Cr = 1 word.
  const uint8_t wire[] = {0x01, 0x00, 0xff, 0x03, 0x00, 0x02, 0x34, 0x01, 0x00, 0x01, 0x10, 0x00};
  ASSERT_EQ(frame->size_bytes(), sizeof(wire));
  std::memcpy(frame->mutable_bytes(), wire, sizeof(wire));
  EXPECT_EQ(frame->plane16(0)[0], 1);
  EXPECT_EQ(frame->plane16(0)[1], 1023);
  EXPECT_EQ(frame->plane16(0)[2], 512);
  EXPECT_EQ(frame->plane16(0)[3], 0x134);
  EXPECT_EQ(frame->plane16(1)[0], 256);
  EXPECT_EQ(frame->plane16(2)[0], 16);
  EXPECT_EQ(frame->sample(0, 1, 1), 0x134u);
  EXPECT_EQ(frame->plane_bytes(2) - frame->bytes(), 10);
}

TEST(FrameTest, SetSampleWritesTheWireLayout) {
  const FrameGeometry g{3, 1, {ChromaLayout::k444, 12}};
  absl::StatusOr<Frame> frame = Frame::Create(g);
  ASSERT_TRUE(frame.ok());
  frame->set_sample(1, 2, 0, 0xabc);
  // Cb starts after 3 luma words (6 bytes); column 2 is 4 bytes further.
  EXPECT_EQ(frame->bytes()[10], 0xbc);
  EXPECT_EQ(frame->bytes()[11], 0x0a);
  EXPECT_EQ(frame->sample(1, 2, 0), 0xabcu);
}

TEST(FrameTest, ResetChangesGeometryAndKeepsBufferUsable) {
  Frame frame;
  EXPECT_EQ(frame.size_bytes(), 0u);
  ASSERT_TRUE(frame.Reset({4, 4, {ChromaLayout::k444, 16}}).ok());
  EXPECT_EQ(frame.size_bytes(), 96u);
  ASSERT_TRUE(frame.Reset({3, 3, {ChromaLayout::k420, 8}}).ok());
  EXPECT_EQ(frame.size_bytes(), 9u + 2 * 4);
  EXPECT_FALSE(frame.Reset({3, 3, {ChromaLayout::k420, 20}}).ok());
  EXPECT_EQ(frame.geometry().format.bit_depth, 8);  // unchanged after a failed Reset
}

TEST(FrameTest, SampleRangeAcceptsTheLargestLegalValue) {
  for (int depth = 8; depth <= 16; ++depth) {
    absl::StatusOr<Frame> frame = Frame::Create({5, 3, {ChromaLayout::k420, depth}});
    ASSERT_TRUE(frame.ok());
    const uint32_t max_value = (1u << depth) - 1;
    for (int plane = 0; plane < 3; ++plane) {
      frame->set_sample(plane, frame->geometry().plane_width(plane) - 1, frame->geometry().plane_height(plane) - 1,
                        max_value);
    }
    EXPECT_TRUE(ValidateSampleRange(*frame).ok()) << depth;
  }
}

TEST(FrameTest, SampleRangeNamesPlaneRowAndColumn) {
  absl::StatusOr<Frame> frame = Frame::Create({7, 5, {ChromaLayout::k420, 10}});
  ASSERT_TRUE(frame.ok());
  frame->set_sample(1, 2, 1, 1024);  // Cb is 4x3
  frame->set_sample(2, 0, 0, 4000);  // later in wire order: not reported
  const absl::Status status = ValidateSampleRange(*frame);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(status.message()),
            "sample value 1024 in plane 1 (Cb) at row 1, column 2 exceeds 1023, the largest "
            "10-bit value");
}

using testing_memory::CountingResource;

TEST(FrameTest, StorageComesFromTheGivenResource) {
  CountingResource resource;
  {
    absl::StatusOr<Frame> frame = Frame::Create({16, 8, {ChromaLayout::k420, 10}}, &resource);
    ASSERT_TRUE(frame.ok());
    EXPECT_EQ(frame->memory_resource(), &resource);
    EXPECT_EQ(resource.live, 1);
    for (size_t i = 0; i < frame->size_bytes(); ++i) ASSERT_EQ(frame->bytes()[i], 0) << i;
    // Reset to a smaller geometry keeps the allocation; a larger one grows it in place.
    ASSERT_TRUE(frame->Reset({8, 8, {ChromaLayout::k420, 8}}).ok());
    EXPECT_EQ(resource.allocations, 1);
    ASSERT_TRUE(frame->Reset({32, 32, {ChromaLayout::k444, 16}}).ok());
    EXPECT_EQ(resource.allocations, 2);
    EXPECT_EQ(frame->memory_resource(), &resource);
    EXPECT_EQ(resource.live, 1);
  }
  EXPECT_EQ(resource.live, 0);
}

TEST(FrameTest, MovesKeepTheBufferAndCopiesGoToTheDefaultResource) {
  CountingResource resource;
  const FrameGeometry g{6, 4, {ChromaLayout::k420, 8}};
  Frame a = *Frame::Create(g, &resource);
  a.set_sample(0, 1, 2, 77);
  const uint8_t* buffer = a.bytes();

  Frame copy = a;
  EXPECT_EQ(copy.memory_resource(), std::pmr::get_default_resource());
  EXPECT_NE(copy.bytes(), buffer);
  EXPECT_EQ(copy.sample(0, 1, 2), 77u);

  Frame moved = std::move(a);
  EXPECT_EQ(moved.bytes(), buffer);
  EXPECT_EQ(moved.memory_resource(), &resource);

  // Move assignment onto a frame of another resource hands the buffer over too.
  Frame target = *Frame::Create(g);
  target = std::move(moved);
  EXPECT_EQ(target.bytes(), buffer);
  EXPECT_EQ(target.memory_resource(), &resource);
  EXPECT_EQ(target.sample(0, 1, 2), 77u);
  EXPECT_EQ(resource.allocations, 1);

  // Copy assignment keeps the target's resource.
  Frame other = *Frame::Create(g, &resource);
  other = copy;
  EXPECT_EQ(other.memory_resource(), &resource);
  EXPECT_EQ(other.sample(0, 1, 2), 77u);
  EXPECT_EQ(resource.live, 2);
}

// A device picture kept in host memory: Frame's bookkeeping is the same whatever memory
// holds the picture (the GPU's own is tested in engine/decode:gpu_decode_test).
class HostHeldPicture final : public DevicePicture {
 public:
  explicit HostHeldPicture(std::vector<uint8_t> bytes) : bytes_(std::move(bytes)) {}
  int device() const override { return 0; }
  const uint8_t* bytes() const override { return bytes_.data(); }
  absl::Status CopyToHost(uint8_t* host, size_t size) const override {
    if (size > bytes_.size()) return absl::OutOfRangeError("larger than the picture");
    std::memcpy(host, bytes_.data(), size);
    ++copies;
    return absl::OkStatus();
  }
  mutable int copies = 0;

 private:
  std::vector<uint8_t> bytes_;
};

TEST(FrameTest, ADevicePictureStandsForTheHostBytesUntilCopied) {
  const FrameGeometry g{6, 4, {ChromaLayout::k420, 8}};
  std::vector<uint8_t> pixels(g.frame_bytes());
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(3 * i + 1);
  auto picture = std::make_shared<HostHeldPicture>(pixels);
  Frame frame = *Frame::Create(g);
  EXPECT_TRUE(frame.host_bytes_valid());
  EXPECT_EQ(frame.device_picture(), nullptr);

  frame.SetDevicePicture(picture);
  EXPECT_FALSE(frame.host_bytes_valid());
  EXPECT_EQ(frame.device_picture(), picture.get());

  // A const reader gets a scratch copy; the frame itself is unchanged.
  Frame scratch;
  absl::StatusOr<const Frame*> readable = HostReadable(frame, &scratch);
  ASSERT_TRUE(readable.ok()) << readable.status();
  EXPECT_EQ(*readable, &scratch);
  EXPECT_EQ(std::vector<uint8_t>(scratch.bytes(), scratch.bytes() + scratch.size_bytes()), pixels);
  EXPECT_FALSE(frame.host_bytes_valid());

  // Copying to the frame's own bytes keeps the device picture.
  ASSERT_TRUE(frame.CopyDeviceToHost().ok());
  EXPECT_TRUE(frame.host_bytes_valid());
  EXPECT_EQ(frame.device_picture(), picture.get());
  EXPECT_EQ(std::vector<uint8_t>(frame.bytes(), frame.bytes() + frame.size_bytes()), pixels);
  EXPECT_EQ(*HostReadable(frame, &scratch), &frame);
  ASSERT_TRUE(frame.CopyDeviceToHost().ok());
  EXPECT_EQ(picture->copies, 2);  // the scratch copy and the frame's own, not a third

  // Copies share the picture; Reset lets go of it.
  Frame copy = frame;
  EXPECT_EQ(copy.device_picture(), picture.get());
  EXPECT_EQ(picture.use_count(), 3);
  ASSERT_TRUE(copy.Reset(g).ok());
  ASSERT_TRUE(frame.Reset(g).ok());
  EXPECT_EQ(frame.device_picture(), nullptr);
  EXPECT_TRUE(frame.host_bytes_valid());
  EXPECT_EQ(picture.use_count(), 1);
}

}  // namespace
}  // namespace exactq
