// PoolScores against libvmaf's pooled numbers, bit for bit: for every case, every
// libvmaf-based peer (libvmaf 3.2.0 and the lusoris/vmaf fork), every metric and every
// output in peer_scores.json, pooling the peer's own per-frame scores must give the
// min, max, mean and harmonic_mean the peer reported. This checks the pooling formulas
// and their operation order on real numbers, independently of any metric of ours.

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "engine/io/testing/corpus.h"
#include "engine/pooling/pooling.h"
#include "gtest/gtest.h"

namespace exactq {
namespace {

uint64_t Bits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

TEST(PoolingCorpusTest, EqualsLibvmafPooledScoresBitForBit) {
  absl::StatusOr<std::string> dir = corpus::FindCorpusDir();
  if (!dir.ok()) GTEST_SKIP() << dir.status().message();
  absl::StatusOr<nlohmann::json> peer_scores = corpus::LoadPeerScores(*dir);
  ASSERT_TRUE(peer_scores.ok()) << peer_scores.status();

  int outputs_checked = 0;
  for (const auto& [case_id, peers] : (*peer_scores)["cases"].items()) {
    for (const char* peer : {"netflix_vmaf", "lusoris_vmaf"}) {
      if (!peers.contains(peer)) continue;
      for (const auto& [metric, result] : peers[peer].items()) {
        if (!result.contains("frames") || !result.contains("pooled")) continue;  // peer failed
        for (const auto& [output, expected] : result["pooled"].items()) {
          std::vector<double> per_frame;
          for (const nlohmann::json& frame : result["frames"]) {
            per_frame.push_back(frame[output].get<double>());
          }
          absl::StatusOr<PooledScores> pooled = PoolScores(per_frame);
          ASSERT_TRUE(pooled.ok()) << pooled.status();
          const std::pair<const char*, double> ours[] = {{"min", pooled->min},
                                                         {"max", pooled->max},
                                                         {"mean", pooled->mean},
                                                         {"harmonic_mean", pooled->harmonic_mean}};
          for (const auto& [statistic, value] : ours) {
            const double want = expected[statistic].get<double>();
            EXPECT_EQ(Bits(value), Bits(want)) << absl::StrFormat(
                "case %s, %s %s %s %s: ours %.17g, peer %.17g", case_id, peer, metric, output, statistic, value, want);
          }
          ++outputs_checked;
        }
      }
    }
  }
  EXPECT_GT(outputs_checked, 0);
  std::printf("pooled %d peer outputs bit for bit\n", outputs_checked);
}

}  // namespace
}  // namespace exactq
