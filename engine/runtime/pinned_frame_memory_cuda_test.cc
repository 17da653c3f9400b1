// PinnedFrameMemory on a GPU: frames from it are page-locked, kept for reuse, and score
// the CPU's bits through the engine. Skips without a GPU.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>

#include "engine/format/frame.h"
#include "engine/platform/testing/cuda_device.h"
#include "engine/runtime/frame_scorer.h"
#include "engine/runtime/pinned_frame_memory.h"
#include "engine/runtime/runtime_config.h"
#include "gtest/gtest.h"

namespace exactq {
namespace {

bool PageLocked(const void* p) {
  cudaPointerAttributes attributes;
  if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeHost;
}

class PinnedFrameMemoryCudaTest : public ::testing::Test {
 protected:
  void SetUp() override { EXACTQ_SKIP_WITHOUT_CUDA_DEVICE(); }
};

TEST_F(PinnedFrameMemoryCudaTest, FramesArePageLockedAndReused) {
  const FrameGeometry g{3840, 2160, {ChromaLayout::k420, 8}};
  const void* first = nullptr;
  {
    Frame f = *Frame::Create(g, PinnedFrameMemory());
    first = f.bytes();
    EXPECT_TRUE(PageLocked(f.bytes()));
    EXPECT_TRUE(PageLocked(f.bytes() + f.size_bytes() - 1));
  }
  Frame again = *Frame::Create(g, PinnedFrameMemory());
  EXPECT_EQ(again.bytes(), first);
  const PinnedFrameStats stats = PinnedFrameMemoryStats();
  EXPECT_EQ(stats.page_locks, 1u);
  EXPECT_GE(stats.reuses, 1u);
  EXPECT_EQ(stats.pinned_bytes, g.frame_bytes());
}

TEST_F(PinnedFrameMemoryCudaTest, PinnedFramesScoreTheCpuBits) {
  const FrameGeometry g{1920, 1080, {ChromaLayout::k420, 10}};
  Frame ref = *Frame::Create(g, PinnedFrameMemory());
  Frame dis = *Frame::Create(g, PinnedFrameMemory());
  for (int p = 0; p < g.plane_count(); ++p) {
    for (int y = 0; y < g.plane_height(p); ++y) {
      for (int x = 0; x < g.plane_width(p); ++x) {
        ref.set_sample(p, x, y, static_cast<uint32_t>((x * 7 + y * 3 + p) % 1024));
        dis.set_sample(p, x, y, static_cast<uint32_t>((x * 7 + y * 3 + p + (x ^ y) % 5) % 1024));
      }
    }
  }
  for (const char* metric : {"psnr", "ssim", "ssimulacra2"}) {
    auto cpu = FrameScorer::Create(g, {{metric, {}}}, BackendPreference::kCpu);
    auto gpu = FrameScorer::Create(g, {{metric, {}}}, BackendPreference::kCuda);
    ASSERT_TRUE(cpu.ok() && gpu.ok()) << metric;
    absl::StatusOr<ScoredFrame> a = (*cpu)->Score(ref, dis), b = (*gpu)->Score(ref, dis);
    ASSERT_TRUE(a.ok() && b.ok()) << metric;
    EXPECT_EQ(b->backend, Backend::kCuda) << metric;
    ASSERT_EQ(a->scores.size(), b->scores.size()) << metric;
    for (size_t i = 0; i < a->scores.size(); ++i) {
      EXPECT_EQ(std::memcmp(&a->scores[i].value, &b->scores[i].value, sizeof(double)), 0)
          << metric << " " << a->scores[i].name;
    }
  }
}

}  // namespace
}  // namespace exactq
