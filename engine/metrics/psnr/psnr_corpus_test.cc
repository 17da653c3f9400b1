// psnr against libvmaf, bit for bit, on every frame of every case of the shared corpus.
//
// Expected values are the peers' per-frame scores in peer_scores.json, printed with
// %.17g (which round-trips a double exactly): libvmaf 3.2.0 ("netflix_vmaf") and the
// lusoris/vmaf fork ("lusoris_vmaf"). Both are checked wherever they have a score;
// libvmaf 3.2.0 cannot read odd-sized frames ("Loss of framing"), so those cases rest
// on the fork alone, whose reader rounds chroma sizes up as ours does. Our per-frame
// scores pooled by PoolScores must also give the peers' pooled numbers.

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "engine/io/testing/corpus.h"
#include "engine/io/testing/corpus_pairs.h"
#include "engine/metrics/psnr/psnr.h"
#include "engine/pooling/pooling.h"
#include "gtest/gtest.h"

namespace exactq {
namespace {

uint64_t Bits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

// The psnr result a peer reported for a case ({"frames": [...], "pooled": {...}}), or
// null when it has none.
const nlohmann::json* PeerPsnr(const nlohmann::json& peer_scores, const std::string& case_id, const char* peer) {
  const nlohmann::json& cases = peer_scores["cases"];
  if (!cases.contains(case_id) || !cases[case_id].contains(peer)) return nullptr;
  const nlohmann::json& metrics = cases[case_id][peer];
  if (!metrics.contains("psnr") || !metrics["psnr"].contains("frames")) return nullptr;
  return &metrics["psnr"];
}

TEST(PsnrCorpusTest, EqualsLibvmafBitForBitOnEveryFrame) {
  absl::StatusOr<std::string> dir = corpus::FindCorpusDir();
  if (!dir.ok()) GTEST_SKIP() << dir.status().message();
  absl::StatusOr<std::vector<corpus::CorpusCase>> cases = corpus::LoadCorpusCases(*dir);
  ASSERT_TRUE(cases.ok()) << cases.status();
  absl::StatusOr<nlohmann::json> peer_scores = corpus::LoadPeerScores(*dir);
  ASSERT_TRUE(peer_scores.ok()) << peer_scores.status();

  int values_compared = 0;
  int cases_scored = 0;
  for (const corpus::CorpusCase& c : *cases) {
    SCOPED_TRACE(c.id);
    std::vector<std::pair<const char*, const nlohmann::json*>> peers;
    for (const char* peer : {"netflix_vmaf", "lusoris_vmaf"}) {
      if (const nlohmann::json* psnr = PeerPsnr(*peer_scores, c.id, peer)) {
        peers.emplace_back(peer, psnr);
      }
    }
    ASSERT_FALSE(peers.empty()) << "no peer has psnr scores for " << c.id;

    absl::StatusOr<corpus::CorpusPairReader> pairs = corpus::CorpusPairReader::Open(c);
    ASSERT_TRUE(pairs.ok()) << pairs.status();
    PsnrMetric psnr(PsnrOptions{});
    ASSERT_TRUE(psnr.CheckInput(pairs->geometry()).ok());

    Frame ref;
    Frame dist;
    std::map<std::string, std::vector<double>> per_frame;  // output -> our scores
    for (int frame_index = 0;; ++frame_index) {
      absl::StatusOr<bool> more = pairs->Next(&ref, &dist);
      ASSERT_TRUE(more.ok()) << more.status();
      if (!*more) break;
      absl::StatusOr<FrameScores> scores = psnr.Score(ref, dist);
      ASSERT_TRUE(scores.ok()) << scores.status();
      ASSERT_EQ(scores->size(), 3u);
      for (const NamedScore& score : *scores) per_frame[score.name].push_back(score.value);
      for (const auto& [peer, psnr_result] : peers) {
        const nlohmann::json& frames = (*psnr_result)["frames"];
        ASSERT_LT(frame_index, static_cast<int>(frames.size())) << peer;
        const nlohmann::json& expected = frames[frame_index];
        for (const NamedScore& score : *scores) {
          ASSERT_TRUE(expected.contains(score.name)) << peer << " lacks " << score.name;
          const double want = expected[score.name].get<double>();
          EXPECT_EQ(Bits(score.value), Bits(want)) << absl::StrFormat("case %s frame %d %s: ours %.17g, %s %.17g", c.id,
                                                                      frame_index, score.name, score.value, peer, want);
          ++values_compared;
        }
      }
    }
    for (const auto& [peer, psnr_result] : peers) {
      for (const auto& [output, values] : per_frame) {
        absl::StatusOr<PooledScores> pooled = PoolScores(values);
        ASSERT_TRUE(pooled.ok()) << pooled.status();
        ASSERT_TRUE(psnr_result->contains("pooled") && (*psnr_result)["pooled"].contains(output))
            << peer << " has no pooled " << output;
        const nlohmann::json& expected = (*psnr_result)["pooled"][output];
        const std::pair<const char*, double> ours[] = {{"min", pooled->min},
                                                       {"max", pooled->max},
                                                       {"mean", pooled->mean},
                                                       {"harmonic_mean", pooled->harmonic_mean}};
        for (const auto& [statistic, value] : ours) {
          const double want = expected[statistic].get<double>();
          EXPECT_EQ(Bits(value), Bits(want)) << absl::StrFormat("case %s pooled %s %s: ours %.17g, %s %.17g", c.id,
                                                                output, statistic, value, peer, want);
        }
      }
    }
    ++cases_scored;
  }
  EXPECT_EQ(cases_scored, static_cast<int>(cases->size()));
  std::printf("compared %d psnr values over %d cases bit for bit\n", values_compared, cases_scored);
}

}  // namespace
}  // namespace exactq
