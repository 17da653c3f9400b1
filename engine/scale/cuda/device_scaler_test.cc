// DeviceScaler against the host scaler (the definition), byte for byte: random pictures
// in every layout at 8 and 10 bits, down and up, put on the GPU as a decoder leaves them.
// Skips without a GPU.
#include "engine/scale/device_scaler.h"
#include "engine/platform/testing/cuda_device.h"

#include <cuda_runtime_api.h>

#include <cstring>
#include <random>

#include "absl/strings/str_cat.h"
#include "engine/format/frame.h"
#include "engine/platform/copy_to_device.h"
#include "engine/platform/device_picture_pool.h"
#include "engine/scale/bicubic_scaler.h"
#include "gtest/gtest.h"

namespace exactq::scale {
namespace {

Frame Noise(const FrameGeometry& g, std::mt19937* rng) {
  Frame frame = *Frame::Create(g);
  const uint32_t top = (1u << g.format.bit_depth) - 1;
  for (int p = 0; p < g.plane_count(); ++p) {
    for (int y = 0; y < g.plane_height(p); ++y) {
      for (int x = 0; x < g.plane_width(p); ++x) frame.set_sample(p, x, y, (*rng)() % (top + 1));
    }
  }
  return frame;
}

TEST(DeviceScalerTest, GivesTheHostScalersSamples) {
  EXACTQ_SKIP_WITHOUT_CUDA_DEVICE();
  ASSERT_TRUE(DeviceScaler::Available());
  std::mt19937 rng(7);
  const struct {
    int sw, sh, tw, th;
  } sizes[] = {{64, 36, 192, 108}, {128, 72, 96, 54}, {99, 57, 160, 90}, {160, 90, 160, 120}};
  for (ChromaLayout layout : {ChromaLayout::k420, ChromaLayout::k422, ChromaLayout::k444}) {
    for (int depth : {8, 10}) {
      for (const auto& s : sizes) {
        const FrameGeometry source{s.sw, s.sh, {layout, depth}};
        const FrameGeometry target{s.tw, s.th, {layout, depth}};
        SCOPED_TRACE(absl::StrCat(GeometryDescription(source), " to ", GeometryDescription(target)));
        const Frame picture = Noise(source, &rng);
        absl::StatusOr<BicubicScaler> host = BicubicScaler::Create(source, target);
        ASSERT_TRUE(host.ok()) << host.status();
        Frame want = *Frame::Create(target);
        ASSERT_TRUE(host->Scale(picture, &want, nullptr).ok());

        std::shared_ptr<DevicePicturePool> pool = DevicePicturePool::Create(0, source.frame_bytes());
        absl::StatusOr<std::shared_ptr<DevicePicturePool::Picture>> on_gpu = pool->Take();
        ASSERT_TRUE(on_gpu.ok()) << on_gpu.status();
        // As a decoder leaves it: whole before the scaler's stream (non-blocking) reads it.
        ASSERT_EQ(CopyToDeviceAndWait((*on_gpu)->mutable_bytes(), picture.bytes(), picture.size_bytes()), cudaSuccess);
        absl::StatusOr<std::unique_ptr<DeviceScaler>> scaler = DeviceScaler::Create(0, source, target);
        ASSERT_TRUE(scaler.ok()) << scaler.status();
        absl::StatusOr<std::shared_ptr<const DevicePicture>> scaled = (*scaler)->Scale(**on_gpu);
        ASSERT_TRUE(scaled.ok()) << scaled.status();
        EXPECT_EQ((*scaled)->device(), 0);
        Frame got = *Frame::Create(target);
        ASSERT_TRUE((*scaled)->CopyToHost(got.mutable_bytes(), got.size_bytes()).ok());
        for (int p = 0; p < target.plane_count(); ++p) {
          ASSERT_EQ(std::memcmp(got.plane_bytes(p), want.plane_bytes(p), target.plane_bytes(p)), 0) << "plane " << p;
        }
      }
    }
  }
}

}  // namespace
}  // namespace exactq::scale
