// SsimCuda against the CPU reference, == on the bit pattern of both sums and of every
// output: every frame of the shared corpus (all depths and layouts; skipped without
// $EXACTQ_CORPUS), random frames of many sizes (1x1 to 3840x2160, every window truncated
// in the small ones) at 8..16 bits, identical pairs, inverted pairs (negative covariance,
// a negative total), half-inverted pairs (the total crosses zero), with enable_db and
// clip_db; several frames in flight; wrong plans and the general summary path (same
// bits); and the tie-free summaries against the general ones, chunk by chunk.
//
// Without a usable GPU every test is skipped, with the reason printed.
#include "engine/metrics/ssim/cuda/ssim_cuda.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "engine/format/frame.h"
#include "engine/format/frame_geometry.h"
#include "engine/io/testing/corpus.h"
#include "engine/io/testing/corpus_pairs.h"
#include "engine/metrics/ssim/cuda/ssim_cuda_pipeline.h"
#include "engine/metrics/ssim/ssim_reference.h"
#include "engine/metrics/ssim/ssim_score.h"
#include "engine/metrics/ssim/ssim_test_frames.h"
#include "gtest/gtest.h"

namespace exactq {
namespace ssim {
namespace {

uint64_t Bits(double x) {
  uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

// docs/design.md rule 1: bit equality, except that any NaN equals any NaN.
bool SameBits(double a, double b) { return (std::isnan(a) && std::isnan(b)) || Bits(a) == Bits(b); }

std::string Value(double x) { return absl::StrFormat("%.17g (%a)", x, x); }

// ---------------------------------------------------------------------------------
// Frames.

enum class Kind {
  kIndependent,   // two unrelated noise frames: covariance near 0, terms of both signs
  kCorrelated,    // smooth content and a noisy copy: SSIM near 0.9 (real-video-like)
  kIdentical,     // dis = ref: SSIM exactly 1 or 1 - 1 ulp
  kInverted,      // dis = max - ref: negative covariance, negative total
  kHalfInverted,  // inverted in the lower half only: the running sum rises, then falls
                  // through zero
  kFlat,          // constant frames (different levels)
  kExtremes,      // 0 and max in a checkerboard against its shift
};

const char* KindName(Kind k) {
  switch (k) {
    case Kind::kIndependent:
      return "independent";
    case Kind::kCorrelated:
      return "correlated";
    case Kind::kIdentical:
      return "identical";
    case Kind::kInverted:
      return "inverted";
    case Kind::kHalfInverted:
      return "half-inverted";
    case Kind::kFlat:
      return "flat";
    case Kind::kExtremes:
      return "extremes";
  }
  return "?";
}

struct Pair {
  Frame ref;
  Frame dis;
  std::string what;  // the case, in full: size, format, kind, seed
};

Pair MakePair(int width, int height, int depth, ChromaLayout layout, Kind kind, uint64_t seed) {
  const FrameGeometry g{width, height, PixelFormat{layout, depth}};
  Pair p{*Frame::Create(g), *Frame::Create(g),
         absl::StrFormat("%dx%d %s %s seed %llu", width, height, GeometryDescription(g), KindName(kind),
                         static_cast<unsigned long long>(seed))};
  const uint32_t max = g.max_sample_value();
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint32_t> any(0, max);
  std::normal_distribution<double> noise(0.0, (max + 1) / 64.0);
  // Smooth content: a few random gradients and waves, in [0, max].
  const double fx = 0.5 + std::uniform_real_distribution<double>(0, 20)(rng) / std::max(width, 1);
  const double fy = 0.5 + std::uniform_real_distribution<double>(0, 20)(rng) / std::max(height, 1);
  const double phase = std::uniform_real_distribution<double>(0, 6.28)(rng);
  const uint32_t flat_ref = any(rng);
  const uint32_t flat_dis = any(rng);
  const auto clamp = [max](double v) {
    return static_cast<uint32_t>(std::min<double>(max, std::max(0.0, std::round(v))));
  };
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const double smooth =
          max * (0.5 + 0.35 * std::sin(fx * x + phase) * std::cos(fy * y) + 0.1 * std::sin(0.31 * x + 0.17 * y));
      uint32_t r = 0;
      uint32_t d = 0;
      switch (kind) {
        case Kind::kIndependent:
          r = any(rng);
          d = any(rng);
          break;
        case Kind::kCorrelated:
          r = clamp(smooth + noise(rng) * 0.5);
          d = clamp(r + noise(rng));
          break;
        case Kind::kIdentical:
          r = clamp(smooth + noise(rng));
          d = r;
          break;
        case Kind::kInverted:
          r = clamp(smooth + noise(rng));
          d = max - clamp(r + noise(rng) * 0.25);
          break;
        case Kind::kHalfInverted:
          r = clamp(smooth + noise(rng));
          d = y >= height / 2 ? max - r : clamp(r + noise(rng) * 0.25);
          break;
        case Kind::kFlat:
          r = flat_ref;
          d = flat_dis;
          break;
        case Kind::kExtremes:
          r = ((x + y) & 1) ? max : 0;
          d = ((x + y + (y & 2)) & 1) ? max : 0;
          break;
      }
      p.ref.set_sample(0, x, y, r);
      p.dis.set_sample(0, x, y, d);
    }
  }
  return p;
}

// ---------------------------------------------------------------------------------
// The comparison.

SsimCudaOptions OptionsWith(bool enable_db, bool clip_db, int frames_in_flight = 2) {
  SsimCudaOptions o;
  o.frames_in_flight = frames_in_flight;
  o.outputs.enable_db = enable_db;
  o.outputs.clip_db = clip_db;
  return o;
}

// Compares a collected frame with the reference; `what` names the case in full.
void ExpectReferenceBits(const Frame& ref, const Frame& dis, const SsimOptions& outputs,
                         const absl::StatusOr<SsimCudaFrame>& got, const std::string& what) {
  ASSERT_TRUE(got.ok()) << what << ": " << got.status();
  absl::StatusOr<SsimSums> want = ReferenceSums(ref, dis);
  ASSERT_TRUE(want.ok()) << what << ": " << want.status();
  EXPECT_TRUE(SameBits(got->sums.term_sum, want->term_sum))
      << what << ": term sum cuda " << Value(got->sums.term_sum) << ", reference " << Value(want->term_sum)
      << "; walk: " << got->sum_stats.chunks_rejected << " chunks refused, " << got->sum_stats.terms_one_by_one
      << " terms one by one";
  EXPECT_TRUE(SameBits(got->sums.weight_sum, want->weight_sum))
      << what << ": weight sum cuda " << Value(got->sums.weight_sum) << ", reference " << Value(want->weight_sum);
  absl::StatusOr<FrameScores> want_scores = SsimOutputs(*want, ref.geometry(), outputs);
  ASSERT_TRUE(want_scores.ok()) << what << ": " << want_scores.status();
  ASSERT_EQ(got->scores.size(), want_scores->size()) << what;
  for (size_t i = 0; i < got->scores.size(); ++i) {
    EXPECT_EQ(got->scores[i].name, (*want_scores)[i].name) << what;
    EXPECT_TRUE(SameBits(got->scores[i].value, (*want_scores)[i].value))
        << what << ": " << got->scores[i].name << " cuda " << Value(got->scores[i].value) << ", reference "
        << Value((*want_scores)[i].value);
  }
}

void ExpectParity(SsimCuda& gpu, const Pair& p) {
  const absl::Status submitted = gpu.Submit(p.ref, p.dis);
  ASSERT_TRUE(submitted.ok()) << p.what << ": " << submitted;
  ExpectReferenceBits(p.ref, p.dis, gpu.options().outputs, gpu.Collect(), p.what);
}

class SsimCudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string reason;
    if (!SsimCudaAvailable(&reason)) GTEST_SKIP() << "no GPU, skipping the CUDA parity test: " << reason;
  }

  std::unique_ptr<SsimCuda> MakeGpu(const SsimCudaOptions& options) {
    absl::StatusOr<std::unique_ptr<SsimCuda>> gpu = SsimCuda::Create(options);
    EXPECT_TRUE(gpu.ok()) << gpu.status();
    return gpu.ok() ? *std::move(gpu) : nullptr;
  }
};

const Kind kAllKinds[] = {Kind::kIndependent,  Kind::kCorrelated, Kind::kIdentical, Kind::kInverted,
                          Kind::kHalfInverted, Kind::kFlat,       Kind::kExtremes};
const int kDepths[] = {8, 10, 12, 16};

// ---------------------------------------------------------------------------------
// Random frames.

TEST_F(SsimCudaTest, SmallFramesEveryKindDepthAndOption) {
  // Sizes where every window (or most) is truncated, and rows shorter than a chunk.
  const int kSizes[][2] = {{1, 1},    {2, 2},    {7, 5},    {5, 7},     {1, 9},   {9, 1},   {3, 1},
                           {1, 2},    {8, 8},    {9, 9},    {16, 16},   {17, 33}, {63, 65}, {255, 3},
                           {1023, 2}, {1025, 1}, {1, 1025}, {322, 182}, {33, 31}, {4, 1027}};
  std::unique_ptr<SsimCuda> gpus[3] = {MakeGpu(OptionsWith(false, false)), MakeGpu(OptionsWith(true, false)),
                                       MakeGpu(OptionsWith(true, true))};
  for (auto& g : gpus) ASSERT_NE(g, nullptr);
  uint64_t seed = 100;
  int cases = 0;
  for (const auto& size : kSizes) {
    for (int depth : kDepths) {
      for (Kind kind : kAllKinds) {
        const Pair p = MakePair(size[0], size[1], depth, ChromaLayout::k420, kind, ++seed);
        for (auto& g : gpus) ExpectParity(*g, p);
        ++cases;
        if (HasFatalFailure()) return;
      }
    }
  }
  std::printf("compared %d small pairs, 3 option sets each\n", cases);
}

TEST_F(SsimCudaTest, RandomSizesDepthsAndLayouts) {
  std::unique_ptr<SsimCuda> gpu = MakeGpu(OptionsWith(true, true, 3));
  ASSERT_NE(gpu, nullptr);
  std::mt19937_64 rng(7);
  const ChromaLayout layouts[] = {ChromaLayout::k400, ChromaLayout::k420, ChromaLayout::k422, ChromaLayout::k444};
  for (int i = 0; i < 60; ++i) {
    // Log-uniform sides from 1 to about 900, so both tiny and chunk-spanning rows occur.
    const int w = static_cast<int>(std::exp(std::uniform_real_distribution<double>(0, 6.8)(rng)));
    const int h = static_cast<int>(std::exp(std::uniform_real_distribution<double>(0, 6.8)(rng)));
    const int depth = 8 + static_cast<int>(rng() % 9);
    const Kind kind = kAllKinds[rng() % 7];
    const uint64_t seed = 1000 + static_cast<uint64_t>(i);
    ExpectParity(*gpu, MakePair(std::max(w, 1), std::max(h, 1), depth, layouts[rng() % 4], kind, seed));
    if (HasFatalFailure()) return;
  }
}

// The fused form of stages 1-3 (a benchmark and test knob) on the same kind of frames.
TEST_F(SsimCudaTest, FusedPipeline) {
  SsimCudaOptions o = OptionsWith(true, true, 2);
  o.fused_pipeline = true;
  std::unique_ptr<SsimCuda> gpu = MakeGpu(o);
  ASSERT_NE(gpu, nullptr);
  std::mt19937_64 rng(8);
  for (int i = 0; i < 30; ++i) {
    const int w = static_cast<int>(std::exp(std::uniform_real_distribution<double>(0, 7.6)(rng)));
    const int h = static_cast<int>(std::exp(std::uniform_real_distribution<double>(0, 7.0)(rng)));
    const int depth = 8 + static_cast<int>(rng() % 9);
    ExpectParity(*gpu, MakePair(std::max(w, 1), std::max(h, 1), depth, ChromaLayout::k420, kAllKinds[rng() % 7],
                                2000 + static_cast<uint64_t>(i)));
    if (HasFatalFailure()) return;
  }
  ExpectParity(*gpu, MakePair(3840, 2160, 8, ChromaLayout::k420, Kind::kHalfInverted, 2100));
}

TEST_F(SsimCudaTest, LargeFrames) {
  std::unique_ptr<SsimCuda> gpu = MakeGpu(OptionsWith(true, false, 2));
  ASSERT_NE(gpu, nullptr);
  struct Large {
    int w, h, depth;
    Kind kind;
  };
  const Large cases[] = {
      {1921, 1081, 8, Kind::kCorrelated},    {1921, 1081, 10, Kind::kInverted},   {1921, 1081, 12, Kind::kHalfInverted},
      {1921, 1081, 16, Kind::kIndependent},  {1921, 1081, 8, Kind::kIdentical},   {3840, 2160, 8, Kind::kCorrelated},
      {3840, 2160, 8, Kind::kInverted},      {3840, 2160, 10, Kind::kCorrelated}, {3840, 2160, 10, Kind::kIdentical},
      {3840, 2160, 12, Kind::kHalfInverted}, {3840, 2160, 16, Kind::kCorrelated},
  };
  uint64_t seed = 5000;
  for (const Large& c : cases) {
    ExpectParity(*gpu, MakePair(c.w, c.h, c.depth, ChromaLayout::k420, c.kind, ++seed));
    if (HasFatalFailure()) return;
  }
}

// ---------------------------------------------------------------------------------
// The shared corpus: every frame of every case.

TEST_F(SsimCudaTest, EveryCorpusFrame) {
  absl::StatusOr<std::string> dir = corpus::FindCorpusDir();
  if (!dir.ok()) GTEST_SKIP() << dir.status().message();
  absl::StatusOr<std::vector<corpus::CorpusCase>> cases = corpus::LoadCorpusCases(*dir);
  ASSERT_TRUE(cases.ok()) << cases.status();
  std::unique_ptr<SsimCuda> gpus[3] = {MakeGpu(OptionsWith(false, false)), MakeGpu(OptionsWith(true, false)),
                                       MakeGpu(OptionsWith(true, true))};
  for (auto& g : gpus) ASSERT_NE(g, nullptr);
  int frames = 0;
  for (const corpus::CorpusCase& c : *cases) {
    if (!corpus::CaseFilesPresent(c)) continue;  // left out of a smaller copy of the corpus
    absl::StatusOr<corpus::CorpusPairReader> pairs = corpus::CorpusPairReader::Open(c);
    ASSERT_TRUE(pairs.ok()) << pairs.status();
    Frame ref;
    Frame dis;
    for (int i = 0;; ++i) {
      absl::StatusOr<bool> more = pairs->Next(&ref, &dis);
      ASSERT_TRUE(more.ok()) << more.status();
      if (!*more) break;
      const std::string what = absl::StrFormat("corpus %s frame %d (%s)", c.id, i, GeometryDescription(ref.geometry()));
      for (auto& g : gpus) {
        ASSERT_TRUE(g->Submit(ref, dis).ok()) << what;
        ExpectReferenceBits(ref, dis, g->options().outputs, g->Collect(), what);
      }
      ++frames;
    }
  }
  EXPECT_GT(frames, 0);
  std::printf("compared %d corpus frames bit for bit (3 option sets each)\n", frames);
}

// ---------------------------------------------------------------------------------
// The class: several frames in flight, geometry changes, luma from the caller, errors.

TEST_F(SsimCudaTest, SeveralFramesInFlightCollectInOrder) {
  std::unique_ptr<SsimCuda> gpu = MakeGpu(OptionsWith(true, false, 5));
  ASSERT_NE(gpu, nullptr);
  std::vector<Pair> pairs;
  pairs.push_back(MakePair(640, 360, 8, ChromaLayout::k420, Kind::kCorrelated, 1));
  pairs.push_back(MakePair(7, 5, 10, ChromaLayout::k444, Kind::kInverted, 2));
  pairs.push_back(MakePair(1280, 720, 12, ChromaLayout::k422, Kind::kHalfInverted, 3));
  pairs.push_back(MakePair(1, 1, 16, ChromaLayout::k400, Kind::kIndependent, 4));
  pairs.push_back(MakePair(1920, 1080, 8, ChromaLayout::k420, Kind::kIdentical, 5));
  for (int round = 0; round < 2; ++round) {
    for (const Pair& p : pairs) ASSERT_TRUE(gpu->Submit(p.ref, p.dis).ok()) << p.what;
    EXPECT_EQ(gpu->in_flight(), 5);
    const absl::Status full = gpu->Submit(pairs[0].ref, pairs[0].dis);
    EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted) << full;
    EXPECT_EQ(gpu->Score(pairs[0].ref, pairs[0].dis).status().code(), absl::StatusCode::kFailedPrecondition);
    for (const Pair& p : pairs) ExpectReferenceBits(p.ref, p.dis, gpu->options().outputs, gpu->Collect(), p.what);
    EXPECT_EQ(gpu->in_flight(), 0);
  }
  EXPECT_EQ(gpu->Collect().status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(SsimCudaTest, BuffersFollowTheGeometry) {
  std::unique_ptr<SsimCuda> gpu = MakeGpu(OptionsWith(false, false, 1));
  ASSERT_NE(gpu, nullptr);
  const int sizes[][3] = {{3840, 2160, 10}, {1, 1, 8}, {1921, 1081, 16}, {7, 5, 8}, {3840, 2160, 8}, {2, 2, 12}};
  uint64_t seed = 77;
  for (const auto& s : sizes) {
    ExpectParity(*gpu, MakePair(s[0], s[1], s[2], ChromaLayout::k420, Kind::kCorrelated, ++seed));
    if (HasFatalFailure()) return;
  }
}

TEST_F(SsimCudaTest, SubmitLumaFromTheCallersPlanes) {
  std::unique_ptr<SsimCuda> gpu = MakeGpu(OptionsWith(false, false, 2));
  ASSERT_NE(gpu, nullptr);
  const Pair a = MakePair(999, 555, 10, ChromaLayout::k420, Kind::kInverted, 9);
  const Pair b = MakePair(640, 480, 8, ChromaLayout::k444, Kind::kCorrelated, 10);
  ASSERT_TRUE(gpu->SubmitLuma(a.ref.geometry(), a.ref.plane_bytes(0), a.dis.plane_bytes(0)).ok());
  ASSERT_TRUE(gpu->SubmitLuma(b.ref.geometry(), b.ref.plane_bytes(0), b.dis.plane_bytes(0)).ok());
  ExpectReferenceBits(a.ref, a.dis, gpu->options().outputs, gpu->Collect(), a.what);
  ExpectReferenceBits(b.ref, b.dis, gpu->options().outputs, gpu->Collect(), b.what);
}

TEST_F(SsimCudaTest, RejectsBadInput) {
  std::unique_ptr<SsimCuda> gpu = MakeGpu(OptionsWith(false, false, 1));
  ASSERT_NE(gpu, nullptr);
  const Pair a = MakePair(16, 16, 8, ChromaLayout::k420, Kind::kCorrelated, 1);
  const Pair b = MakePair(16, 17, 8, ChromaLayout::k420, Kind::kCorrelated, 1);
  EXPECT_EQ(gpu->Submit(a.ref, b.dis).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(gpu->SubmitLuma(FrameGeometry{0, 5, {}}, a.ref.plane_bytes(0), a.dis.plane_bytes(0)).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(gpu->in_flight(), 0);
  EXPECT_EQ(SsimCuda::Create(OptionsWith(false, false, 0)).status().code(), absl::StatusCode::kInvalidArgument);
  SsimCudaOptions no_such_device;
  no_such_device.device = 1 << 20;
  EXPECT_EQ(SsimCuda::Create(no_such_device).status().code(), absl::StatusCode::kInvalidArgument);
  // Still usable after the rejections.
  ExpectParity(*gpu, a);
}

// ---------------------------------------------------------------------------------
// A plan is advice; the tie-free summaries equal the general ones.

TEST_F(SsimCudaTest, WrongPlansAndTheGeneralPathGiveTheSameBits) {
  struct Variant {
    const char* name;
    exact::PlanMode mode;
    int fixed_frame;
    bool force_general;
    bool fused;
    bool segments;
  };
  // Under a wrong plan the segment pipeline refuses and the event walk runs (with the
  // same wrong plan): both refusals must cost time only.
  const Variant variants[] = {
      {"one binade high, fused", exact::PlanMode::kOneBinadeHigh, 0, false, true, false},
      {"all zero, fused", exact::PlanMode::kAllZero, 0, false, true, false},
      {"fixed 16, fused", exact::PlanMode::kFixedFrame, 16, false, true, false},
      {"all term by term, fused", exact::PlanMode::kAllTermByTerm, 0, false, true, false},
      {"random, fused", exact::PlanMode::kRandom, 0, false, true, false},
      {"general summaries, fused", exact::PlanMode::kApproximatePrefix, 0, true, true, false},
      {"one binade high, three kernels", exact::PlanMode::kOneBinadeHigh, 0, false, false, false},
      {"all term by term, three kernels", exact::PlanMode::kAllTermByTerm, 0, false, false, false},
      {"general summaries, three kernels", exact::PlanMode::kApproximatePrefix, 0, true, false, false},
      {"one binade high, segments then event walk", exact::PlanMode::kOneBinadeHigh, 0, false, false, true},
      {"all zero, segments then event walk", exact::PlanMode::kAllZero, 0, false, false, true},
      {"fixed 16, segments then event walk", exact::PlanMode::kFixedFrame, 16, false, false, true},
      {"random, segments then event walk", exact::PlanMode::kRandom, 0, false, false, true},
  };
  const Pair pairs[] = {MakePair(200, 150, 8, ChromaLayout::k420, Kind::kHalfInverted, 31),
                        MakePair(97, 61, 10, ChromaLayout::k420, Kind::kInverted, 32),
                        MakePair(128, 64, 16, ChromaLayout::k420, Kind::kCorrelated, 33),
                        MakePair(1920, 1080, 8, ChromaLayout::k420, Kind::kCorrelated, 34)};
  for (const Variant& v : variants) {
    SsimCudaOptions o = OptionsWith(false, false, 1);
    o.plan_mode = v.mode;
    o.fixed_frame = v.fixed_frame;
    o.force_general_summaries = v.force_general;
    o.fused_pipeline = v.fused;
    o.segment_pipeline = v.segments;
    std::unique_ptr<SsimCuda> gpu = MakeGpu(o);
    ASSERT_NE(gpu, nullptr);
    for (const Pair& p : pairs) {
      ASSERT_TRUE(gpu->Submit(p.ref, p.dis).ok());
      ExpectReferenceBits(p.ref, p.dis, o.outputs, gpu->Collect(), std::string(v.name) + " plan, " + p.what);
    }
  }
}

// The segment pipeline must be the path on frames like real ones (else its speed is not
// the twin's): the result comes from it, not from the event walk.
TEST_F(SsimCudaTest, SegmentPipelineGivesTheResultOnRealisticFrames) {
  const Pair pairs[] = {MakePair(3840, 2160, 8, ChromaLayout::k420, Kind::kCorrelated, 51),
                        MakePair(3840, 2160, 10, ChromaLayout::k420, Kind::kHalfInverted, 52),
                        MakePair(1920, 1080, 12, ChromaLayout::k422, Kind::kInverted, 53),
                        MakePair(640, 360, 16, ChromaLayout::k444, Kind::kCorrelated, 54),
                        MakePair(1920, 1080, 8, ChromaLayout::k420, Kind::kIdentical, 55)};
  std::unique_ptr<SsimCuda> gpu = MakeGpu(OptionsWith(true, false, 1));
  ASSERT_NE(gpu, nullptr);
  for (const Pair& p : pairs) {
    ASSERT_TRUE(gpu->Submit(p.ref, p.dis).ok());
    absl::StatusOr<SsimCudaFrame> got = gpu->Collect();
    ExpectReferenceBits(p.ref, p.dis, SsimOptions{true, false}, got, "segments, " + p.what);
    if (!got.ok()) continue;
    EXPECT_EQ(got->sum_stats.segment_accepted, 1) << p.what;
    std::printf("%s: segment steps %lld, crossing lanes %lld\n", p.what.c_str(),
                static_cast<long long>(got->sum_stats.segment_steps),
                static_cast<long long>(got->sum_stats.segment_crossing_lanes));
  }
}

// Device buffers for the pipeline functions, freed at scope exit.
class DeviceFrame {
 public:
  explicit DeviceFrame(const Pair& p) {
    const FrameGeometry& g = p.ref.geometry();
    const int64_t pixels = static_cast<int64_t>(g.width) * g.height;
    const size_t plane = g.plane_bytes(0);
    EXPECT_EQ(cudaMalloc(&planes_, 2 * plane), cudaSuccess);
    EXPECT_EQ(cudaMalloc(&terms_, gpu::SsimTermBytes(pixels)), cudaSuccess);
    EXPECT_EQ(cudaMalloc(&workspace_, gpu::SsimWorkspaceBytes(pixels)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(planes_, p.ref.plane_bytes(0), plane, cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(static_cast<char*>(planes_) + plane, p.dis.plane_bytes(0), plane, cudaMemcpyHostToDevice),
              cudaSuccess);
    frame.ref = planes_;
    frame.dis = static_cast<char*>(planes_) + plane;
    frame.width = g.width;
    frame.height = g.height;
    frame.bit_depth = g.format.bit_depth;
    frame.terms = static_cast<double*>(terms_);
    frame.workspace = workspace_;
  }
  ~DeviceFrame() {
    cudaFree(planes_);
    cudaFree(terms_);
    cudaFree(workspace_);
  }
  DeviceFrame(const DeviceFrame&) = delete;
  DeviceFrame& operator=(const DeviceFrame&) = delete;

  gpu::SsimDeviceFrame frame;

 private:
  void* planes_ = nullptr;
  void* terms_ = nullptr;
  void* workspace_ = nullptr;
};

TEST_F(SsimCudaTest, TieFreeSummariesEqualTheGeneralOnes) {
  struct Case {
    Pair pair;
    bool mostly_tie_free;  // a large frame whose sum grows steadily away from zero
  };
  const Case cases[] = {{MakePair(3840, 2160, 8, ChromaLayout::k420, Kind::kCorrelated, 41), true},
                        {MakePair(3840, 2160, 10, ChromaLayout::k420, Kind::kInverted, 42), true},
                        {MakePair(1920, 1080, 12, ChromaLayout::k420, Kind::kHalfInverted, 43), false},
                        {MakePair(1920, 1080, 16, ChromaLayout::k420, Kind::kIndependent, 44), false},
                        {MakePair(333, 777, 8, ChromaLayout::k420, Kind::kIdentical, 45), false}};
  for (const Case& c : cases) {
    for (bool fused : {true, false}) {
      const Pair& p = c.pair;
      DeviceFrame d(p);
      gpu::SsimPipelineOptions options;
      options.fused = fused;
      options.segments = false;  // the summaries compared here are the event walk's
      ASSERT_EQ(gpu::EnqueueSsimTermSum(d.frame, options, nullptr, nullptr), cudaSuccess);
      int64_t mismatches = -1;
      int64_t tie_free = -1;
      int64_t chunks = -1;
      ASSERT_EQ(gpu::CompareSummaryPaths(d.frame, nullptr, &mismatches, &tie_free, &chunks), cudaSuccess);
      EXPECT_EQ(mismatches, 0) << p.what;
      std::printf("%s (%s): %lld of %lld chunks tie-free, %lld differ from the general path\n", p.what.c_str(),
                  fused ? "fused" : "three kernels", static_cast<long long>(tie_free), static_cast<long long>(chunks),
                  static_cast<long long>(mismatches));
      if (c.mostly_tie_free) {
        EXPECT_GT(tie_free, chunks / 2) << p.what;
      }
    }
  }
}

}  // namespace
}  // namespace ssim
}  // namespace exactq
