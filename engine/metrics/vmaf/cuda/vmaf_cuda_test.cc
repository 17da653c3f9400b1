// The vmaf CUDA twin against the CPU reference, bit for bit: the features of random and
// patterned frames at 8 to 16 bits, odd and minimal sizes, one twin reused across
// geometries' frames (streams through the runtime: engine/runtime's
// frame_pipeline_test). Skips where no GPU can be used.
#include "engine/metrics/vmaf/cuda/vmaf_cuda.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "engine/format/frame.h"
#include "engine/format/frame_geometry.h"
#include "engine/io/testing/corpus.h"
#include "engine/io/testing/corpus_pairs.h"
#include "engine/metrics/vmaf/vmaf_features.h"
#include "engine/metrics/vmaf/vmaf_test_frames.h"
#include "engine/platform/device_frame_buffer.h"
#include "engine/platform/testing/cuda_device.h"
#include "gtest/gtest.h"

namespace exactq {
namespace vmaf {
namespace {

using testing_frames::Geometry;
using testing_frames::MakeFrame;

uint64_t Bits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

class VmafCudaTest : public ::testing::Test {
 protected:
  void SetUp() override { EXACTQ_SKIP_WITHOUT_CUDA_DEVICE(); }

  // One frame through a twin (uploaded as the runtime uploads it) against the CPU.
  static void ExpectCpuBits(VmafCuda& twin, DeviceFrameBuffer& buffer, const Frame& ref, const Frame& dis,
                            const Frame* prev, VmafModelId model, const std::string& label) {
    absl::StatusOr<DeviceFramePair> pair = buffer.Upload(ref, dis, 1, nullptr, prev);
    ASSERT_TRUE(pair.ok()) << pair.status();
    ASSERT_TRUE(twin.Enqueue(*pair, nullptr).ok()) << label;
    absl::StatusOr<VmafFeatures> gpu = twin.CollectFeatures();
    ASSERT_TRUE(gpu.ok()) << gpu.status();
    absl::StatusOr<VmafFeatures> cpu = ComputeVmafFeatures(ref, dis, prev, Parallel{}, model);
    ASSERT_TRUE(cpu.ok()) << cpu.status();
    for (int s = 0; s < 4; ++s) EXPECT_EQ(Bits(gpu->vif[s]), Bits(cpu->vif[s])) << label << " vif scale " << s;
    EXPECT_EQ(Bits(gpu->adm2), Bits(cpu->adm2)) << label << " adm2";
    EXPECT_EQ(Bits(gpu->motion), Bits(cpu->motion)) << label << " motion";
  }
};

TEST_F(VmafCudaTest, FeaturesEqualTheCpuAtEveryDepthAndSize) {
  DeviceFrameBuffer buffer(0);
  for (int depth : {8, 10, 12, 16}) {
    for (auto [w, h] : {std::pair{17, 17}, {33, 17}, {99, 41}, {641, 359}, {1920, 1080}}) {
      const FrameGeometry g = Geometry(w, h, depth);
      absl::StatusOr<std::unique_ptr<VmafCuda>> twin = VmafCuda::Create(0, g, VmafModelId::kV0_6_1);
      ASSERT_TRUE(twin.ok()) << twin.status();
      const Frame prev = MakeFrame(g, 0, 0, 5);
      const Frame ref = MakeFrame(g, 3, 0, 5);
      const Frame dis = MakeFrame(g, 3, 5, 5);
      const std::string label = std::to_string(w) + "x" + std::to_string(h) + " " + std::to_string(depth) + "-bit";
      ExpectCpuBits(**twin, buffer, ref, dis, &prev, VmafModelId::kV0_6_1, label);
      // The same twin again, first frame of a stream (no motion): buffers reused.
      ExpectCpuBits(**twin, buffer, dis, ref, nullptr, VmafModelId::kV0_6_1, label + " again");
    }
  }
}

TEST_F(VmafCudaTest, FeaturesEqualTheCpuOnUniformNoiseAnd4K) {
  DeviceFrameBuffer buffer(0);
  std::mt19937 rng(7);
  for (auto [w, h, depth] : {std::tuple{18, 19, 8}, {100, 60, 16}, {3840, 2160, 8}, {3840, 2160, 10}}) {
    const FrameGeometry g = Geometry(w, h, depth, ChromaLayout::k400);
    std::vector<Frame> frames;
    std::uniform_int_distribution<uint32_t> sample(0, (1u << depth) - 1);
    for (int k = 0; k < 3; ++k) {
      frames.push_back(*Frame::Create(g));
      for (int y = 0; y < h; ++y) {
        for (int x = 0; x < w; ++x) frames.back().set_sample(0, x, y, sample(rng));
      }
    }
    absl::StatusOr<std::unique_ptr<VmafCuda>> twin = VmafCuda::Create(0, g, VmafModelId::kV0_6_1);
    ASSERT_TRUE(twin.ok()) << twin.status();
    ExpectCpuBits(**twin, buffer, frames[0], frames[1], &frames[2], VmafModelId::kV0_6_1,
                  "noise " + std::to_string(w) + "x" + std::to_string(h) + " " + std::to_string(depth));
  }
}

TEST_F(VmafCudaTest, TheNegModelsFeaturesEqualTheCpu) {
  DeviceFrameBuffer buffer(0);
  const FrameGeometry g = Geometry(320, 180, 10);
  absl::StatusOr<std::unique_ptr<VmafCuda>> twin = VmafCuda::Create(0, g, VmafModelId::kV0_6_1Neg);
  ASSERT_TRUE(twin.ok()) << twin.status();
  ExpectCpuBits(**twin, buffer, MakeFrame(g, 0, 0, 2), MakeFrame(g, 0, 6, 2), nullptr, VmafModelId::kV0_6_1Neg, "neg");
}

TEST_F(VmafCudaTest, SmallerFramesAreRefusedNamingTheMinimum) {
  absl::StatusOr<std::unique_ptr<VmafCuda>> twin = VmafCuda::Create(0, Geometry(16, 17, 8), VmafModelId::kV0_6_1);
  ASSERT_EQ(twin.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(twin.status().message().find("17x17"), std::string::npos) << twin.status();
}

// Every corpus frame vmaf takes (at least 17x17), in stream order (motion against the
// previous reference), through one twin per case.
TEST_F(VmafCudaTest, EveryCorpusFrame) {
  absl::StatusOr<std::string> dir = corpus::FindCorpusDir();
  if (!dir.ok()) GTEST_SKIP() << dir.status().message();
  absl::StatusOr<std::vector<corpus::CorpusCase>> cases = corpus::LoadCorpusCases(*dir);
  ASSERT_TRUE(cases.ok()) << cases.status();
  DeviceFrameBuffer buffer(0);
  int frames = 0, cases_run = 0;
  for (const corpus::CorpusCase& c : *cases) {
    if (!corpus::CaseFilesPresent(c) || !CheckVmafInput(c.geometry, c.geometry).ok()) continue;
    ++cases_run;
    absl::StatusOr<std::unique_ptr<VmafCuda>> twin = VmafCuda::Create(0, c.geometry, VmafModelId::kV0_6_1);
    ASSERT_TRUE(twin.ok()) << c.id << ": " << twin.status();
    absl::StatusOr<corpus::CorpusPairReader> pairs = corpus::CorpusPairReader::Open(c);
    ASSERT_TRUE(pairs.ok()) << pairs.status();
    Frame previous, ref, dis;
    for (int i = 0;; ++i) {
      absl::StatusOr<bool> more = pairs->Next(&ref, &dis);
      ASSERT_TRUE(more.ok()) << more.status();
      if (!*more) break;
      ExpectCpuBits(**twin, buffer, ref, dis, i == 0 ? nullptr : &previous, VmafModelId::kV0_6_1,
                    c.id + " frame " + std::to_string(i));
      ++frames;
      std::swap(previous, ref);
    }
  }
  std::printf("corpus: %d frames of %d cases compared\n", frames, cases_run);
  if (cases_run == 0) GTEST_SKIP() << "no corpus case has its files in " << *dir;
}

}  // namespace
}  // namespace vmaf
}  // namespace exactq
