// DeviceFrameBuffer on a GPU: both pictures of every pair start aligned, whatever the
// pairs before them left the buffer sized for, and hold the host frames' bytes (skips
// without a GPU); admission counts those aligned rooms.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "engine/format/frame.h"
#include "engine/platform/device_frame_buffer.h"
#include "engine/platform/testing/cuda_device.h"
#include "gtest/gtest.h"

namespace exactq {
namespace {

class DeviceFrameBufferCudaTest : public ::testing::Test {
 protected:
  void SetUp() override { EXACTQ_SKIP_WITHOUT_CUDA_DEVICE(); }
};

Frame Filled(const FrameGeometry& g, uint8_t seed) {
  Frame f = *Frame::Create(g);
  for (size_t i = 0; i < f.size_bytes(); ++i) f.mutable_bytes()[i] = static_cast<uint8_t>(seed + i * 7);
  return f;
}

std::vector<uint8_t> Download(const uint8_t* device, size_t bytes) {
  std::vector<uint8_t> host(bytes);
  EXPECT_EQ(cudaMemcpy(host.data(), device, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  return host;
}

// An odd-sized 8-bit pair first (1,567 bytes a picture), then 16-bit pairs that fit in
// its room: the distorted picture, which follows the reference in the buffer, must not
// start at an odd address (16-bit loads there fault).
TEST_F(DeviceFrameBufferCudaTest, EveryPairStartsAlignedAndHoldsTheHostBytes) {
  const FrameGeometry geometries[] = {
      {33, 31, {ChromaLayout::k420, 8}}, {8, 8, {ChromaLayout::k420, 16}},    {9, 7, {ChromaLayout::k444, 8}},
      {5, 3, {ChromaLayout::k422, 10}},  {577, 323, {ChromaLayout::k444, 8}}, {33, 31, {ChromaLayout::k420, 10}},
  };
  ASSERT_EQ(FrameGeometry(geometries[0]).frame_bytes() % 2, 1u);
  DeviceFrameBuffer buffer(0);
  uint8_t seed = 1;
  for (const FrameGeometry& g : geometries) {
    const Frame ref = Filled(g, seed++);
    const Frame dis = Filled(g, seed++);
    absl::StatusOr<DeviceFramePair> pair = buffer.Upload(ref, dis, g.plane_count(), nullptr);
    ASSERT_TRUE(pair.ok()) << pair.status();
    ASSERT_EQ(cudaStreamSynchronize(nullptr), cudaSuccess);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(pair->reference) % 256, 0u) << g.width << "x" << g.height;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(pair->distorted) % 256, 0u) << g.width << "x" << g.height;
    EXPECT_EQ(Download(pair->reference, g.frame_bytes()),
              std::vector<uint8_t>(ref.bytes(), ref.bytes() + g.frame_bytes()));
    EXPECT_EQ(Download(pair->distorted, g.frame_bytes()),
              std::vector<uint8_t>(dis.bytes(), dis.bytes() + g.frame_bytes()));
  }
}

// Admission counts the rooms the buffer keeps: each picture rounded up to 256 bytes
// (plain arithmetic: runs without a GPU).
TEST(DeviceFrameBufferBytesTest, AdmissionCountsTheAlignedRooms) {
  const FrameGeometry odd{33, 31, {ChromaLayout::k420, 8}};  // 1,567 bytes a picture
  EXPECT_EQ(DeviceFrameBuffer::DeviceBytes(odd, 3), 2u * 1792);
  EXPECT_EQ(DeviceFrameBuffer::DeviceBytes(odd, 1), 2u * 1024);               // luma alone: 1,023
  EXPECT_EQ(DeviceFrameBuffer::DeviceBytes(odd, 1, true), 2u * 1024 + 1023);  // and the previous luma
  const FrameGeometry even{64, 64, {ChromaLayout::k420, 8}};                  // 6,144 bytes
  EXPECT_EQ(DeviceFrameBuffer::DeviceBytes(even, 3), 2u * 6144);
}

}  // namespace
}  // namespace exactq
