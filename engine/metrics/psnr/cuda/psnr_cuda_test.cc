// PsnrCuda against the CPU reference, == on the bit pattern, on random frames of every
// layout and depth and on the corpus. Skips with the reason where no GPU is usable.
#include "engine/metrics/psnr/cuda/psnr_cuda.h"

#include <cuda_runtime_api.h>

#include <cinttypes>
#include <iomanip>
#include <cstring>
#include <random>

#include "engine/io/testing/corpus.h"
#include "engine/io/y4m_reader.h"
#include "engine/metrics/psnr/psnr.h"
#include "gtest/gtest.h"

namespace exactq {
namespace {

uint64_t Bits(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

class PsnrCudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int count = 0;
    const cudaError_t error = cudaGetDeviceCount(&count);
    if (error != cudaSuccess || count == 0) {
      GTEST_SKIP() << "no CUDA device: " << (error != cudaSuccess ? cudaGetErrorName(error) : "0 devices");
    }
  }

  void ExpectSameBits(const Frame& ref, const Frame& dist, const PsnrOptions& options, const std::string& label) {
    PsnrMetric cpu(options);
    absl::StatusOr<FrameScores> want = cpu.Score(ref, dist);
    ASSERT_TRUE(want.ok()) << want.status();
    PsnrCuda gpu(options);
    absl::StatusOr<FrameScores> got = gpu.Score(ref, dist);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), want->size()) << label;
    for (size_t i = 0; i < want->size(); ++i) {
      EXPECT_EQ((*got)[i].name, (*want)[i].name);
      EXPECT_EQ(Bits((*got)[i].value), Bits((*want)[i].value))
          << label << " " << (*want)[i].name << ": gpu " << std::setprecision(17) << (*got)[i].value << " cpu "
          << (*want)[i].value;
    }
  }
};

TEST_F(PsnrCudaTest, RandomFramesOfEveryLayoutAndDepth) {
  std::mt19937_64 rng(2026);
  const ChromaLayout layouts[] = {ChromaLayout::k400, ChromaLayout::k420, ChromaLayout::k422, ChromaLayout::k444};
  const int sizes[][2] = {{1, 1}, {2, 2}, {7, 5}, {17, 33}, {641, 359}, {1921, 1081}, {3840, 2160}};
  for (const auto& size : sizes) {
    for (ChromaLayout layout : layouts) {
      for (int depth : {8, 10, 12, 16}) {
        FrameGeometry g{size[0], size[1], PixelFormat{layout, depth}};
        Frame ref = *Frame::Create(g), dist = *Frame::Create(g);
        const uint32_t max = (1u << depth) - 1;
        for (int p = 0; p < g.plane_count(); ++p) {
          for (int y = 0; y < g.plane_height(p); ++y) {
            for (int x = 0; x < g.plane_width(p); ++x) {
              const uint32_t a = static_cast<uint32_t>(rng() % (max + 1));
              const uint32_t noise = static_cast<uint32_t>(rng() % 9);
              ref.set_sample(p, x, y, a);
              dist.set_sample(p, x, y, std::min(max, a + noise));
            }
          }
        }
        const std::string label = GeometryDescription(g);
        ExpectSameBits(ref, dist, PsnrOptions{}, label);
        ExpectSameBits(ref, ref, PsnrOptions{}, label + " identical");
        PsnrOptions mse;
        mse.enable_mse = true;
        ExpectSameBits(ref, dist, mse, label + " enable_mse");
      }
    }
  }
}

TEST_F(PsnrCudaTest, EveryCorpusFrame) {
  absl::StatusOr<std::string> dir = corpus::FindCorpusDir();
  if (!dir.ok()) GTEST_SKIP() << dir.status().message();
  absl::StatusOr<std::vector<corpus::CorpusCase>> cases = corpus::LoadCorpusCases(*dir);
  ASSERT_TRUE(cases.ok()) << cases.status();
  int frames = 0;
  for (const corpus::CorpusCase& c : *cases) {
    absl::StatusOr<Y4mReader> ref = Y4mReader::Open(c.ref_path);
    absl::StatusOr<Y4mReader> dist = Y4mReader::Open(c.dist_path);
    ASSERT_TRUE(ref.ok() && dist.ok()) << c.id;
    Frame a, b;
    while (*ref->ReadFrame(&a) && *dist->ReadFrame(&b)) {
      ExpectSameBits(a, b, PsnrOptions{}, c.id);
      ++frames;
    }
  }
  EXPECT_GE(frames, 47);
}

}  // namespace
}  // namespace exactq
