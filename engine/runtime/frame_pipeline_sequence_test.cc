// FramePipeline with a metric that has state across frames (VMAF: motion reads the
// previous reference, integer_motion2 the next frame's motion), on the CPU: every
// answer equals the whole sequence scored in order by vmaf's own sequence function, bit
// for bit, whatever K; answers stay in order; an error ends the sequence with the
// frames before it answered as a stream that ended there; Drain ends a sequence.
#include <atomic>
#include <mutex>
#include <vector>

#include "engine/exact/ordered_sum_algebra.h"
#include "engine/metrics/registry.h"
#include "engine/metrics/vmaf/vmaf_sequence.h"
#include "engine/runtime/frame_pipeline.h"
#include "gtest/gtest.h"

namespace exactq {
namespace {

const FrameGeometry kGeometry{40, 24, PixelFormat{ChromaLayout::k420, 8}};

struct Pair {
  Frame ref, dist;
};

// Content that moves from frame to frame (so motion is not zero) with a noisy copy.
std::vector<Pair> MakePairs(int n, const FrameGeometry& g = kGeometry) {
  std::vector<Pair> pairs;
  for (int i = 0; i < n; ++i) {
    Pair p{*Frame::Create(g), *Frame::Create(g)};
    for (size_t k = 0; k < p.ref.size_bytes(); ++k) {
      const uint32_t v = static_cast<uint32_t>((k * 37 + static_cast<size_t>(i) * 11 * (k % 7)) % 220) + 16;
      p.ref.mutable_bytes()[k] = static_cast<uint8_t>(v);
      p.dist.mutable_bytes()[k] = static_cast<uint8_t>(v + (k * 13 + static_cast<size_t>(i)) % 9);
    }
    pairs.push_back(std::move(p));
  }
  return pairs;
}

std::vector<FrameScores> SequenceReference(const std::vector<Pair>& pairs) {
  std::vector<Frame> refs, dists;
  for (const Pair& p : pairs) {
    refs.push_back(p.ref);
    dists.push_back(p.dist);
  }
  return *vmaf::ScoreVmafSequence(refs, dists);
}

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

void ExpectSameBits(const FrameScores& got, const FrameScores& want, size_t frame) {
  ASSERT_EQ(got.size(), want.size()) << "frame " << frame;
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(got[k].name, want[k].name) << "frame " << frame;
    EXPECT_EQ(exact::BitsOf(got[k].value), exact::BitsOf(want[k].value)) << "frame " << frame << " " << want[k].name;
  }
}

std::unique_ptr<FrameScorer> CpuScorer(const std::vector<MetricSpec>& metrics) {
  absl::StatusOr<std::unique_ptr<FrameScorer>> s = FrameScorer::Create(kGeometry, metrics, BackendPreference::kCpu);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

TEST(FramePipelineSequenceTest, VmafAnswersEqualTheWholeSequenceForEveryK) {
  const std::vector<Pair> pairs = MakePairs(9);
  const std::vector<FrameScores> want = SequenceReference(pairs);
  for (int k : {1, 2, 3, 5}) {
    SCOPED_TRACE(k);
    Answers answers;
    {
      FramePipeline pipeline(CpuScorer({{"vmaf", {}}}), {k});
      for (const Pair& p : pairs) ASSERT_TRUE(pipeline.Submit(p.ref, p.dist, answers.Collect()).ok());
      pipeline.Drain();
      ASSERT_EQ(answers.results.size(), pairs.size());
    }
    for (size_t i = 0; i < pairs.size(); ++i) {
      EXPECT_EQ(answers.results[i].sequence, i);
      ASSERT_TRUE(answers.results[i].scored.ok()) << answers.results[i].scored.status();
      ExpectSameBits(answers.results[i].scored->scores, want[i], i);
    }
  }
}

TEST(FramePipelineSequenceTest, PerFrameMetricsBesideVmafKeepTheirOutputs) {
  const std::vector<Pair> pairs = MakePairs(5);
  const std::vector<FrameScores> vmaf = SequenceReference(pairs);
  Answers answers;
  FramePipeline pipeline(CpuScorer({{"psnr", {}}, {"vmaf", {}}}), {2});
  for (const Pair& p : pairs) ASSERT_TRUE(pipeline.Submit(p.ref, p.dist, answers.Collect()).ok());
  pipeline.Drain();
  ASSERT_EQ(answers.results.size(), pairs.size());
  for (size_t i = 0; i < pairs.size(); ++i) {
    FrameScores want = *(*CreateMetric("psnr", {}))->Score(pairs[i].ref, pairs[i].dist);
    want.insert(want.end(), vmaf[i].begin(), vmaf[i].end());
    ASSERT_TRUE(answers.results[i].scored.ok());
    ExpectSameBits(answers.results[i].scored->scores, want, i);
    EXPECT_EQ(answers.results[i].scored->outputs_per_metric, (std::vector<size_t>{3, 7}));
  }
}

// K = 1 must not wait for itself: frame 0 waits for frame 1, whose Submit needs a slot.
TEST(FramePipelineSequenceTest, OneFrameInFlightStillAnswersEveryFrame) {
  const std::vector<Pair> pairs = MakePairs(4);
  Answers answers;
  FramePipeline pipeline(CpuScorer({{"vmaf", {}}}), {1});
  for (size_t i = 0; i < pairs.size(); ++i) {
    ASSERT_TRUE(pipeline.Submit(pairs[i].ref, pairs[i].dist, answers.Collect()).ok());
    pipeline.WaitForSlot();  // returns although frame i waits for frame i + 1
  }
  pipeline.Drain();
  EXPECT_EQ(answers.results.size(), pairs.size());
}

// A frame that fails ends the sequence: the frames before it are answered as a stream
// of those frames (the last one with its own motion), then the error in its place.
TEST(FramePipelineSequenceTest, AnErrorEndsTheSequenceAfterTheFramesBeforeIt) {
  std::vector<Pair> pairs = MakePairs(6);
  const std::vector<Pair> before(pairs.begin(), pairs.begin() + 3);
  const std::vector<FrameScores> want = SequenceReference(before);
  const FrameGeometry other{48, 24, PixelFormat{ChromaLayout::k420, 8}};
  pairs[3].dist = *Frame::Create(other);  // wrong geometry: frame 3 fails
  Answers answers;
  FramePipeline pipeline(CpuScorer({{"vmaf", {}}}), {2});
  for (const Pair& p : pairs) ASSERT_TRUE(pipeline.Submit(p.ref, p.dist, answers.Collect()).ok());
  pipeline.Drain();
  ASSERT_EQ(answers.results.size(), pairs.size());
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(answers.results[i].scored.ok());
    ExpectSameBits(answers.results[i].scored->scores, want[i], i);
  }
  EXPECT_FALSE(answers.results[3].scored.ok());
  EXPECT_EQ(answers.results[3].sequence, 3u);
}

// Drain ends a stream; frames submitted afterwards start a new one (frame 0 rules).
TEST(FramePipelineSequenceTest, DrainEndsTheSequence) {
  const std::vector<Pair> pairs = MakePairs(6);
  const std::vector<Pair> first(pairs.begin(), pairs.begin() + 3), second(pairs.begin() + 3, pairs.end());
  const std::vector<FrameScores> want_first = SequenceReference(first), want_second = SequenceReference(second);
  Answers answers;
  FramePipeline pipeline(CpuScorer({{"vmaf", {}}}), {2});
  for (const Pair& p : first) ASSERT_TRUE(pipeline.Submit(p.ref, p.dist, answers.Collect()).ok());
  pipeline.Drain();
  ASSERT_EQ(answers.results.size(), 3u);
  for (const Pair& p : second) ASSERT_TRUE(pipeline.Submit(p.ref, p.dist, answers.Collect()).ok());
  pipeline.Drain();
  ASSERT_EQ(answers.results.size(), 6u);
  for (size_t i = 0; i < 3; ++i) {
    ExpectSameBits(answers.results[i].scored->scores, want_first[i], i);
    ExpectSameBits(answers.results[3 + i].scored->scores, want_second[i], 3 + i);
  }
}

// FrameScorer::Score alone is a stream of one frame.
TEST(FramePipelineSequenceTest, ScoreAloneIsAStreamOfOneFrame) {
  const std::vector<Pair> pairs = MakePairs(1);
  absl::StatusOr<ScoredFrame> scored = CpuScorer({{"vmaf", {}}})->Score(pairs[0].ref, pairs[0].dist);
  ASSERT_TRUE(scored.ok()) << scored.status();
  ExpectSameBits(scored->scores, SequenceReference(pairs)[0], 0);
}

// The destructor answers frames that still wait for a later frame.
TEST(FramePipelineSequenceTest, DestroyingAnswersWaitingFramesOnce) {
  const std::vector<Pair> pairs = MakePairs(3);
  std::atomic<int> answered{0};
  {
    FramePipeline pipeline(CpuScorer({{"vmaf", {}}}), {2});
    for (const Pair& p : pairs) {
      ASSERT_TRUE(pipeline.Submit(p.ref, p.dist, [&](FramePipeline::Result) { answered.fetch_add(1); }).ok());
    }
  }
  EXPECT_EQ(answered.load(), 3);
}

}  // namespace
}  // namespace exactq
