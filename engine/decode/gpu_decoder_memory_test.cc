// The device memory the server admits for a GPU decoder (VideoDecoder::GpuDeviceBytes,
// reserved beside the scorers) against what the decoder really takes: the device's free
// memory before the decoder opens and while kHeld of its pictures are held on the
// device, for every sample the GPU decodes. Skips without a GPU; on the GPU machine,
// EXACTQ_REQUIRE_GPU_DECODE=1 makes a run that measured nothing a failure.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/decode/byte_source.h"
#include "engine/decode/testing/encoded_samples.h"
#include "engine/decode/video_decoder.h"
#include "engine/platform/testing/cuda_device.h"
#include "gtest/gtest.h"

namespace exactq {
namespace {

constexpr int kHeld = 6;  // pictures held at once, as a stream's queue and frames in flight do

uint64_t FreeDeviceBytes() {
  cudaDeviceSynchronize();
  size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) return 0;
  return free_bytes;
}

absl::StatusOr<std::unique_ptr<VideoDecoder>> OpenKeepingPictures(const std::string& path) {
  absl::StatusOr<std::unique_ptr<ByteSource>> file = FileByteSource::Open(path);
  if (!file.ok()) return file.status();
  DecoderOptions options;
  options.threads = 2;
  options.device = DecodeDevice::kAuto;
  absl::StatusOr<std::unique_ptr<VideoDecoder>> decoder = VideoDecoder::Open(*std::move(file), options);
  if (decoder.ok()) (*decoder)->KeepPicturesOnDevice();
  return decoder;
}

TEST(GpuDecoderMemoryTest, AdmittedBytesCoverWhatTheDecoderTakes) {
  EXACTQ_SKIP_WITHOUT_CUDA_DEVICE();
  const std::vector<std::string> samples = testing::EncodedSamples();
  if (samples.empty()) GTEST_SKIP() << "no samples: no ffmpeg CLI here and EXACTQ_DECODE_MEDIA unset";
  int measured = 0;
  for (const std::string& path : samples) {
    SCOPED_TRACE(path);
    {
      // The decoders' shared CUDA context and the conversion's kernels are loaded on
      // first use, once per process: not the decoder's to count.
      absl::StatusOr<std::unique_ptr<VideoDecoder>> warm = OpenKeepingPictures(path);
      if (!warm.ok() || !(*warm)->info().gpu_decoded) continue;
      Frame frame;
      ASSERT_TRUE((*warm)->ReadFrame(&frame).ok());
    }
    const uint64_t free_before = FreeDeviceBytes();
    absl::StatusOr<std::unique_ptr<VideoDecoder>> decoder = OpenKeepingPictures(path);
    ASSERT_TRUE(decoder.ok()) << decoder.status();
    std::vector<Frame> held(kHeld);
    int read = 0;
    while (read < kHeld) {
      absl::StatusOr<bool> more = (*decoder)->ReadFrame(&held[read]);
      ASSERT_TRUE(more.ok()) << more.status();
      if (!*more) break;
      ++read;
    }
    const uint64_t free_now = FreeDeviceBytes();
    const uint64_t taken = free_before > free_now ? free_before - free_now : 0;
    const uint64_t admitted = (*decoder)->GpuDeviceBytes(kHeld);
    std::printf("%s (%dx%d, %d-bit): the decoder took %llu bytes with %d pictures held; admitted %llu (%.2fx)\n",
                path.c_str(), (*decoder)->info().geometry.width, (*decoder)->info().geometry.height,
                (*decoder)->info().geometry.format.bit_depth, static_cast<unsigned long long>(taken), read,
                static_cast<unsigned long long>(admitted), taken > 0 ? static_cast<double>(admitted) / taken : 0.0);
    EXPECT_GT(admitted, 0u);
    EXPECT_LE(taken, admitted);
    EXPECT_GE(3 * taken, admitted) << "admitted more than 3x what the decoder took: the estimate wastes the device";
    ++measured;
  }
  const char* require = std::getenv("EXACTQ_REQUIRE_GPU_DECODE");
  if (require != nullptr && require[0] == '1') {
    EXPECT_GT(measured, 0) << "no sample was decoded on the GPU";
  }
}

}  // namespace
}  // namespace exactq
