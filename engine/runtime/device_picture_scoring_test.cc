// Frames whose pixels are on the GPU (Frame::device_picture, as the GPU decoder makes
// them) score with the same bits as host frames: on the GPU read in place (psnr, ssim)
// or copied device to device into the scorer's own frame (ssimulacra2 replays a graph
// captured with fixed addresses), with no host-to-device bytes; on the CPU copied down
// first. Skips without a GPU.
#include <cuda_runtime_api.h>

#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "engine/format/device_picture.h"
#include "engine/format/frame.h"
#include "engine/runtime/frame_scorer.h"
#include "engine/runtime/gpu_scorer.h"
#include "gtest/gtest.h"

namespace exactq {
namespace {

// A host frame's bytes copied into device memory of `device`.
class UploadedPicture final : public DevicePicture {
 public:
  static std::shared_ptr<UploadedPicture> Of(const Frame& frame, int device) {
    auto picture = std::shared_ptr<UploadedPicture>(new UploadedPicture(device, frame.size_bytes()));
    cudaSetDevice(device);
    if (cudaMalloc(&picture->bytes_, frame.size_bytes()) != cudaSuccess) return nullptr;
    if (cudaMemcpy(picture->bytes_, frame.bytes(), frame.size_bytes(), cudaMemcpyHostToDevice) != cudaSuccess) {
      return nullptr;
    }
    return picture;
  }
  ~UploadedPicture() override { cudaFree(bytes_); }
  int device() const override { return device_; }
  const uint8_t* bytes() const override { return static_cast<const uint8_t*>(bytes_); }
  absl::Status CopyToHost(uint8_t* host, size_t size) const override {
    if (size > size_ || cudaMemcpy(host, bytes_, size, cudaMemcpyDeviceToHost) != cudaSuccess) {
      return absl::InternalError("cudaMemcpy");
    }
    return absl::OkStatus();
  }

 private:
  UploadedPicture(int device, size_t size) : device_(device), size_(size) {}
  int device_;
  size_t size_;
  void* bytes_ = nullptr;
};

uint64_t Bits(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

Frame Noise(const FrameGeometry& g, uint32_t seed) {
  Frame frame = *Frame::Create(g);
  std::mt19937 rng(seed);
  const uint32_t top = (1u << g.format.bit_depth) - 1;
  for (int p = 0; p < g.plane_count(); ++p) {
    for (int y = 0; y < g.plane_height(p); ++y) {
      for (int x = 0; x < g.plane_width(p); ++x) frame.set_sample(p, x, y, (rng() % 200 + x + y) % (top + 1));
    }
  }
  return frame;
}

// A copy of `frame` whose pixels are on the GPU only (its host bytes scrambled, so a
// scorer that read them would give other scores).
Frame OnDevice(const Frame& frame, int device) {
  Frame out = frame;
  out.SetDevicePicture(UploadedPicture::Of(frame, device));
  for (size_t i = 0; i < out.size_bytes(); ++i) out.mutable_bytes()[i] = static_cast<uint8_t>(i * 131 + 7);
  return out;
}

TEST(DevicePictureScoringTest, GpuAndCpuGiveTheHostFramesBits) {
  absl::StatusOr<std::vector<GpuDevice>> gpus = ListGpuDevices();
  if (!gpus.ok()) GTEST_SKIP() << gpus.status();
  const std::vector<MetricSpec> metrics = {{"psnr", {}}, {"ssim", {}}, {"ssimulacra2", {}}};
  for (const PixelFormat format : {PixelFormat{ChromaLayout::k420, 8}, PixelFormat{ChromaLayout::k420, 10}}) {
    const FrameGeometry g{160, 96, format};
    SCOPED_TRACE(GeometryDescription(g));
    const Frame ref = Noise(g, 1), dist = Noise(g, 2);
    absl::StatusOr<std::unique_ptr<FrameScorer>> cpu = FrameScorer::Create(g, metrics, BackendPreference::kCpu);
    ASSERT_TRUE(cpu.ok()) << cpu.status();
    absl::StatusOr<ScoredFrame> want = (*cpu)->ScoreInStream(ref, dist, nullptr);
    ASSERT_TRUE(want.ok()) << want.status();

    const Frame ref_on_gpu = OnDevice(ref, 0), dist_on_gpu = OnDevice(dist, 0);
    ASSERT_NE(ref_on_gpu.device_picture(), nullptr);
    ASSERT_FALSE(ref_on_gpu.host_bytes_valid());
    absl::StatusOr<std::unique_ptr<FrameScorer>> gpu = FrameScorer::Create(g, metrics, BackendPreference::kCuda);
    ASSERT_TRUE(gpu.ok()) << gpu.status();
    ASSERT_EQ((*gpu)->gpu(), 0);
    for (int frame = 0; frame < 3; ++frame) {  // the graph's capture, then its replays
      absl::StatusOr<ScoredFrame> got = (*gpu)->ScoreInStream(ref_on_gpu, dist_on_gpu, nullptr);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(got->backend, Backend::kCuda);
      EXPECT_EQ(got->host_to_device_bytes, 0u) << "pictures on the device were uploaded";
      ASSERT_EQ(got->scores.size(), want->scores.size());
      for (size_t i = 0; i < want->scores.size(); ++i) {
        EXPECT_EQ(Bits(got->scores[i].value), Bits(want->scores[i].value)) << want->scores[i].name;
      }
    }
    // The CPU's paths copy the pictures down.
    absl::StatusOr<ScoredFrame> down = (*cpu)->ScoreInStream(ref_on_gpu, dist_on_gpu, nullptr);
    ASSERT_TRUE(down.ok()) << down.status();
    for (size_t i = 0; i < want->scores.size(); ++i) {
      EXPECT_EQ(Bits(down->scores[i].value), Bits(want->scores[i].value)) << want->scores[i].name;
    }
    // One side on the device, the other on the host: uploaded bytes are the host side's.
    absl::StatusOr<ScoredFrame> mixed = (*gpu)->ScoreInStream(ref, dist_on_gpu, nullptr);
    ASSERT_TRUE(mixed.ok()) << mixed.status();
    EXPECT_EQ(mixed->host_to_device_bytes, g.frame_bytes());
    for (size_t i = 0; i < want->scores.size(); ++i) {
      EXPECT_EQ(Bits(mixed->scores[i].value), Bits(want->scores[i].value)) << want->scores[i].name;
    }
  }
}

}  // namespace
}  // namespace exactq
