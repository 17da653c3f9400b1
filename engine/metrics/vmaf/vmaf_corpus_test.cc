// vmaf against libvmaf 3.2.0 (CPU, model vmaf_v0.6.1), bit for bit, on every frame of
// every corpus case libvmaf scored: the score and each of its six features.
//
// Expected values: peer_scores.json cases[id].netflix_vmaf["vmaf_v0.6.1"].frames[i],
// printed with %.17g, which identifies a double uniquely. Cases where libvmaf failed
// (its y4m reader on odd sizes and 8x8) carry {"error": ...} and are skipped here; the
// reference defines those (vmaf_features_test.cc runs odd sizes).
// The threaded path (bands over a pool) is compared with the reference on every frame,
// and engine/pooling's min, max, mean and harmonic mean of our per-frame values with the
// pooled values libvmaf printed (its vmaf_feature_score_pooled: the same loop).
//
// The other models (vmaf_4k_v0.6.1, vmaf_v0.6.1neg): testdata/peer_vmaf_models.json,
// libvmaf's per-frame values for every corpus case, made by
// testdata/make_peer_vmaf_models.sh (the same CLI, --model version=MODEL, %.17g; neg's
// "_egl_1" feature names stored under the plain names), compared the same way, frame by
// frame, on the reference and the threaded path, and through the Metric that
// CreateVmafMetric makes for model=MODEL (its per-frame step and sequence stage).

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "engine/io/testing/corpus.h"
#include "engine/io/testing/corpus_pairs.h"
#include "engine/metrics/vmaf/vmaf.h"
#include "engine/metrics/vmaf/vmaf_model.h"
#include "engine/metrics/vmaf/vmaf_sequence.h"
#include "engine/platform/worker_pool.h"
#include "engine/pooling/pooling.h"
#include "gtest/gtest.h"

namespace exactq {
namespace vmaf {
namespace {

uint64_t Bits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

// Reads every frame pair of a case.
void ReadCase(const corpus::CorpusCase& c, std::vector<Frame>* refs, std::vector<Frame>* dists) {
  absl::StatusOr<corpus::CorpusPairReader> pairs = corpus::CorpusPairReader::Open(c);
  ASSERT_TRUE(pairs.ok()) << pairs.status();
  for (;;) {
    Frame ref, dis;
    absl::StatusOr<bool> more = pairs->Next(&ref, &dis);
    ASSERT_TRUE(more.ok()) << more.status();
    if (!*more) break;
    refs->push_back(std::move(ref));
    dists->push_back(std::move(dis));
  }
  ASSERT_EQ(static_cast<int>(refs->size()), c.frames);
}

TEST(VmafCorpusTest, OtherModelsEqualLibvmafBitForBitOnEveryFrame) {
  absl::StatusOr<std::string> dir = corpus::FindCorpusDir();
  if (!dir.ok()) GTEST_SKIP() << dir.status().message();
  absl::StatusOr<std::vector<corpus::CorpusCase>> cases = corpus::LoadCorpusCases(*dir);
  ASSERT_TRUE(cases.ok()) << cases.status();
  std::ifstream in("engine/metrics/vmaf/testdata/peer_vmaf_models.json");
  ASSERT_TRUE(in.good()) << "testdata/peer_vmaf_models.json not in the runfiles";
  const nlohmann::json peers = nlohmann::json::parse(in);

  WorkerPool pool(3);
  for (const char* model_name : {"vmaf_4k_v0.6.1", "vmaf_v0.6.1neg"}) {
    SCOPED_TRACE(model_name);
    const std::optional<VmafModelId> model = FindVmafModel(model_name);
    ASSERT_TRUE(model.has_value());
    ASSERT_TRUE(peers["models"].contains(model_name));
    int frames_compared = 0;
    int cases_skipped = 0;
    for (const corpus::CorpusCase& c : *cases) {
      SCOPED_TRACE(c.id);
      ASSERT_TRUE(peers["models"][model_name].contains(c.id)) << "no peer entry for " << c.id;
      const nlohmann::json& peer = peers["models"][model_name][c.id];
      if (peer.contains("error")) {
        ++cases_skipped;
        continue;
      }
      std::vector<Frame> refs, dists;
      ReadCase(c, &refs, &dists);
      if (HasFatalFailure()) return;
      ASSERT_EQ(peer["frames"].size(), refs.size());

      absl::StatusOr<std::vector<FrameScores>> got = ScoreVmafSequence(refs, dists, {}, *model);
      ASSERT_TRUE(got.ok()) << got.status();
      ASSERT_EQ(got->size(), refs.size());
      absl::StatusOr<std::vector<FrameScores>> threaded = ScoreVmafSequence(refs, dists, Parallel{&pool, 5}, *model);
      ASSERT_TRUE(threaded.ok()) << threaded.status();
      // The Metric the registry makes for model=MODEL: per-frame step, then its stage.
      absl::StatusOr<std::unique_ptr<Metric>> metric = CreateVmafMetric({{"model", model_name}});
      ASSERT_TRUE(metric.ok()) << metric.status();
      std::unique_ptr<SequenceStage> stage = (*metric)->CreateSequenceStage();
      std::vector<FrameScores> streamed;
      for (size_t i = 0; i < refs.size(); ++i) {
        absl::StatusOr<FrameScores> per_frame =
            (*metric)->ScoreInStream(refs[i], dists[i], i == 0 ? nullptr : &refs[i - 1]);
        ASSERT_TRUE(per_frame.ok()) << per_frame.status();
        for (FrameScores& done : stage->Push(std::move(*per_frame))) streamed.push_back(std::move(done));
      }
      for (FrameScores& done : stage->Finish()) streamed.push_back(std::move(done));
      ASSERT_EQ(streamed.size(), refs.size());
      for (size_t i = 0; i < refs.size(); ++i) {
        const FrameScores& scores = (*got)[i];
        ASSERT_EQ(scores.size(), VmafOutputNames().size());
        ASSERT_EQ(streamed[i].size(), scores.size());
        for (size_t k = 0; k < scores.size(); ++k) {
          EXPECT_EQ(streamed[i][k].name, scores[k].name);
          EXPECT_EQ(Bits(streamed[i][k].value), Bits(scores[k].value))
              << absl::StrFormat("metric path, %s frame %d %s", c.id, static_cast<int>(i), scores[k].name);
        }
        for (size_t k = 0; k < scores.size(); ++k) {
          const std::string& name = scores[k].name;
          ASSERT_TRUE(peer["frames"][i].contains(name)) << name;
          const double want = peer["frames"][i][name].get<double>();
          EXPECT_EQ(Bits(scores[k].value), Bits(want))
              << absl::StrFormat("%s %s frame %d %s: ours %.17g, libvmaf %.17g (diff %.3g)", model_name, c.id,
                                 static_cast<int>(i), name, scores[k].value, want, scores[k].value - want);
          EXPECT_EQ(Bits((*threaded)[i][k].value), Bits(scores[k].value))
              << absl::StrFormat("threaded, %s frame %d %s", c.id, static_cast<int>(i), name);
        }
      }
      frames_compared += static_cast<int>(refs.size());
    }
    EXPECT_GT(frames_compared, 0);
    std::printf("%s: compared %d frames x 7 outputs bit for bit; %d cases libvmaf did not score\n", model_name,
                frames_compared, cases_skipped);
  }
}

TEST(VmafCorpusTest, EqualsLibvmafBitForBitOnEveryFrame) {
  absl::StatusOr<std::string> dir = corpus::FindCorpusDir();
  if (!dir.ok()) GTEST_SKIP() << dir.status().message();
  absl::StatusOr<std::vector<corpus::CorpusCase>> cases = corpus::LoadCorpusCases(*dir);
  ASSERT_TRUE(cases.ok()) << cases.status();
  absl::StatusOr<nlohmann::json> peers = corpus::LoadPeerScores(*dir);
  ASSERT_TRUE(peers.ok()) << peers.status();

  WorkerPool pool(3);
  int frames_compared = 0;
  int cases_skipped = 0;
  for (const corpus::CorpusCase& c : *cases) {
    SCOPED_TRACE(c.id);
    const nlohmann::json& peer = (*peers)["cases"][c.id]["netflix_vmaf"]["vmaf_v0.6.1"];
    if (peer.contains("error")) {
      ++cases_skipped;
      continue;
    }
    ASSERT_TRUE(peer.contains("frames")) << "no libvmaf scores for " << c.id;

    std::vector<Frame> refs, dists;
    ReadCase(c, &refs, &dists);
    ASSERT_EQ(static_cast<int>(refs.size()), c.frames);
    ASSERT_EQ(peer["frames"].size(), refs.size());

    absl::StatusOr<std::vector<FrameScores>> got = ScoreVmafSequence(refs, dists);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), refs.size());
    absl::StatusOr<std::vector<FrameScores>> threaded = ScoreVmafSequence(refs, dists, Parallel{&pool, 5});
    ASSERT_TRUE(threaded.ok()) << threaded.status();

    for (size_t i = 0; i < refs.size(); ++i) {
      const FrameScores& scores = (*got)[i];
      ASSERT_EQ(scores.size(), VmafOutputNames().size());
      for (size_t k = 0; k < scores.size(); ++k) {
        const std::string& name = scores[k].name;
        ASSERT_TRUE(peer["frames"][i].contains(name)) << name;
        const double want = peer["frames"][i][name].get<double>();
        EXPECT_EQ(Bits(scores[k].value), Bits(want))
            << absl::StrFormat("%s frame %d %s: ours %.17g, libvmaf %.17g (diff %.3g)", c.id, static_cast<int>(i), name,
                               scores[k].value, want, scores[k].value - want);
        EXPECT_EQ(Bits((*threaded)[i][k].value), Bits(scores[k].value))
            << absl::StrFormat("threaded, %s frame %d %s", c.id, static_cast<int>(i), name);
      }
    }
    for (size_t k = 0; k < VmafOutputNames().size(); ++k) {
      const std::string& name = VmafOutputNames()[k];
      std::vector<double> values;
      for (const FrameScores& scores : *got) values.push_back(scores[k].value);
      absl::StatusOr<PooledScores> pooled = PoolScores(values);
      ASSERT_TRUE(pooled.ok()) << pooled.status();
      const nlohmann::json& want = peer["pooled"][name];
      const std::pair<const char*, double> ours[] = {
          {"min", pooled->min}, {"max", pooled->max}, {"mean", pooled->mean}, {"harmonic_mean", pooled->harmonic_mean}};
      for (const auto& [statistic, value] : ours) {
        EXPECT_EQ(Bits(value), Bits(want[statistic].get<double>())) << absl::StrFormat(
            "%s pooled %s %s: ours %.17g, libvmaf %.17g", c.id, name, statistic, value, want[statistic].get<double>());
      }
    }
    frames_compared += static_cast<int>(refs.size());
  }
  EXPECT_GT(frames_compared, 0);
  std::printf(
      "compared %d frames x 7 outputs and their pooled values bit for bit; %d cases libvmaf "
      "did not score\n",
      frames_compared, cases_skipped);
}

}  // namespace
}  // namespace vmaf
}  // namespace exactq
