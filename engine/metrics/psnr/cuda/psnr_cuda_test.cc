// PsnrCuda against the CPU reference, == on the bit pattern, on random frames of every
// layout and depth and on the corpus. Skips with the reason where no GPU is usable.
#include "engine/metrics/psnr/cuda/psnr_cuda.h"

#include <cuda_runtime_api.h>

#include <cinttypes>
#include <cstring>
#include <iomanip>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/io/testing/corpus.h"
#include "engine/io/testing/corpus_pairs.h"
#include "engine/metrics/psnr/psnr.h"
#include "engine/platform/testing/cuda_device.h"
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
  void SetUp() override { EXACTQ_SKIP_WITHOUT_CUDA_DEVICE(); }

  void ExpectSameBits(const Frame& ref, const Frame& dist, const PsnrOptions& options, const std::string& label) {
    PsnrCuda gpu(options);
    ExpectSameBits(gpu, ref, dist, options, label);
  }

  // The same with a twin that has scored other frames before (its buffers reused).
  static void ExpectSameBits(PsnrCuda& gpu, const Frame& ref, const Frame& dist, const PsnrOptions& options,
                             const std::string& label) {
    PsnrMetric cpu(options);
    absl::StatusOr<FrameScores> want = cpu.Score(ref, dist);
    ASSERT_TRUE(want.ok()) << want.status();
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

// Every sample of both pictures at random within the depth, the distorted one close to
// the reference (so the PSNR is finite and every bit of the SSE matters).
void FillPair(std::mt19937_64& rng, Frame* ref, Frame* dist) {
  const FrameGeometry& g = ref->geometry();
  const uint32_t max = (1u << g.format.bit_depth) - 1;
  const size_t samples = g.frame_bytes() / static_cast<size_t>(g.bytes_per_sample());
  for (size_t i = 0; i < samples; ++i) {
    const uint64_t r = rng();
    const uint32_t a = static_cast<uint32_t>(r % (max + 1));
    const uint32_t b = std::min(max, a + static_cast<uint32_t>((r >> 32) % 11));
    if (g.bytes_per_sample() == 1) {
      ref->mutable_bytes()[i] = static_cast<uint8_t>(a);
      dist->mutable_bytes()[i] = static_cast<uint8_t>(b);
    } else {
      const uint16_t wa = static_cast<uint16_t>(a), wb = static_cast<uint16_t>(b);
      std::memcpy(ref->mutable_bytes() + 2 * i, &wa, 2);
      std::memcpy(dist->mutable_bytes() + 2 * i, &wb, 2);
    }
  }
}

// One twin (and so one set of device and staging buffers) over frames whose geometry
// changes up and down: buffers grow, smaller frames reuse larger buffers, and each
// frame's bits are the CPU's.
TEST_F(PsnrCudaTest, OneTwinOverChangingGeometries) {
  std::mt19937_64 rng(7);
  const FrameGeometry geometries[] = {
      {17, 33, PixelFormat{ChromaLayout::k420, 8}},     {1920, 1080, PixelFormat{ChromaLayout::k420, 8}},
      {1, 1, PixelFormat{ChromaLayout::k444, 8}},       {3840, 2160, PixelFormat{ChromaLayout::k444, 16}},
      {641, 359, PixelFormat{ChromaLayout::k422, 12}},  {1920, 1080, PixelFormat{ChromaLayout::k420, 10}},
      {3840, 2160, PixelFormat{ChromaLayout::k420, 8}}, {7, 5, PixelFormat{ChromaLayout::k400, 16}},
      {1921, 1081, PixelFormat{ChromaLayout::k420, 8}}, {2, 2, PixelFormat{ChromaLayout::k420, 10}},
  };
  PsnrOptions all;
  PsnrOptions luma_mse;
  luma_mse.enable_chroma = false;
  luma_mse.enable_mse = true;
  PsnrCuda twin_all(all), twin_luma(luma_mse);
  for (int pass = 0; pass < 2; ++pass) {
    for (const FrameGeometry& g : geometries) {
      Frame ref = *Frame::Create(g), dist = *Frame::Create(g);
      for (int frame = 0; frame < 3; ++frame) {
        FillPair(rng, &ref, &dist);
        const std::string label = absl::StrCat(GeometryDescription(g), " pass ", pass, " frame ", frame);
        ExpectSameBits(twin_all, ref, dist, all, label);
        ExpectSameBits(twin_luma, ref, dist, luma_mse, label + " luma+mse");
      }
    }
  }
}

// Many consecutive frames through one twin, each with other content: a staging buffer
// or device buffer still holding the previous frame would show.
TEST_F(PsnrCudaTest, ManyConsecutiveFrames) {
  std::mt19937_64 rng(11);
  const FrameGeometry g{1920, 1080, PixelFormat{ChromaLayout::k420, 8}};
  const size_t bytes = g.frame_bytes();
  // A pool of random bytes; frame k takes its pictures at offsets that move with k.
  std::vector<uint8_t> pool(2 * bytes + 4096);
  for (uint8_t& b : pool) b = static_cast<uint8_t>(rng());
  Frame ref = *Frame::Create(g), dist = *Frame::Create(g);
  PsnrOptions options;
  options.enable_mse = true;
  PsnrCuda twin(options);
  for (int k = 0; k < 300; ++k) {
    std::memcpy(ref.mutable_bytes(), pool.data() + (k * 37) % 4096, bytes);
    std::memcpy(dist.mutable_bytes(), ref.bytes(), bytes);
    // A distortion that differs per frame: a few thousand samples moved.
    for (int i = 0; i < 2000 + k; ++i) {
      const size_t at = static_cast<size_t>(rng() % bytes);
      dist.mutable_bytes()[at] = static_cast<uint8_t>(dist.bytes()[at] ^ (1 + rng() % 255));
    }
    ExpectSameBits(twin, ref, dist, options, absl::StrCat("frame ", k));
    if (HasFatalFailure() || HasNonfatalFailure()) return;
  }
}

// Pictures the caller has page-locked itself go to the device directly; the bits stay
// the CPU's, also when pinned and pageable frames alternate on one twin.
TEST_F(PsnrCudaTest, PageLockedAndPageableFramesAlternate) {
  std::mt19937_64 rng(13);
  const FrameGeometry g{3840, 2160, PixelFormat{ChromaLayout::k420, 10}};
  Frame pinned_ref = *Frame::Create(g), pinned_dist = *Frame::Create(g);
  Frame ref = *Frame::Create(g), dist = *Frame::Create(g);
  ASSERT_EQ(cudaHostRegister(pinned_ref.mutable_bytes(), pinned_ref.size_bytes(), cudaHostRegisterDefault),
            cudaSuccess);
  ASSERT_EQ(cudaHostRegister(pinned_dist.mutable_bytes(), pinned_dist.size_bytes(), cudaHostRegisterDefault),
            cudaSuccess);
  PsnrCuda twin(PsnrOptions{});
  for (int k = 0; k < 4; ++k) {
    FillPair(rng, &pinned_ref, &pinned_dist);
    FillPair(rng, &ref, &dist);
    ExpectSameBits(twin, pinned_ref, pinned_dist, PsnrOptions{}, absl::StrCat("pinned ", k));
    ExpectSameBits(twin, ref, dist, PsnrOptions{}, absl::StrCat("pageable ", k));
    ExpectSameBits(twin, pinned_ref, dist, PsnrOptions{}, absl::StrCat("pinned reference only ", k));
  }
  cudaHostUnregister(pinned_ref.mutable_bytes());
  cudaHostUnregister(pinned_dist.mutable_bytes());
}

// Twins on several threads and streams at once share the staging helpers.
TEST_F(PsnrCudaTest, ConcurrentTwinsOnTheirOwnStreams) {
  const FrameGeometry sizes[] = {{1920, 1080, PixelFormat{ChromaLayout::k420, 8}},
                                 {3840, 2160, PixelFormat{ChromaLayout::k420, 8}},
                                 {1280, 720, PixelFormat{ChromaLayout::k444, 12}}};
  std::vector<std::thread> threads;
  std::vector<int> failures(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t, &sizes, &failures] {
      std::mt19937_64 rng(100 + t);
      cudaStream_t stream = nullptr;
      if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
        failures[t] = -1;
        return;
      }
      {
        PsnrCuda twin(PsnrOptions{}, stream);
        PsnrMetric cpu(PsnrOptions{});
        const FrameGeometry& g = sizes[t % 3];
        Frame ref = *Frame::Create(g), dist = *Frame::Create(g);
        for (int k = 0; k < 12; ++k) {
          FillPair(rng, &ref, &dist);
          absl::StatusOr<FrameScores> want = cpu.Score(ref, dist);
          absl::StatusOr<FrameScores> got = twin.Score(ref, dist);
          if (!want.ok() || !got.ok() || got->size() != want->size()) {
            ++failures[t];
            continue;
          }
          for (size_t i = 0; i < want->size(); ++i) {
            if (Bits((*got)[i].value) != Bits((*want)[i].value)) ++failures[t];
          }
        }
      }
      cudaStreamDestroy(stream);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

TEST_F(PsnrCudaTest, EveryCorpusFrame) {
  absl::StatusOr<std::string> dir = corpus::FindCorpusDir();
  if (!dir.ok()) GTEST_SKIP() << dir.status().message();
  absl::StatusOr<std::vector<corpus::CorpusCase>> cases = corpus::LoadCorpusCases(*dir);
  ASSERT_TRUE(cases.ok()) << cases.status();
  int frames = 0;
  for (const corpus::CorpusCase& c : *cases) {
    if (!corpus::CaseFilesPresent(c)) continue;  // left out of a smaller copy of the corpus
    absl::StatusOr<corpus::CorpusPairReader> pairs = corpus::CorpusPairReader::Open(c);
    ASSERT_TRUE(pairs.ok()) << pairs.status();
    Frame a, b;
    for (;;) {
      absl::StatusOr<bool> more = pairs->Next(&a, &b);
      ASSERT_TRUE(more.ok()) << more.status();
      if (!*more) break;
      ExpectSameBits(a, b, PsnrOptions{}, c.id);
      ++frames;
    }
  }
  EXPECT_GE(frames, 47);
}

}  // namespace
}  // namespace exactq
