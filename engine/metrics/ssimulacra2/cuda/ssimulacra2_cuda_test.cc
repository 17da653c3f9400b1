// Ssimulacra2Cuda against the CPU reference (ReferenceSums, ScoreFromSums): == on the bit
// pattern of all 108 sums and of the score, on every frame of the shared corpus (skipped
// without $EXACTQ_CORPUS; cases whose files are absent are skipped one by one, so a
// trimmed copy of the corpus works), random frames of 8x8, 9x17, 33x31, 577x323 and
// 1921x1081 in 4:2:0, 4:2:2 and 4:4:4 at 8, 10, 12 and 16 bits with every yuv_matrix,
// identical pairs (exactly 100), pairs distorted in the lower third only, the graph and
// the direct launch path, repeated frames and changes of geometry. Every case runs with
// both exact sum modes (the segment pipeline, the default, and the event walk); a forced
// refusal of the segment pipeline must take the event-walk redo and keep the bits; the
// INEXACT tree-sum mode must run and be close to the reference, and is not exact.
//
// Without a usable GPU every test is skipped, with the reason printed.
#include "engine/metrics/ssimulacra2/cuda/ssimulacra2_cuda.h"

#include <cuda_runtime_api.h>

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "engine/format/frame.h"
#include "engine/format/frame_geometry.h"
#include "engine/io/testing/corpus.h"
#include "engine/io/testing/corpus_pairs.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_reference.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_score.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_test_frames.h"
#include "engine/platform/frames_in_flight.h"
#include "gtest/gtest.h"

namespace exactq {
namespace ssimulacra2 {
namespace {

using testing_frames::MakeTestFrame;
using testing_frames::Noise;

uint64_t Bits(double x) {
  uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

// docs/design.md rule 1: bit equality, except that any NaN equals any NaN.
bool SameBits(double a, double b) { return (std::isnan(a) && std::isnan(b)) || Bits(a) == Bits(b); }

std::string Value(double x) { return absl::StrFormat("%.17g (%a)", x, x); }

const char* LayoutName(ChromaLayout layout) {
  switch (layout) {
    case ChromaLayout::k420:
      return "420";
    case ChromaLayout::k422:
      return "422";
    case ChromaLayout::k444:
      return "444";
    default:
      return "?";
  }
}

constexpr ChromaLayout kLayouts[] = {ChromaLayout::k420, ChromaLayout::k422, ChromaLayout::k444};
constexpr int kDepths[] = {8, 10, 12, 16};

FrameGeometry Geometry(int w, int h, ChromaLayout layout, int depth) { return FrameGeometry{w, h, {layout, depth}}; }

// Every sample uniform in [0, 2^depth - 1].
Frame UniformRandomFrame(const FrameGeometry& g, uint64_t seed) {
  Frame f = *Frame::Create(g);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint32_t> any(0, g.max_sample_value());
  for (int p = 0; p < g.plane_count(); ++p) {
    for (int y = 0; y < g.plane_height(p); ++y) {
      for (int x = 0; x < g.plane_width(p); ++x) f.set_sample(p, x, y, any(rng));
    }
  }
  return f;
}

constexpr Ssimulacra2SumMode kExactModes[] = {Ssimulacra2SumMode::kExactSegments, Ssimulacra2SumMode::kExactEventWalk};

// One instance per (matrix, graph, sum mode, test plan, channels per sum batch, sum
// stream per scale, advice precision, slab size, evict_last bases) for the whole test
// binary; null (after a failure) when it cannot be created. With a slab size every frame
// runs in slabs (slab_min_frames_in_flight 1); 0, the tests' default, is whole scales.
Ssimulacra2Cuda* Gpu(YuvMatrix matrix, bool use_graph = true,
                     Ssimulacra2SumMode mode = Ssimulacra2SumMode::kExactSegments, int segment_plan_mode = 0,
                     int channels_per_sum_batch = 3,
                     bool sum_stream_per_scale = Ssimulacra2CudaOptions{}.sum_stream_per_scale,
                     bool binary32_advice = Ssimulacra2CudaOptions{}.binary32_advice, int sum_slab_chunks = 0,
                     bool bases_evict_last = false) {
  static auto* instances =
      new std::map<std::tuple<int, bool, int, int, int, bool, bool, int, bool>, std::unique_ptr<Ssimulacra2Cuda>>;
  std::unique_ptr<Ssimulacra2Cuda>& gpu =
      (*instances)[{static_cast<int>(matrix), use_graph, static_cast<int>(mode), segment_plan_mode,
                    channels_per_sum_batch, sum_stream_per_scale, binary32_advice, sum_slab_chunks, bases_evict_last}];
  if (gpu == nullptr) {
    Ssimulacra2CudaOptions options;
    options.yuv_matrix = matrix;
    options.use_graph = use_graph;
    options.sum_mode = mode;
    options.testing_segment_plan_mode = segment_plan_mode;
    options.channels_per_sum_batch = channels_per_sum_batch;
    options.sum_stream_per_scale = sum_stream_per_scale;
    options.binary32_advice = binary32_advice;
    options.sum_slab_chunks = sum_slab_chunks;
    options.bases_evict_last = bases_evict_last;
    options.slab_min_frames_in_flight = 1;
    absl::StatusOr<std::unique_ptr<Ssimulacra2Cuda>> created = Ssimulacra2Cuda::Create(options);
    EXPECT_TRUE(created.ok()) << created.status();
    if (created.ok()) gpu = *std::move(created);
  }
  return gpu.get();
}

struct Parity {
  bool equal = false;
  double gpu_score = 0.0;
  double cpu_score = 0.0;
};

// One GPU instance against the reference's sums `cpu`: every bit of the 108 sums and of
// the score.
Parity CheckOne(Ssimulacra2Cuda* gpu_engine, const Frame& ref, const Frame& dis, const FrameSums& cpu,
                const std::string& what) {
  Parity out;
  if (gpu_engine == nullptr) return out;
  absl::StatusOr<FrameSums> gpu = gpu_engine->Sums(ref, dis);
  EXPECT_TRUE(gpu.ok()) << what << ": " << gpu.status();
  if (!gpu.ok()) return out;
  EXPECT_EQ(gpu->num_scales, cpu.num_scales) << what;
  EXPECT_EQ(gpu->width, cpu.width) << what;
  EXPECT_EQ(gpu->height, cpu.height) << what;
  int mismatches = 0;
  for (int s = 0; s < kMaxScales; ++s) {
    for (int c = 0; c < kChannels; ++c) {
      for (int k = 0; k < kSumsPerChannel; ++k) {
        const double a = gpu->sums[s][c][k];
        const double b = cpu.sums[s][c][k];
        if (!SameBits(a, b)) {
          if (++mismatches <= 5) {
            ADD_FAILURE() << what << ": sum [scale " << s << "][channel " << c << "][" << k << "]: gpu " << Value(a)
                          << ", cpu " << Value(b);
          }
        }
      }
    }
  }
  EXPECT_EQ(mismatches, 0) << what << ": " << mismatches << " of 108 sums differ";
  absl::StatusOr<double> cpu_score = ScoreFromSums(cpu);
  absl::StatusOr<FrameScores> gpu_scores = gpu_engine->Score(ref, dis);
  EXPECT_TRUE(cpu_score.ok()) << what << ": " << cpu_score.status();
  EXPECT_TRUE(gpu_scores.ok()) << what << ": " << gpu_scores.status();
  if (!cpu_score.ok() || !gpu_scores.ok()) return out;
  EXPECT_EQ(gpu_scores->size(), 1u);
  EXPECT_EQ((*gpu_scores)[0].name, "ssimulacra2");
  const double gpu_score = (*gpu_scores)[0].value;
  EXPECT_TRUE(SameBits(gpu_score, *cpu_score))
      << what << ": score gpu " << Value(gpu_score) << ", cpu " << Value(*cpu_score);
  out.equal = mismatches == 0 && SameBits(gpu_score, *cpu_score);
  out.gpu_score = gpu_score;
  out.cpu_score = *cpu_score;
  return out;
}

// Scores one pair on the CPU and with both exact sum modes (segments, the default, and
// the event walk), each with one channel and with three channels per sum batch, and the
// default sum mode and batching with the other sum stream shape (per scale or per scale
// parity), checking every bit; `what` names the case in failures. The result is the
// default instance's, `equal` only if all five are.
Parity CheckParity(const Frame& ref, const Frame& dis, YuvMatrix matrix, const std::string& what,
                   bool use_graph = true) {
  absl::StatusOr<FrameSums> cpu = ReferenceSums(ref, dis, matrix);
  EXPECT_TRUE(cpu.ok()) << what << ": " << cpu.status();
  if (!cpu.ok()) return Parity{};
  const Ssimulacra2CudaOptions defaults;
  Parity out;
  bool all_equal = true;
  const auto check = [&](Ssimulacra2SumMode mode, int channels, bool per_scale, bool binary32_advice, int slab = 0,
                         bool evict_last = false) {
    const Parity p = CheckOne(
        Gpu(matrix, use_graph, mode, 0, channels, per_scale, binary32_advice, slab, evict_last), ref, dis, *cpu,
        absl::StrFormat("%s [%s, %d channels per batch, sum stream per %s, binary%d advice, slabs of %d chunks, "
                        "evict_last %d]",
                        what, Ssimulacra2SumModeName(mode), channels, per_scale ? "scale" : "parity",
                        binary32_advice ? 32 : 64, slab, evict_last ? 1 : 0));
    all_equal = all_equal && p.equal;
    return p;
  };
  for (Ssimulacra2SumMode mode : kExactModes) {
    for (int channels : {1, 3}) {
      const Parity p = check(mode, channels, defaults.sum_stream_per_scale, defaults.binary32_advice);
      if (mode == defaults.sum_mode && channels == defaults.channels_per_sum_batch) out = p;
    }
  }
  check(defaults.sum_mode, defaults.channels_per_sum_batch, !defaults.sum_stream_per_scale, defaults.binary32_advice);
  check(defaults.sum_mode, defaults.channels_per_sum_batch, defaults.sum_stream_per_scale, !defaults.binary32_advice);
  // Slabs with evict_last bases: of the default size (sum_slab_chunks' measured choice)
  // and the smallest (one run of 32 chunks).
  for (int slab : {defaults.sum_slab_chunks, 32}) {
    check(defaults.sum_mode, defaults.channels_per_sum_batch, defaults.sum_stream_per_scale, defaults.binary32_advice,
          slab, true);
  }
  out.equal = all_equal;
  return out;
}

class Ssimulacra2CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string reason;
    if (!Ssimulacra2CudaAvailable(&reason)) GTEST_SKIP() << "no usable CUDA device: " << reason;
  }
};

TEST_F(Ssimulacra2CudaTest, EveryCorpusFrame) {
  absl::StatusOr<std::string> dir = corpus::FindCorpusDir();
  if (!dir.ok()) GTEST_SKIP() << dir.status().message();
  absl::StatusOr<std::vector<corpus::CorpusCase>> cases = corpus::LoadCorpusCases(*dir);
  ASSERT_TRUE(cases.ok()) << cases.status();
  int frames = 0;
  int equal = 0;
  int cases_run = 0;
  std::vector<std::string> skipped;
  for (const corpus::CorpusCase& c : *cases) {
    if (!corpus::CaseFilesPresent(c)) {
      skipped.push_back(c.id);
      continue;
    }
    ++cases_run;
    absl::StatusOr<corpus::CorpusPairReader> pairs = corpus::CorpusPairReader::Open(c);
    ASSERT_TRUE(pairs.ok()) << pairs.status();
    Frame ref;
    Frame dis;
    for (int i = 0;; ++i) {
      absl::StatusOr<bool> more = pairs->Next(&ref, &dis);
      ASSERT_TRUE(more.ok()) << more.status();
      if (!*more) break;
      const Parity p = CheckParity(ref, dis, YuvMatrix::kBt709Limited, absl::StrFormat("%s frame %d", c.id, i));
      ++frames;
      if (p.equal) ++equal;
      std::printf("corpus %-28s frame %d %dx%d: gpu %.17g %s\n", c.id.c_str(), i, c.geometry.width, c.geometry.height,
                  p.gpu_score, p.equal ? "== cpu" : "DIFFERS");
    }
  }
  std::printf("corpus: %d of %d frames bit-identical (%d cases run, %zu absent here)\n", equal, frames, cases_run,
              skipped.size());
  if (const Ssimulacra2Cuda* gpu = Gpu(YuvMatrix::kBt709Limited)) {
    const Ssimulacra2CudaStats& st = gpu->stats();
    std::printf(
        "default (segments) instance so far: %lld frames, %lld redone with the event walk (%lld sums refused, "
        "%lld overflowed)\n",
        static_cast<long long>(st.frames), static_cast<long long>(st.frames_redone_event_walk),
        static_cast<long long>(st.sums_refused), static_cast<long long>(st.sums_overflowed));
  }
  for (const std::string& id : skipped) std::printf("  absent: %s\n", id.c_str());
  if (cases_run == 0) GTEST_SKIP() << "no corpus case has its files in " << *dir;
  EXPECT_EQ(equal, frames);
}

// The small sizes: every layout x depth x matrix, a natural-looking pair and an
// independent uniform-random pair.
TEST_F(Ssimulacra2CudaTest, SmallRandomFramesEveryLayoutDepthAndMatrix) {
  const int sizes[][2] = {{8, 8}, {9, 17}, {33, 31}};
  int cases = 0;
  uint32_t seed = 1;
  for (const auto& size : sizes) {
    for (ChromaLayout layout : kLayouts) {
      for (int depth : kDepths) {
        for (int m = 0; m < 4; ++m) {
          const FrameGeometry g = Geometry(size[0], size[1], layout, depth);
          const YuvMatrix matrix = static_cast<YuvMatrix>(m);
          const std::string what = absl::StrFormat("%dx%d %s %d-bit matrix %d seed %u", size[0], size[1],
                                                   LayoutName(layout), depth, m, seed);
          const Frame ref = MakeTestFrame(g, seed);
          const Frame dis = MakeTestFrame(g, seed, Noise{12, 0});
          CheckParity(ref, dis, matrix, what + " noise");
          CheckParity(UniformRandomFrame(g, seed * 2), UniformRandomFrame(g, seed * 2 + 1), matrix, what + " uniform");
          cases += 2;
          ++seed;
        }
      }
    }
  }
  std::printf("%d small pairs compared\n", cases);
}

TEST_F(Ssimulacra2CudaTest, MediumRandomFrames577x323) {
  uint32_t seed = 100;
  int m = 0;
  for (ChromaLayout layout : kLayouts) {
    for (int depth : kDepths) {
      const FrameGeometry g = Geometry(577, 323, layout, depth);
      const YuvMatrix matrix = static_cast<YuvMatrix>(m++ % 4);
      const std::string what = absl::StrFormat("577x323 %s %d-bit matrix %d seed %u", LayoutName(layout), depth,
                                               static_cast<int>(matrix), seed);
      CheckParity(MakeTestFrame(g, seed), MakeTestFrame(g, seed, Noise{20, 0}), matrix, what);
      ++seed;
    }
  }
  const FrameGeometry g = Geometry(577, 323, ChromaLayout::k420, 10);
  CheckParity(UniformRandomFrame(g, 7), UniformRandomFrame(g, 8), YuvMatrix::kBt601Full, "577x323 420 10-bit uniform");
}

TEST_F(Ssimulacra2CudaTest, LargeRandomFrames1921x1081) {
  struct Case {
    ChromaLayout layout;
    int depth;
    YuvMatrix matrix;
  };
  const Case cases[] = {{ChromaLayout::k420, 8, YuvMatrix::kBt709Limited},
                        {ChromaLayout::k422, 12, YuvMatrix::kBt601Limited},
                        {ChromaLayout::k444, 16, YuvMatrix::kBt601Full}};
  uint32_t seed = 300;
  for (const Case& c : cases) {
    const FrameGeometry g = Geometry(1921, 1081, c.layout, c.depth);
    const std::string what =
        absl::StrFormat("1921x1081 %s %d-bit matrix %d", LayoutName(c.layout), c.depth, static_cast<int>(c.matrix));
    const auto t0 = std::chrono::steady_clock::now();
    const Parity p = CheckParity(MakeTestFrame(g, seed), MakeTestFrame(g, seed, Noise{6, 0}), c.matrix, what);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%s: %.17g %s (%.2f s with the CPU reference)\n", what.c_str(), p.gpu_score,
                p.equal ? "== cpu" : "DIFFERS", s);
    ++seed;
  }
}

TEST_F(Ssimulacra2CudaTest, IdenticalPairsScoreExactly100) {
  const int sizes[][2] = {{8, 8}, {33, 31}, {577, 323}};
  int m = 0;
  for (const auto& size : sizes) {
    for (ChromaLayout layout : kLayouts) {
      for (int depth : {8, 16}) {
        const FrameGeometry g = Geometry(size[0], size[1], layout, depth);
        const YuvMatrix matrix = static_cast<YuvMatrix>(m++ % 4);
        const Frame f = MakeTestFrame(g, 5);
        const std::string what = absl::StrFormat("identical %dx%d %s %d-bit matrix %d", size[0], size[1],
                                                 LayoutName(layout), depth, static_cast<int>(matrix));
        const Parity p = CheckParity(f, f, matrix, what);
        EXPECT_TRUE(SameBits(p.gpu_score, 100.0)) << what << ": " << Value(p.gpu_score);
      }
    }
  }
}

TEST_F(Ssimulacra2CudaTest, LowerThirdDistortionOnly) {
  const int sizes[][2] = {{33, 31}, {577, 323}};
  for (const auto& size : sizes) {
    for (int depth : {8, 10}) {
      const FrameGeometry g = Geometry(size[0], size[1], ChromaLayout::k420, depth);
      const Frame ref = MakeTestFrame(g, 9);
      const std::string what = absl::StrFormat("lower third %dx%d %d-bit", size[0], size[1], depth);
      const Parity third =
          CheckParity(ref, MakeTestFrame(g, 9, Noise{16, 2 * size[1] / 3}), YuvMatrix::kBt709Limited, what);
      const Parity all = CheckParity(ref, MakeTestFrame(g, 9, Noise{16, 0}), YuvMatrix::kBt709Limited, what + " (all)");
      EXPECT_LT(third.gpu_score, 100.0) << what;
      EXPECT_GT(third.gpu_score, all.gpu_score) << what;
    }
  }
}

// The direct launch path gives the graph's bits; replays and geometry changes too.
TEST_F(Ssimulacra2CudaTest, GraphDirectReplayAndGeometryChanges) {
  const FrameGeometry a = Geometry(131, 67, ChromaLayout::k420, 10);
  const FrameGeometry b = Geometry(64, 48, ChromaLayout::k444, 8);
  for (bool graph : {true, false}) {
    for (int round = 0; round < 2; ++round) {
      CheckParity(MakeTestFrame(a, 1), MakeTestFrame(a, 1, Noise{9, 0}), YuvMatrix::kBt709Full,
                  absl::StrFormat("131x67 graph %d round %d", graph, round), graph);
      CheckParity(MakeTestFrame(b, 2), MakeTestFrame(b, 2, Noise{9, 0}), YuvMatrix::kBt709Full,
                  absl::StrFormat("64x48 graph %d round %d", graph, round), graph);
    }
  }
}

// The default options run a frame in slabs only while other frames are in flight on the
// device (slab_min_frames_in_flight), each form its own graph: alone, whole scales; with
// frames held in flight (the process's real count, as other instances' frames hold it),
// slabs; alone again, whole scales. The reference's bits every time, and a 1921x1081
// frame's scale 0 has more chunks than a slab, so the two forms do differ.
TEST_F(Ssimulacra2CudaTest, SlabsOnlyWhileOtherFramesAreInFlight) {
  const Ssimulacra2CudaOptions defaults;
  ASSERT_GT(defaults.sum_slab_chunks, 0);
  ASSERT_GE(defaults.slab_min_frames_in_flight, 2);
  const FrameGeometry g = Geometry(1921, 1081, ChromaLayout::k420, 8);
  ASSERT_GT((int64_t{1921} * 1081 + 1023) / 1024, defaults.sum_slab_chunks);
  const Frame ref = MakeTestFrame(g, 5);
  const Frame dis = MakeTestFrame(g, 5, Noise{7, 0});
  absl::StatusOr<FrameSums> cpu = ReferenceSums(ref, dis, YuvMatrix::kBt709Limited);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  absl::StatusOr<std::unique_ptr<Ssimulacra2Cuda>> gpu = Ssimulacra2Cuda::Create(defaults);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  const auto slab_frames = [&] { return (*gpu)->stats().frames_in_slabs; };
  // CheckOne runs each pair twice (Sums, then Score).
  EXPECT_TRUE(CheckOne(gpu->get(), ref, dis, *cpu, "alone").equal);
  EXPECT_EQ(slab_frames(), 0);
  {
    std::vector<std::unique_ptr<FrameInFlight>> others;
    for (int i = 1; i < defaults.slab_min_frames_in_flight; ++i) {
      others.push_back(std::make_unique<FrameInFlight>(defaults.device));
    }
    EXPECT_TRUE(CheckOne(gpu->get(), ref, dis, *cpu, "busy").equal);
    EXPECT_EQ(slab_frames(), 2);
  }
  EXPECT_TRUE(CheckOne(gpu->get(), ref, dis, *cpu, "alone again").equal);
  EXPECT_EQ(slab_frames(), 2);
  EXPECT_EQ((*gpu)->stats().frames, 6);
}

// Pictures in page-locked memory (the server's frame buffers) go to the device without
// the staging copy; pageable ones through it. Alternating both, with the graph and
// without: the reference's bits every time, and staging used only for the pageable ones.
TEST_F(Ssimulacra2CudaTest, PageLockedFramesSkipTheStagingCopy) {
  const FrameGeometry g = Geometry(577, 323, ChromaLayout::k420, 8);
  const Frame ref = MakeTestFrame(g, 7);
  const Frame dis = MakeTestFrame(g, 7, Noise{11, 0});
  Frame locked_ref = ref;
  Frame locked_dis = dis;
  ASSERT_EQ(cudaHostRegister(locked_ref.mutable_bytes(), locked_ref.size_bytes(), cudaHostRegisterDefault),
            cudaSuccess);
  ASSERT_EQ(cudaHostRegister(locked_dis.mutable_bytes(), locked_dis.size_bytes(), cudaHostRegisterDefault),
            cudaSuccess);
  absl::StatusOr<FrameSums> cpu = ReferenceSums(ref, dis, YuvMatrix::kBt709Limited);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  for (bool graph : {true, false}) {
    Ssimulacra2Cuda* gpu = Gpu(YuvMatrix::kBt709Limited, graph);
    ASSERT_NE(gpu, nullptr);
    for (int round = 0; round < 2; ++round) {
      const int64_t staged = gpu->stats().frames_staged;
      // CheckOne scores each pair twice (Sums, then Score).
      EXPECT_TRUE(CheckOne(gpu, locked_ref, locked_dis, *cpu, absl::StrFormat("page-locked graph %d", graph)).equal);
      EXPECT_EQ(gpu->stats().frames_staged, staged) << "page-locked frames went through staging";
      EXPECT_TRUE(CheckOne(gpu, ref, dis, *cpu, absl::StrFormat("pageable graph %d", graph)).equal);
      EXPECT_EQ(gpu->stats().frames_staged, staged + 2);
    }
  }
  cudaHostUnregister(locked_ref.mutable_bytes());
  cudaHostUnregister(locked_dis.mutable_bytes());
}

// The segment pipeline's fallback: under a wrong plan (one binade high) it refuses every
// nonzero sum, so every frame is run again with the event walk, with the reference's
// bits; the stats count it. Then the same instance with the real plan accepts again
// (the redo zeroed the segment workspaces it shares memory with) and keeps the bits.
TEST_F(Ssimulacra2CudaTest, RefusedSegmentSumsTakeTheEventWalkRedo) {
  const FrameGeometry sizes[] = {Geometry(131, 67, ChromaLayout::k420, 10), Geometry(577, 323, ChromaLayout::k444, 8),
                                 Geometry(1921, 1081, ChromaLayout::k420, 8)};
  for (const auto& [graph, channels, per_scale] :
       {std::tuple{true, 3, false}, std::tuple{false, 3, false}, std::tuple{true, 1, false}, std::tuple{true, 3, true},
        std::tuple{false, 1, true}}) {
    Ssimulacra2CudaOptions options;
    options.use_graph = graph;
    options.channels_per_sum_batch = channels;
    options.sum_stream_per_scale = per_scale;
    options.testing_segment_plan_mode = 1;  // exact::PlanMode::kOneBinadeHigh
    absl::StatusOr<std::unique_ptr<Ssimulacra2Cuda>> created = Ssimulacra2Cuda::Create(options);
    ASSERT_TRUE(created.ok()) << created.status();
    Ssimulacra2Cuda& gpu = **created;
    uint32_t seed = 40;
    for (const FrameGeometry& g : sizes) {
      const Frame ref = MakeTestFrame(g, seed);
      const Frame dis = MakeTestFrame(g, seed, Noise{10, 0});
      ++seed;
      absl::StatusOr<FrameSums> cpu = ReferenceSums(ref, dis, YuvMatrix::kBt709Limited);
      ASSERT_TRUE(cpu.ok()) << cpu.status();
      const std::string what = absl::StrFormat("%dx%d graph %d, %d channels per batch, sum stream per %s", g.width,
                                               g.height, graph, channels, per_scale ? "scale" : "parity");
      gpu.SetTestingSegmentPlanModeForTests(1);
      const int64_t redone = gpu.stats().frames_redone_event_walk;
      EXPECT_TRUE(CheckOne(&gpu, ref, dis, *cpu, what + " wrong plan").equal);
      EXPECT_EQ(gpu.stats().frames_redone_event_walk, redone + 2) << what << ": Sums and Score both redone";
      gpu.SetTestingSegmentPlanModeForTests(0);
      EXPECT_TRUE(CheckOne(&gpu, ref, dis, *cpu, what + " real plan after the redo").equal);
    }
    std::printf(
        "graph %d, %d channels per batch: %lld frames, %lld redone with the event walk (%lld sums refused, "
        "%lld overflowed)\n",
        graph, channels, static_cast<long long>(gpu.stats().frames),
        static_cast<long long>(gpu.stats().frames_redone_event_walk), static_cast<long long>(gpu.stats().sums_refused),
        static_cast<long long>(gpu.stats().sums_overflowed));
    EXPECT_GT(gpu.stats().sums_refused, 0);
  }
}

// The INEXACT mode (cub::DeviceReduce::Sum per plane, for the benchmark's cost
// comparison): it runs, graph and direct, and its sums are close to the reference's
// (every term is >= 0, so a relative bound holds) but not its bits.
TEST_F(Ssimulacra2CudaTest, InexactTreeModeRunsAndIsCloseButNotExact) {
  struct Case {
    FrameGeometry g;
    bool must_differ;  // a frame large enough that some of its 108 tree sums differ
  };
  const Case cases[] = {{Geometry(577, 323, ChromaLayout::k420, 10), false},
                        {Geometry(1921, 1081, ChromaLayout::k420, 8), true}};
  for (bool graph : {true, false}) {
    Ssimulacra2Cuda* gpu = Gpu(YuvMatrix::kBt709Limited, graph, Ssimulacra2SumMode::kInexactTree);
    ASSERT_NE(gpu, nullptr);
    uint32_t seed = 70;
    for (const Case& c : cases) {
      const Frame ref = MakeTestFrame(c.g, seed);
      const Frame dis = MakeTestFrame(c.g, seed, Noise{8, 0});
      ++seed;
      const std::string what = absl::StrFormat("inexact %dx%d graph %d", c.g.width, c.g.height, graph);
      absl::StatusOr<FrameSums> cpu = ReferenceSums(ref, dis, YuvMatrix::kBt709Limited);
      ASSERT_TRUE(cpu.ok()) << cpu.status();
      absl::StatusOr<FrameSums> tree = gpu->Sums(ref, dis);
      ASSERT_TRUE(tree.ok()) << what << ": " << tree.status();
      EXPECT_EQ(tree->num_scales, cpu->num_scales) << what;
      int differ = 0;
      for (int s = 0; s < kMaxScales; ++s) {
        for (int ch = 0; ch < kChannels; ++ch) {
          for (int k = 0; k < kSumsPerChannel; ++k) {
            const double a = tree->sums[s][ch][k];
            const double b = cpu->sums[s][ch][k];
            if (!SameBits(a, b)) ++differ;
            EXPECT_LE(std::fabs(a - b), 1e-8 * std::fabs(b))
                << what << ": sum [" << s << "][" << ch << "][" << k << "]: tree " << Value(a) << ", cpu " << Value(b);
          }
        }
      }
      absl::StatusOr<double> cpu_score = ScoreFromSums(*cpu);
      absl::StatusOr<double> tree_score = ScoreFromSums(*tree);
      ASSERT_TRUE(cpu_score.ok() && tree_score.ok()) << what;
      EXPECT_NEAR(*tree_score, *cpu_score, 1e-6) << what;
      std::printf("%s: %d of 108 sums differ from the reference's bits; score %.17g vs %.17g\n", what.c_str(), differ,
                  *tree_score, *cpu_score);
      if (c.must_differ) {
        EXPECT_GT(differ, 0) << what << ": the tree sum is not expected to be exact";
      }
    }
  }
}

TEST_F(Ssimulacra2CudaTest, RefusesWhatTheReferenceRefuses) {
  Ssimulacra2Cuda* engine = Gpu(YuvMatrix::kBt709Limited);
  ASSERT_NE(engine, nullptr);
  Ssimulacra2Cuda& gpu = *engine;
  const Frame small = *Frame::Create(Geometry(7, 8, ChromaLayout::k420, 8));
  EXPECT_EQ(gpu.Sums(small, small).status().code(), absl::StatusCode::kInvalidArgument);
  const Frame gray = *Frame::Create(Geometry(16, 16, ChromaLayout::k400, 8));
  EXPECT_EQ(gpu.Sums(gray, gray).status().code(), absl::StatusCode::kInvalidArgument);
  const Frame x = *Frame::Create(Geometry(16, 16, ChromaLayout::k420, 8));
  const Frame y = *Frame::Create(Geometry(16, 16, ChromaLayout::k420, 10));
  EXPECT_EQ(gpu.Sums(x, y).status().code(), absl::StatusCode::kInvalidArgument);
  Ssimulacra2CudaOptions bad;
  bad.device = 999;
  EXPECT_EQ(Ssimulacra2Cuda::Create(bad).status().code(), absl::StatusCode::kInvalidArgument);
  Ssimulacra2CudaOptions bad_mode;
  bad_mode.sum_mode = static_cast<Ssimulacra2SumMode>(7);
  EXPECT_EQ(Ssimulacra2Cuda::Create(bad_mode).status().code(), absl::StatusCode::kInvalidArgument);
  Ssimulacra2CudaOptions bad_batch;
  bad_batch.channels_per_sum_batch = 2;
  EXPECT_EQ(Ssimulacra2Cuda::Create(bad_batch).status().code(), absl::StatusCode::kInvalidArgument);
  Ssimulacra2CudaOptions bad_rank;
  bad_rank.sum_stream_priority_rank = -2;
  EXPECT_EQ(Ssimulacra2Cuda::Create(bad_rank).status().code(), absl::StatusCode::kInvalidArgument);
  for (int slab : {-32, 48}) {  // slabs are whole runs of 32 chunks
    Ssimulacra2CudaOptions bad_slab;
    bad_slab.sum_slab_chunks = slab;
    EXPECT_EQ(Ssimulacra2Cuda::Create(bad_slab).status().code(), absl::StatusCode::kInvalidArgument) << slab;
  }
  Ssimulacra2CudaOptions evict_without_slabs;
  evict_without_slabs.sum_slab_chunks = 0;
  evict_without_slabs.bases_evict_last = true;
  EXPECT_EQ(Ssimulacra2Cuda::Create(evict_without_slabs).status().code(), absl::StatusCode::kInvalidArgument);
  Ssimulacra2CudaOptions bad_threshold;
  bad_threshold.slab_min_frames_in_flight = 0;
  EXPECT_EQ(Ssimulacra2Cuda::Create(bad_threshold).status().code(), absl::StatusCode::kInvalidArgument);
  // A valid frame still works afterwards.
  const FrameGeometry g = Geometry(16, 16, ChromaLayout::k420, 8);
  CheckParity(MakeTestFrame(g, 3), MakeTestFrame(g, 3, Noise{5, 0}), YuvMatrix::kBt709Limited, "16x16 after errors");
}

}  // namespace
}  // namespace ssimulacra2
}  // namespace exactq
