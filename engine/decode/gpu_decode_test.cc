// The GPU's video decoder against the CPU's: every plane of every picture byte for byte.
// With DecodeDevice::kAuto a stream the GPU decodes must give the CPU decoder's bytes; one
// it cannot (no GPU, an unsupported codec or profile) is decoded on the CPU and says why.
// Without a GPU (CI) the fallback and kGpu's refusal are what is checked; on a GPU machine,
// EXACTQ_REQUIRE_GPU_DECODE=1 makes a run in which nothing was GPU-decoded a failure.
//
// Inputs: the encoded files in $EXACTQ_DECODE_MEDIA (the GPU machine has no ffmpeg CLI;
// bench/device/pack_media.sh makes them), else encodes made here with the ffmpeg CLI.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/decode/byte_source.h"
#include "engine/decode/testing/encoded_samples.h"
#include "engine/decode/video_decoder.h"
#include "gtest/gtest.h"

namespace exactq {
namespace {

struct Decoded {
  DecodedStreamInfo info;
  std::vector<Frame> frames;
  bool kept_on_device = false;
};

// keep_on_device: frames the GPU decodes stay there (VideoDecoder::KeepPicturesOnDevice).
absl::StatusOr<Decoded> DecodeAll(const std::string& path, DecodeDevice device, bool keep_on_device = false) {
  absl::StatusOr<std::unique_ptr<ByteSource>> file = FileByteSource::Open(path);
  if (!file.ok()) return file.status();
  DecoderOptions options;
  options.threads = 2;
  options.device = device;
  absl::StatusOr<std::unique_ptr<VideoDecoder>> decoder = VideoDecoder::Open(*std::move(file), options);
  if (!decoder.ok()) return decoder.status();
  Decoded out;
  out.info = (*decoder)->info();
  out.kept_on_device = keep_on_device && (*decoder)->KeepPicturesOnDevice();
  while (true) {
    Frame frame;
    absl::StatusOr<bool> more = (*decoder)->ReadFrame(&frame);
    if (!more.ok()) return more.status();
    if (!*more) return out;
    out.frames.push_back(std::move(frame));
  }
}

// Frame f decoded two ways: the same geometry and every plane's bytes.
void ExpectSamePlanes(const Frame& got, const Frame& cpu, size_t f) {
  ASSERT_EQ(got.geometry(), cpu.geometry()) << "frame " << f;
  for (int p = 0; p < cpu.geometry().plane_count(); ++p) {
    ASSERT_EQ(std::memcmp(got.plane_bytes(p), cpu.plane_bytes(p), cpu.geometry().plane_bytes(p)), 0)
        << "frame " << f << " plane " << p << " differs";
  }
}

TEST(GpuDecodeTest, AutoGivesTheCpuDecodersBytes) {
  const std::vector<std::string> samples = testing::EncodedSamples();
  if (samples.empty()) GTEST_SKIP() << "no samples: no ffmpeg CLI here and EXACTQ_DECODE_MEDIA unset";
  int gpu_decoded = 0;
  for (const std::string& path : samples) {
    SCOPED_TRACE(path);
    absl::StatusOr<Decoded> cpu = DecodeAll(path, DecodeDevice::kCpu);
    ASSERT_TRUE(cpu.ok()) << cpu.status();
    absl::StatusOr<Decoded> automatic = DecodeAll(path, DecodeDevice::kAuto);
    ASSERT_TRUE(automatic.ok()) << automatic.status();
    EXPECT_FALSE(cpu->info.gpu_decoded);
    if (automatic->info.gpu_decoded) {
      ++gpu_decoded;
      EXPECT_EQ(automatic->info.cpu_reason, "");
    } else {
      EXPECT_NE(automatic->info.cpu_reason, "") << "decoded on the CPU without saying why";
    }
    std::printf("%s: %s (%s)%s%s\n", path.c_str(), automatic->info.gpu_decoded ? "gpu" : "cpu",
                automatic->info.codec.c_str(), automatic->info.cpu_reason.empty() ? "" : ": ",
                automatic->info.cpu_reason.c_str());
    ASSERT_EQ(automatic->info.geometry, cpu->info.geometry);
    ASSERT_EQ(automatic->frames.size(), cpu->frames.size());
    for (size_t f = 0; f < cpu->frames.size(); ++f) {
      const Frame& a = automatic->frames[f];
      const Frame& c = cpu->frames[f];
      ASSERT_NO_FATAL_FAILURE(ExpectSamePlanes(a, c, f));
    }
  }
  std::printf("%d of %zu samples decoded on the GPU, byte for byte as on the CPU\n", gpu_decoded, samples.size());
  const char* require = std::getenv("EXACTQ_REQUIRE_GPU_DECODE");
  if (require != nullptr && require[0] == '1') {
    EXPECT_GT(gpu_decoded, 0) << "nothing was decoded on the GPU";
  }
}

// The GPU decoder's surfaces turned into planar pictures on the device (the path the
// server takes when the frames are scored on that GPU) hold the CPU decoder's bytes.
TEST(GpuDecodeTest, PicturesKeptOnTheGpuAreTheCpuDecodersBytes) {
  const std::vector<std::string> samples = testing::EncodedSamples();
  if (samples.empty()) GTEST_SKIP() << "no samples: no ffmpeg CLI here and EXACTQ_DECODE_MEDIA unset";
  int kept = 0;
  for (const std::string& path : samples) {
    SCOPED_TRACE(path);
    absl::StatusOr<Decoded> cpu = DecodeAll(path, DecodeDevice::kCpu);
    ASSERT_TRUE(cpu.ok()) << cpu.status();
    absl::StatusOr<Decoded> device = DecodeAll(path, DecodeDevice::kAuto, /*keep_on_device=*/true);
    ASSERT_TRUE(device.ok()) << device.status();
    if (!device->info.gpu_decoded) {
      EXPECT_FALSE(device->kept_on_device) << "a CPU-decoded stream cannot keep pictures on a GPU";
      continue;
    }
    if (!device->kept_on_device) continue;  // a build without CUDA: pictures are downloaded
    ++kept;
    ASSERT_EQ(device->frames.size(), cpu->frames.size());
    for (size_t f = 0; f < cpu->frames.size(); ++f) {
      Frame& d = device->frames[f];
      const Frame& c = cpu->frames[f];
      ASSERT_NE(d.device_picture(), nullptr) << "frame " << f;
      ASSERT_FALSE(d.host_bytes_valid()) << "frame " << f;
      ASSERT_TRUE(d.CopyDeviceToHost().ok()) << "frame " << f;
      ASSERT_NO_FATAL_FAILURE(ExpectSamePlanes(d, c, f));
    }
  }
  std::printf("%d of %zu samples kept on the GPU, byte for byte as on the CPU\n", kept, samples.size());
  const char* require = std::getenv("EXACTQ_REQUIRE_GPU_DECODE");
  if (require != nullptr && require[0] == '1') {
    EXPECT_GT(kept, 0) << "no picture was kept on the GPU";
  }
}

TEST(GpuDecodeTest, GpuRefusesByNameWhenItCannot) {
  const std::vector<std::string> samples = testing::EncodedSamples();
  if (samples.empty()) GTEST_SKIP() << "no samples: no ffmpeg CLI here and EXACTQ_DECODE_MEDIA unset";
  for (const std::string& path : samples) {
    SCOPED_TRACE(path);
    absl::StatusOr<Decoded> gpu = DecodeAll(path, DecodeDevice::kGpu);
    if (gpu.ok()) {
      EXPECT_TRUE(gpu->info.gpu_decoded) << "kGpu decoded on the CPU";
      continue;
    }
    EXPECT_TRUE(gpu.status().code() == absl::StatusCode::kFailedPrecondition ||
                gpu.status().code() == absl::StatusCode::kUnimplemented)
        << gpu.status();
    EXPECT_NE(gpu.status().message().find("GPU"), std::string::npos) << gpu.status();
  }
}

// Y4M pictures are copied, not decoded: gpu takes them on the CPU and says why.
TEST(GpuDecodeTest, RawPicturesAreNeverDecodedOnTheGpu) {
  const std::string path = absl::StrCat(testing::TempDir(), "/raw.y4m");
  const std::string command =
      absl::StrCat("ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=64x64:rate=24 -frames:v 2 -pix_fmt yuv420p ",
                   path, " 2>", testing::TempDir(), "/ffmpeg.log");
  if (std::system(command.c_str()) != 0) GTEST_SKIP() << "no ffmpeg CLI here";
  for (DecodeDevice device : {DecodeDevice::kGpu, DecodeDevice::kAuto}) {
    absl::StatusOr<Decoded> decoded = DecodeAll(path, device);
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_FALSE(decoded->info.gpu_decoded);
    EXPECT_EQ(decoded->info.cpu_reason, "raw pictures: nothing to decode");
    EXPECT_EQ(decoded->frames.size(), 2u);
  }
}

TEST(GpuDecodeTest, DeviceNamesRoundTrip) {
  for (DecodeDevice d : {DecodeDevice::kCpu, DecodeDevice::kGpu, DecodeDevice::kAuto}) {
    absl::StatusOr<DecodeDevice> parsed = ParseDecodeDevice(DecodeDeviceName(d));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, d);
  }
  EXPECT_EQ(ParseDecodeDevice("nvdec").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace exactq
