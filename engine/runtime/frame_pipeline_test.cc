// FramePipeline's rules on any machine: the device is a stand-in GpuScorer (as in
// frame_scorer_placement_test) that computes with the CPU metric, so its bits are the
// reference's, and can be slowed, held at a gate or made to fail per frame. The pool,
// FrameScorer and pipeline are the real ones.
#include "engine/runtime/frame_pipeline.h"

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "engine/exact/ordered_sum_algebra.h"
#include "engine/metrics/registry.h"
#include "engine/runtime/device_fault.h"
#include "engine/runtime/device_pool.h"
#include "engine/runtime/testing/cpu_metrics_as_gpu.h"
#include "gtest/gtest.h"

namespace exactq {
namespace {

FrameGeometry Geometry() {
  FrameGeometry g;
  g.width = 16;
  g.height = 8;
  g.format = PixelFormat{ChromaLayout::k420, 8};
  return g;
}

// Frame i: content that differs per frame (a repeated or swapped frame shows); its
// first reference byte is i, so the stand-in knows which frame it scores.
struct Pair {
  Frame ref, dist;
};
Pair MakePair(int i, const FrameGeometry& g = Geometry()) {
  Pair p{*Frame::Create(g), *Frame::Create(g)};
  for (size_t k = 0; k < p.ref.size_bytes(); ++k) {
    p.ref.mutable_bytes()[k] = static_cast<uint8_t>(k * 7 + i);
    p.dist.mutable_bytes()[k] = static_cast<uint8_t>(k * 7 + i + (k % (3 + i % 11)));
  }
  p.ref.mutable_bytes()[0] = static_cast<uint8_t>(i);
  return p;
}
std::vector<Pair> MakePairs(int n) {
  std::vector<Pair> pairs;
  for (int i = 0; i < n; ++i) pairs.push_back(MakePair(i));
  return pairs;
}

FrameScores Reference(const std::string& metric, const Pair& p) {
  return *(*CreateMetric(metric, {}))->Score(p.ref, p.dist);
}

void ExpectSameBits(const FrameScores& got, const FrameScores& want, int frame) {
  ASSERT_EQ(got.size(), want.size()) << "frame " << frame;
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(got[k].name, want[k].name) << "frame " << frame;
    EXPECT_EQ(exact::BitsOf(got[k].value), exact::BitsOf(want[k].value)) << "frame " << frame << " " << want[k].name;
  }
}

// Stand-in devices, safe for several scorers scoring at once.
class StandIn {
 public:
  GpuScorerFactory Factory() {
    return [this](int device, const FrameGeometry&,
                  const std::vector<GpuMetricRequest>& metrics) -> absl::StatusOr<std::unique_ptr<GpuScorer>> {
      std::lock_guard<std::mutex> lock(mutex_);
      if (created_ == fail_creation_number) {
        ++created_;
        return absl::ResourceExhaustedError("stand-in: device memory admitted already");
      }
      ++created_;
      return std::unique_ptr<GpuScorer>(new Scorer(this, device, metrics));
    };
  }

  // Per frame (by its first reference byte): a delay, and whether it fails.
  std::function<std::chrono::microseconds(int frame)> delay = [](int) { return std::chrono::microseconds(0); };
  std::set<int> failing_frames;
  DeviceFault fault = DeviceFault::kTransient;
  int fail_creation_number = -1;  // the Nth scorer created (0-based) is refused

  // Scoring waits here while closed.
  void Close() {
    std::lock_guard<std::mutex> lock(mutex_);
    gate_open_ = false;
  }
  void Open() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      gate_open_ = true;
    }
    gate_.notify_all();
  }
  // Blocks until `n` frames are inside Score.
  void WaitForScoring(int n) {
    std::unique_lock<std::mutex> lock(mutex_);
    gate_.wait(lock, [&] { return now_ >= n; });
  }

  int max_concurrent() const { return max_.load(); }
  int scored() const { return scored_.load(); }
  std::set<int> devices_used() {
    std::lock_guard<std::mutex> lock(mutex_);
    return devices_used_;
  }

 private:
  class Scorer final : public GpuScorer {
   public:
    Scorer(StandIn* owner, int device, const std::vector<GpuMetricRequest>& metrics)
        : owner_(owner), device_(device), metrics_(metrics) {}
    absl::StatusOr<GpuFrameScores> Score(const Frame& reference, const Frame& distorted,
                                         const Frame* previous_reference, GpuStageTimes*) override {
      const int frame = reference.bytes()[0];
      {
        std::unique_lock<std::mutex> lock(owner_->mutex_);
        owner_->devices_used_.insert(device_);
        const int now = ++owner_->now_;
        if (now > owner_->max_.load()) owner_->max_.store(now);
        owner_->gate_.notify_all();
        owner_->gate_.wait(lock, [&] { return owner_->gate_open_; });
      }
      std::this_thread::sleep_for(owner_->delay(frame));
      absl::StatusOr<GpuFrameScores> out;
      if (owner_->failing_frames.count(frame) != 0) {
        out = WithDeviceFault(absl::InternalError("stand-in: kernel failed"), owner_->fault);
      } else {
        out = metrics_.Score(reference, distorted, previous_reference);
        owner_->scored_.fetch_add(1);
      }
      std::lock_guard<std::mutex> lock(owner_->mutex_);
      --owner_->now_;
      return out;
    }

   private:
    StandIn* owner_;
    int device_;
    stand_in::CpuMetricsAsGpu metrics_;
  };

  std::mutex mutex_;
  std::condition_variable gate_;
  bool gate_open_ = true;
  int now_ = 0;
  int created_ = 0;
  std::atomic<int> max_{0};
  std::atomic<int> scored_{0};
  std::set<int> devices_used_;
};

// What a pipeline answered, in the order it answered.
struct Answers {
  std::mutex mutex;
  std::vector<FramePipeline::Result> results;
  FramePipeline::Done Collect() {
    return [this](FramePipeline::Result r) {
      std::lock_guard<std::mutex> lock(mutex);
      results.push_back(std::move(r));
    };
  }
};

// Submits every pair (stopping at the first refusal), then drains.
absl::Status SubmitAllThenDrain(FramePipeline& pipeline, const std::vector<Pair>& pairs, Answers& answers) {
  for (const Pair& p : pairs) {
    if (absl::Status s = pipeline.Submit(p.ref, p.dist, answers.Collect()); !s.ok()) return s;
  }
  pipeline.Drain();
  return absl::OkStatus();
}

class FramePipelineTest : public ::testing::Test {
 protected:
  void MakePool(int devices) {
    pool_ = std::make_unique<DevicePool>(stand_in::Devices(devices), DevicePool::Options{});
  }
  std::unique_ptr<FrameScorer> Scorer(BackendPreference preference = BackendPreference::kAuto,
                                      const std::vector<MetricSpec>& metrics = {{"psnr", {}}},
                                      const FrameGeometry& g = Geometry()) {
    absl::StatusOr<std::unique_ptr<FrameScorer>> s =
        FrameScorer::Create(g, metrics, preference, {pool_.get(), stand_in_.Factory()});
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? std::move(*s) : nullptr;
  }

  std::unique_ptr<DevicePool> pool_;
  StandIn stand_in_;
};

TEST_F(FramePipelineTest, AnswersInSubmissionOrderUnderRandomDelays) {
  MakePool(1);
  // Frame delays from 0 to ~3 ms in a scrambled order, so later frames often finish first.
  stand_in_.delay = [](int frame) {
    return std::chrono::microseconds((static_cast<uint32_t>(frame) * 2654435761u >> 7) % 3000);
  };
  const std::vector<Pair> pairs = MakePairs(120);
  Answers answers;
  {
    FramePipeline pipeline(Scorer(), {4});
    ASSERT_EQ(pipeline.frames_in_flight(), 4);
    ASSERT_TRUE(SubmitAllThenDrain(pipeline, pairs, answers).ok());
    EXPECT_EQ(answers.results.size(), pairs.size());
  }
  ASSERT_EQ(answers.results.size(), pairs.size());
  for (size_t i = 0; i < pairs.size(); ++i) {
    const FramePipeline::Result& r = answers.results[i];
    EXPECT_EQ(r.sequence, i);
    ASSERT_TRUE(r.scored.ok()) << r.scored.status();
    EXPECT_EQ(r.scored->backend, Backend::kCuda);
    EXPECT_EQ(r.scored->device, "cuda:0 (Stand-in)");
    ExpectSameBits(r.scored->scores, Reference("psnr", pairs[i]), static_cast<int>(i));
  }
  EXPECT_EQ(stand_in_.scored(), 120);        // nothing scored twice
  EXPECT_GT(stand_in_.max_concurrent(), 1);  // frames did overlap
  EXPECT_LE(stand_in_.max_concurrent(), 4);
}

TEST_F(FramePipelineTest, SubmitBlocksWhileKFramesAreInFlight) {
  MakePool(1);
  const std::vector<Pair> pairs = MakePairs(6);
  stand_in_.Close();
  FramePipeline pipeline(Scorer(), {3});
  std::atomic<int> submitted{0}, answered{0}, worst{0};
  std::thread feeder([&] {
    for (const Pair& p : pairs) {
      ASSERT_TRUE(pipeline.Submit(p.ref, p.dist, [&](FramePipeline::Result) { answered.fetch_add(1); }).ok());
      const int held = submitted.fetch_add(1) + 1 - answered.load();
      if (held > worst.load()) worst.store(held);
    }
  });
  stand_in_.WaitForScoring(3);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(submitted.load(), 3);  // the fourth Submit waits
  stand_in_.Open();
  feeder.join();
  pipeline.Drain();
  EXPECT_EQ(answered.load(), 6);
  EXPECT_LE(worst.load(), 3);
  EXPECT_LE(stand_in_.max_concurrent(), 3);
}

TEST_F(FramePipelineTest, AnErrorInTheMiddleIsAnsweredInItsPlace) {
  MakePool(1);
  stand_in_.failing_frames = {5};
  stand_in_.delay = [](int frame) { return std::chrono::microseconds(frame % 3 == 0 ? 1500 : 0); };
  const std::vector<Pair> pairs = MakePairs(12);
  Answers answers;
  {
    // cuda never falls back: frame 5 is an error, the others are scores.
    FramePipeline pipeline(Scorer(BackendPreference::kCuda), {3});
    ASSERT_TRUE(SubmitAllThenDrain(pipeline, pairs, answers).ok());
  }
  ASSERT_EQ(answers.results.size(), pairs.size());
  for (size_t i = 0; i < pairs.size(); ++i) {
    const FramePipeline::Result& r = answers.results[i];
    EXPECT_EQ(r.sequence, i);
    if (i == 5) {
      EXPECT_EQ(r.scored.status().code(), absl::StatusCode::kUnavailable);
      EXPECT_NE(r.scored.status().message().find("backend cuda"), absl::string_view::npos);
    } else {
      ASSERT_TRUE(r.scored.ok()) << i << ": " << r.scored.status();
      ExpectSameBits(r.scored->scores, Reference("psnr", pairs[i]), static_cast<int>(i));
    }
  }
}

TEST_F(FramePipelineTest, AutoScoresAFailedFrameAgainOnTheCpuWithTheSameBits) {
  MakePool(1);
  stand_in_.failing_frames = {4};
  const std::vector<Pair> pairs = MakePairs(10);
  Answers answers;
  {
    FramePipeline pipeline(Scorer(), {2});
    ASSERT_TRUE(SubmitAllThenDrain(pipeline, pairs, answers).ok());
  }
  ASSERT_EQ(answers.results.size(), pairs.size());
  int cpu = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const FramePipeline::Result& r = answers.results[i];
    ASSERT_TRUE(r.scored.ok()) << r.scored.status();
    ExpectSameBits(r.scored->scores, Reference("psnr", pairs[i]), static_cast<int>(i));
    if (r.scored->backend == Backend::kCpu) {
      ++cpu;
      EXPECT_EQ(r.scored->fallback_reason, "device_error");
    }
  }
  EXPECT_GE(cpu, 1);  // frame 4, and whatever its scorer scored while the device cooled
  EXPECT_EQ(answers.results[4].scored->backend, Backend::kCpu);
}

TEST_F(FramePipelineTest, CancelReleasesABlockedSubmitAndFinishesFramesBeingScored) {
  MakePool(1);
  const std::vector<Pair> pairs = MakePairs(3);
  stand_in_.Close();
  Answers answers;
  FramePipeline pipeline(Scorer(), {1});
  ASSERT_TRUE(pipeline.Submit(pairs[0].ref, pairs[0].dist, answers.Collect()).ok());
  stand_in_.WaitForScoring(1);
  absl::Status blocked;
  std::thread second([&] { blocked = pipeline.Submit(pairs[1].ref, pairs[1].dist, answers.Collect()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  pipeline.Cancel(absl::AbortedError("client went away"));
  second.join();
  EXPECT_EQ(blocked.code(), absl::StatusCode::kAborted);
  EXPECT_EQ(pipeline.Submit(pairs[2].ref, pairs[2].dist, answers.Collect()).code(), absl::StatusCode::kAborted);
  stand_in_.Open();
  pipeline.Drain();
  ASSERT_EQ(answers.results.size(), 1u);  // the frame being scored, once; the others never entered
  EXPECT_TRUE(answers.results[0].scored.ok());
}

TEST_F(FramePipelineTest, DestroyingWithFramesInFlightAnswersEachOnce) {
  MakePool(1);
  const std::vector<Pair> pairs = MakePairs(4);
  stand_in_.Close();
  Answers answers;
  auto pipeline = std::make_unique<FramePipeline>(Scorer(), FramePipeline::Options{4});
  for (const Pair& p : pairs) ASSERT_TRUE(pipeline->Submit(p.ref, p.dist, answers.Collect()).ok());
  stand_in_.WaitForScoring(4);
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    stand_in_.Open();
  });
  pipeline.reset();  // joins: waits for the frames being scored
  opener.join();
  ASSERT_EQ(answers.results.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(answers.results[i].sequence, i);
  EXPECT_EQ(stand_in_.scored(), 4);
}

TEST_F(FramePipelineTest, OneFrameInFlightAnswersAsFrameScorerDoes) {
  // The same frames, the same failure, through a plain FrameScorer and a K=1 pipeline.
  const std::vector<Pair> pairs = MakePairs(8);
  std::vector<ScoredFrame> direct;
  {
    MakePool(1);
    stand_in_.failing_frames = {3};
    std::unique_ptr<FrameScorer> scorer = Scorer();
    for (const Pair& p : pairs) direct.push_back(*scorer->Score(p.ref, p.dist));
  }
  StandIn fresh;
  fresh.failing_frames = {3};
  MakePool(1);
  Answers answers;
  {
    auto first =
        FrameScorer::Create(Geometry(), {{"psnr", {}}}, BackendPreference::kAuto, {pool_.get(), fresh.Factory()});
    ASSERT_TRUE(first.ok());
    FramePipeline pipeline(std::move(*first), {1});
    ASSERT_TRUE(SubmitAllThenDrain(pipeline, pairs, answers).ok());
  }
  ASSERT_EQ(answers.results.size(), direct.size());
  for (size_t i = 0; i < direct.size(); ++i) {
    const ScoredFrame& got = *answers.results[i].scored;
    EXPECT_EQ(got.backend, direct[i].backend) << i;
    EXPECT_EQ(got.device, direct[i].device) << i;
    EXPECT_EQ(got.fallback_reason, direct[i].fallback_reason) << i;
    ExpectSameBits(got.scores, direct[i].scores, static_cast<int>(i));
  }
  EXPECT_EQ(fresh.max_concurrent(), 1);
}

TEST_F(FramePipelineTest, CpuFallbackEqualsTheCpuReferenceBitForBit) {
  MakePool(0);  // no GPU: auto places every scorer on the CPU (no_gpu)
  for (const int bit_depth : {8, 10}) {
    FrameGeometry g{24, 16, PixelFormat{ChromaLayout::k420, bit_depth}};
    std::vector<Pair> pairs;
    for (int i = 0; i < 9; ++i) {
      Pair p = MakePair(i, g);
      if (bit_depth > 8) {  // keep 10-bit words in range
        for (size_t k = 1; k < p.ref.size_bytes(); k += 2) {
          p.ref.mutable_bytes()[k] &= 3;
          p.dist.mutable_bytes()[k] &= 3;
        }
      }
      pairs.push_back(std::move(p));
    }
    const std::vector<MetricSpec> metrics = {{"psnr", {}}, {"ssim", {}}};
    Answers answers;
    {
      FramePipeline pipeline(Scorer(BackendPreference::kAuto, metrics, g), {3});
      EXPECT_EQ(pipeline.frames_in_flight(), 3);
      ASSERT_TRUE(SubmitAllThenDrain(pipeline, pairs, answers).ok());
    }
    ASSERT_EQ(answers.results.size(), pairs.size());
    for (size_t i = 0; i < pairs.size(); ++i) {
      const ScoredFrame& got = *answers.results[i].scored;
      EXPECT_EQ(got.backend, Backend::kCpu);
      EXPECT_EQ(got.fallback_reason, "no_gpu");
      FrameScores want = Reference("psnr", pairs[i]);
      FrameScores ssim = Reference("ssim", pairs[i]);
      want.insert(want.end(), ssim.begin(), ssim.end());
      ExpectSameBits(got.scores, want, static_cast<int>(i));
    }
  }
}

TEST_F(FramePipelineTest, SiblingsStayOnTheStreamsDeviceAndDoNotMoveThePoolsTurn) {
  MakePool(2);
  const std::vector<Pair> pairs = MakePairs(8);
  Answers answers;
  {
    FramePipeline pipeline(Scorer(), {4});
    ASSERT_TRUE(SubmitAllThenDrain(pipeline, pairs, answers).ok());
  }
  for (const FramePipeline::Result& r : answers.results) EXPECT_EQ(r.scored->device, "cuda:0 (Stand-in)");
  EXPECT_EQ(stand_in_.devices_used(), std::set<int>{0});
  EXPECT_EQ(Scorer()->placement(), "cuda:1 (Stand-in)");  // the next stream gets the next device
}

TEST_F(FramePipelineTest, ASiblingThatDoesNotFitLowersFramesInFlight) {
  MakePool(1);
  stand_in_.fail_creation_number = 2;  // the first scorer and one sibling fit
  FramePipeline pipeline(Scorer(), {4});
  EXPECT_EQ(pipeline.frames_in_flight(), 2);
  EXPECT_EQ(pipeline.sibling_error().code(), absl::StatusCode::kResourceExhausted);
  const Pair p = MakePair(1);
  Answers answers;
  ASSERT_TRUE(pipeline.Submit(p.ref, p.dist, answers.Collect()).ok());
  pipeline.Drain();
  ASSERT_EQ(answers.results.size(), 1u);
  EXPECT_EQ(answers.results[0].scored->backend, Backend::kCuda);
}

// A twin's per-frame outputs need not be its metric's answer: vmaf's give six features,
// its sequence stage adds vmaf a frame later. A stream of psnr, vmaf and ssim on the
// stand-in device, frames in flight, answers the CPU backend's bits, output for output;
// also when frame 3 fails on the device and goes to the CPU mid-stream (motion reads
// frame 2's reference there, and frame 4 reads frame 3's).
TEST_F(FramePipelineTest, ATwinsPerFrameOutputsReachItsSequenceStage) {
  MakePool(1);
  const FrameGeometry g{64, 48, PixelFormat{ChromaLayout::k420, 8}};
  const std::vector<MetricSpec> metrics = {{"psnr", {}}, {"vmaf", {}}, {"ssim", {}}};
  std::vector<Pair> pairs;
  for (int i = 0; i < 7; ++i) pairs.push_back(MakePair(i, g));
  Answers cpu_answers;
  {
    FramePipeline pipeline(Scorer(BackendPreference::kCpu, metrics, g), {3});
    ASSERT_TRUE(SubmitAllThenDrain(pipeline, pairs, cpu_answers).ok());
  }
  ASSERT_EQ(cpu_answers.results.size(), pairs.size());
  for (const std::set<int>& failing : {std::set<int>{}, std::set<int>{3}}) {
    stand_in_.failing_frames = failing;
    Answers answers;
    {
      FramePipeline pipeline(Scorer(BackendPreference::kAuto, metrics, g), {3});
      ASSERT_TRUE(SubmitAllThenDrain(pipeline, pairs, answers).ok());
    }
    ASSERT_EQ(answers.results.size(), pairs.size());
    for (size_t i = 0; i < pairs.size(); ++i) {
      const FramePipeline::Result& cpu = cpu_answers.results[i];
      const FramePipeline::Result& got = answers.results[i];
      ASSERT_TRUE(cpu.scored.ok() && got.scored.ok()) << cpu.scored.status() << " " << got.scored.status();
      EXPECT_EQ(got.scored->outputs_per_metric, cpu.scored->outputs_per_metric) << "frame " << i;
      ExpectSameBits(got.scored->scores, cpu.scored->scores, static_cast<int>(i));
    }
    EXPECT_EQ(answers.results[0].scored->backend, Backend::kCuda);
    if (!failing.empty()) {
      EXPECT_EQ(answers.results[3].scored->backend, Backend::kCpu);
    }
  }
}

// On a GPU host (tests/gpu and the lead's H200): the real device through the real
// pool, several frames in flight, every answer on the GPU with the CPU's bits.
TEST(FramePipelineGpuTest, RealDeviceAnswersInOrderWithTheCpuBits) {
  const FrameGeometry g{1920, 1080, PixelFormat{ChromaLayout::k420, 8}};
  absl::StatusOr<std::unique_ptr<FrameScorer>> first =
      FrameScorer::Create(g, {{"psnr", {}}, {"ssim", {}}}, BackendPreference::kCuda);
  if (!first.ok()) GTEST_SKIP() << "no usable GPU: " << first.status();
  std::vector<Pair> pairs;
  for (int i = 0; i < 12; ++i) pairs.push_back(MakePair(i, g));
  Answers answers;
  {
    FramePipeline pipeline(std::move(*first), {3});
    EXPECT_EQ(pipeline.frames_in_flight(), 3) << pipeline.sibling_error();
    ASSERT_TRUE(SubmitAllThenDrain(pipeline, pairs, answers).ok());
  }
  ASSERT_EQ(answers.results.size(), pairs.size());
  for (size_t i = 0; i < pairs.size(); ++i) {
    const FramePipeline::Result& r = answers.results[i];
    EXPECT_EQ(r.sequence, i);
    ASSERT_TRUE(r.scored.ok()) << r.scored.status();
    EXPECT_EQ(r.scored->backend, Backend::kCuda);
    FrameScores want = Reference("psnr", pairs[i]);
    FrameScores ssim = Reference("ssim", pairs[i]);
    want.insert(want.end(), ssim.begin(), ssim.end());
    ExpectSameBits(r.scored->scores, want, static_cast<int>(i));
  }
}

// On a GPU host: one request of every metric with a CUDA twin, on one device frame per
// frame in flight, over layouts, depths and odd sizes; every answer has the CPU's bits,
// and each frame's upload is one pair's bytes (the planes the request reads), counted
// where the device frame copies them.
TEST(FramePipelineGpuTest, EveryTwinReadsOneDeviceFrameWithTheCpuBits) {
  struct Case {
    FrameGeometry geometry;
    std::vector<MetricSpec> metrics;
    int planes_uploaded;
  };
  const std::vector<MetricSpec> all = {{"psnr", {}}, {"ssim", {}}, {"ssimulacra2", {}}};
  const std::vector<Case> cases = {
      {{1920, 1080, PixelFormat{ChromaLayout::k420, 8}}, all, 3},
      {{333, 197, PixelFormat{ChromaLayout::k444, 10}}, all, 3},
      {{127, 65, PixelFormat{ChromaLayout::k422, 12}}, all, 3},
      {{640, 360, PixelFormat{ChromaLayout::k420, 16}}, all, 3},
      {{640, 360, PixelFormat{ChromaLayout::k420, 8}}, {{"ssim", {}}}, 1},
      {{640, 360, PixelFormat{ChromaLayout::k420, 10}}, {{"psnr", {{"enable_chroma", "false"}}}, {"ssim", {}}}, 1},
  };
  for (const Case& c : cases) {
    const FrameGeometry& g = c.geometry;
    SCOPED_TRACE(GeometryDescription(g));
    absl::StatusOr<std::unique_ptr<FrameScorer>> first = FrameScorer::Create(g, c.metrics, BackendPreference::kCuda);
    if (!first.ok()) GTEST_SKIP() << "no usable GPU: " << first.status();
    std::vector<Pair> pairs;
    for (int i = 0; i < 6; ++i) pairs.push_back(MakePair(i, g));
    // Samples above the bit depth are out of range: keep each 16-bit sample's top bits clear.
    if (g.bytes_per_sample() == 2) {
      for (Pair& p : pairs) {
        for (Frame* f : {&p.ref, &p.dist}) {
          for (size_t k = 1; k < f->size_bytes(); k += 2) {
            f->mutable_bytes()[k] &= static_cast<uint8_t>((1u << (g.format.bit_depth - 8)) - 1);
          }
        }
      }
    }
    Answers answers;
    {
      FramePipeline pipeline(std::move(*first), {3});
      ASSERT_TRUE(SubmitAllThenDrain(pipeline, pairs, answers).ok());
    }
    ASSERT_EQ(answers.results.size(), pairs.size());
    const uint64_t pair_bytes =
        2 * static_cast<uint64_t>(c.planes_uploaded >= g.plane_count() ? g.frame_bytes()
                                                                       : g.plane_offset(c.planes_uploaded));
    for (size_t i = 0; i < pairs.size(); ++i) {
      const FramePipeline::Result& r = answers.results[i];
      ASSERT_TRUE(r.scored.ok()) << r.scored.status();
      EXPECT_EQ(r.scored->backend, Backend::kCuda);
      EXPECT_EQ(r.scored->host_to_device_bytes, pair_bytes) << "frame " << i;
      FrameScores want;
      for (const MetricSpec& m : c.metrics) {
        FrameScores one = *(*CreateMetric(m.name, m.options))->Score(pairs[i].ref, pairs[i].dist);
        want.insert(want.end(), one.begin(), one.end());
      }
      ExpectSameBits(r.scored->scores, want, static_cast<int>(i));
    }
  }
}

// On a GPU host: a stream of every metric, vmaf's previous reference and sequence stage
// included, with frames in flight: the cuda backend answers the cpu backend's bits, and
// each frame uploads one pair plus the previous reference's luma (none for frame 0).
TEST(FramePipelineGpuTest, AStreamWithVmafAnswersTheCpusBits) {
  const FrameGeometry g{352, 288, PixelFormat{ChromaLayout::k420, 8}};
  const std::vector<MetricSpec> metrics = {{"psnr", {}}, {"vmaf", {}}, {"ssim", {}}};
  std::vector<Pair> pairs;
  for (int i = 0; i < 9; ++i) pairs.push_back(MakePair(i, g));
  Answers answers[2];
  for (int b = 0; b < 2; ++b) {
    absl::StatusOr<std::unique_ptr<FrameScorer>> first =
        FrameScorer::Create(g, metrics, b == 0 ? BackendPreference::kCpu : BackendPreference::kCuda);
    if (!first.ok()) GTEST_SKIP() << "no usable GPU: " << first.status();
    FramePipeline pipeline(std::move(*first), {3});
    ASSERT_TRUE(SubmitAllThenDrain(pipeline, pairs, answers[b]).ok());
    ASSERT_EQ(answers[b].results.size(), pairs.size());
  }
  for (size_t i = 0; i < pairs.size(); ++i) {
    const FramePipeline::Result& cpu = answers[0].results[i];
    const FramePipeline::Result& gpu = answers[1].results[i];
    ASSERT_TRUE(cpu.scored.ok() && gpu.scored.ok()) << cpu.scored.status() << " " << gpu.scored.status();
    EXPECT_EQ(gpu.scored->backend, Backend::kCuda);
    EXPECT_EQ(gpu.scored->host_to_device_bytes, 2 * g.frame_bytes() + (i == 0 ? 0 : g.plane_offset(1)))
        << "frame " << i;
    ExpectSameBits(gpu.scored->scores, cpu.scored->scores, static_cast<int>(i));
  }
}

}  // namespace
}  // namespace exactq
