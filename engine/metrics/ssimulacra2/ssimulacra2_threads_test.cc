// Ssimulacra2Threads returns ReferenceSums' bits: all 108 sums and the score, compared
// as bit patterns, for 1, 2, 3 and 7 threads and both instruction sets, on random
// geometries (8x8 up, odd sizes, every layout with chroma, depths 8..16, every
// yuv_matrix), identical pairs and pairs where only the lower third differs.

#include "engine/metrics/ssimulacra2/ssimulacra2_threads.h"

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_reference.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_test_frames.h"
#include "engine/platform/worker_pool.h"
#include "gtest/gtest.h"

namespace exactq {
namespace ssimulacra2 {
namespace {

using testing_frames::MakeTestFrame;
using testing_frames::Noise;

uint64_t Bits(double v) {
  uint64_t u;
  std::memcpy(&u, &v, sizeof(u));
  return u;
}

struct Case {
  FrameGeometry geometry;
  YuvMatrix matrix;
  uint32_t seed;
  Noise noise;  // of the distorted frame
  std::string Describe() const {
    return absl::StrFormat("%s matrix %d seed %u noise %d from row %d", GeometryDescription(geometry),
                           static_cast<int>(matrix), seed, noise.amplitude, noise.first_noisy_row);
  }
};

// Every path and thread count on one case; each failure names the case in full so it
// can be replayed.
void ExpectAllPathsEqualReference(const Case& c) {
  SCOPED_TRACE(c.Describe());
  const Frame ref = MakeTestFrame(c.geometry, c.seed);
  const Frame dis = MakeTestFrame(c.geometry, c.seed, c.noise);
  absl::StatusOr<FrameSums> want = ReferenceSums(ref, dis, c.matrix);
  ASSERT_TRUE(want.ok()) << want.status();
  absl::StatusOr<double> want_score = ScoreFromSums(*want);
  ASSERT_TRUE(want_score.ok()) << want_score.status();

  std::vector<Ssimulacra2Isa> isas = {Ssimulacra2Isa::kGeneric};
  if (internal::Avx2Supported()) isas.push_back(Ssimulacra2Isa::kAvx2);
  for (Ssimulacra2Isa isa : isas) {
    for (int threads : {1, 2, 3, 7}) {
      Ssimulacra2Threads engine(threads, isa);
      SCOPED_TRACE(absl::StrFormat("%s, %d threads", engine.isa_name(), threads));
      // Twice: the second frame reuses the buffers of the first.
      for (int run = 0; run < 2; ++run) {
        absl::StatusOr<FrameSums> got = engine.Sums(ref, dis, c.matrix);
        ASSERT_TRUE(got.ok()) << got.status();
        ASSERT_EQ(got->num_scales, want->num_scales);
        for (int s = 0; s < want->num_scales; ++s) {
          for (int ch = 0; ch < kChannels; ++ch) {
            for (int k = 0; k < kSumsPerChannel; ++k) {
              ASSERT_EQ(Bits(got->sums[s][ch][k]), Bits(want->sums[s][ch][k]))
                  << absl::StrFormat("scale %d channel %d sum %d: %.17g, reference %.17g", s, ch, k,
                                     got->sums[s][ch][k], want->sums[s][ch][k]);
            }
          }
        }
        absl::StatusOr<double> score = ScoreFromSums(*got);
        ASSERT_TRUE(score.ok());
        EXPECT_EQ(Bits(*score), Bits(*want_score));
      }
    }
  }
}

FrameGeometry Geometry(int w, int h, ChromaLayout layout, int depth) { return FrameGeometry{w, h, {layout, depth}}; }

TEST(Ssimulacra2ThreadsTest, EqualsReferenceOnEdgeSizes) {
  // Smallest, odd, one-block and block-plus-one sizes, every layout.
  const int sizes[][2] = {{8, 8},   {9, 8},   {8, 9},   {15, 17}, {16, 16},
                          {17, 33}, {33, 17}, {64, 36}, {65, 40}, {256, 144}};
  for (const auto& size : sizes) {
    for (ChromaLayout layout : {ChromaLayout::k420, ChromaLayout::k422, ChromaLayout::k444}) {
      ExpectAllPathsEqualReference({Geometry(size[0], size[1], layout, 8), YuvMatrix::kBt709Limited, 3, {12, 0}});
    }
  }
}

TEST(Ssimulacra2ThreadsTest, EqualsReferenceOnRandomCases) {
  std::mt19937 rng(20260516);  // fixed: the cases are the same every run
  const ChromaLayout layouts[] = {ChromaLayout::k420, ChromaLayout::k422, ChromaLayout::k444};
  for (int i = 0; i < 24; ++i) {
    const int w = 8 + static_cast<int>(rng() % 300);
    const int h = 8 + static_cast<int>(rng() % 200);
    const ChromaLayout layout = layouts[rng() % 3];
    const int depth = 8 + static_cast<int>(rng() % 9);
    const YuvMatrix matrix = static_cast<YuvMatrix>(rng() % 4);
    const int amplitude = 1 + static_cast<int>(rng() % 40);
    ExpectAllPathsEqualReference({Geometry(w, h, layout, depth), matrix, static_cast<uint32_t>(i), {amplitude, 0}});
  }
}

TEST(Ssimulacra2ThreadsTest, EqualsReferenceOnALargeFrame) {
  ExpectAllPathsEqualReference({Geometry(1283, 719, ChromaLayout::k420, 10), YuvMatrix::kBt709Limited, 5, {9, 0}});
}

TEST(Ssimulacra2ThreadsTest, IdenticalPairsGiveExactly100) {
  for (int threads : {1, 3}) {
    Ssimulacra2Threads engine(threads);
    for (ChromaLayout layout : {ChromaLayout::k420, ChromaLayout::k444}) {
      const Frame frame = MakeTestFrame(Geometry(203, 117, layout, 12), 9);
      absl::StatusOr<FrameSums> sums = engine.Sums(frame, frame, YuvMatrix::kBt601Full);
      ASSERT_TRUE(sums.ok());
      for (int s = 0; s < sums->num_scales; ++s) {
        for (int c = 0; c < kChannels; ++c) {
          for (int k = 0; k < kSumsPerChannel; ++k) EXPECT_EQ(Bits(sums->sums[s][c][k]), 0u);
        }
      }
      absl::StatusOr<double> score = ScoreFromSums(*sums);
      ASSERT_TRUE(score.ok());
      EXPECT_EQ(Bits(*score), Bits(100.0));
    }
  }
}

// Only the lower third differs: every sum starts with a long run of zeros (the terms
// of the top rows, away from the blur's reach, are exactly 0).
TEST(Ssimulacra2ThreadsTest, EqualsReferenceWhenOnlyTheLowerThirdDiffers) {
  for (const auto& size : {std::pair<int, int>{256, 144}, {960, 540}}) {
    const int h = size.second;
    ExpectAllPathsEqualReference(
        {Geometry(size.first, h, ChromaLayout::k420, 8), YuvMatrix::kBt709Limited, 4, {20, h - h / 3}});
  }
}

TEST(Ssimulacra2ThreadsTest, RefusesWhatTheReferenceRefuses) {
  Ssimulacra2Threads engine(2);
  const Frame small = MakeTestFrame(Geometry(7, 8, ChromaLayout::k420, 8), 1);
  EXPECT_EQ(engine.Sums(small, small, YuvMatrix::kBt709Limited).status().code(), absl::StatusCode::kInvalidArgument);
  const Frame gray = MakeTestFrame(Geometry(64, 64, ChromaLayout::k400, 8), 1);
  EXPECT_EQ(engine.Sums(gray, gray, YuvMatrix::kBt709Limited).status().code(), absl::StatusCode::kInvalidArgument);
  const Frame a = MakeTestFrame(Geometry(64, 64, ChromaLayout::k420, 8), 1);
  const Frame b = MakeTestFrame(Geometry(64, 64, ChromaLayout::k444, 8), 1);
  EXPECT_EQ(engine.Sums(a, b, YuvMatrix::kBt709Limited).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(WorkerPoolTest, RunsEveryTaskOnceWithDistinctWorkers) {
  for (int threads : {1, 2, 7}) {
    WorkerPool pool(threads);
    for (int round = 0; round < 50; ++round) {
      const int tasks = round % 13;
      std::vector<int> runs(tasks, 0);
      std::vector<int> busy(threads, 0);
      pool.Run(tasks, [&](int task, int worker) {
        ASSERT_GE(worker, 0);
        ASSERT_LT(worker, threads);
        EXPECT_EQ(busy[worker]++, 0) << "two tasks on worker " << worker;
        ++runs[task];
        --busy[worker];
      });
      for (int t = 0; t < tasks; ++t) EXPECT_EQ(runs[t], 1) << "task " << t;
    }
  }
}

}  // namespace
}  // namespace ssimulacra2
}  // namespace exactq
