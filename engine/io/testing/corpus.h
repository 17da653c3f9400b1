// Test access to the shared corpus: real reference/distorted Y4M pairs with scores
// from peer tools (libvmaf, the VMAF fork, libjxl, ffmpeg).
//
// The corpus is not in the repository. Tests find it through the environment
// variable EXACTQ_CORPUS (an absolute path; .bazelrc passes it into Bazel tests with
// --test_env). Where it is unset or missing, corpus tests skip with the reason:
//
//   absl::StatusOr<std::string> dir = corpus::FindCorpusDir();
//   if (!dir.ok()) GTEST_SKIP() << dir.status().message();
//   absl::StatusOr<std::vector<corpus::CorpusCase>> cases = corpus::LoadCorpusCases(*dir);
//
// The namespace is exactq::corpus, not exactq::testing, so that `testing::` inside
// namespace exactq still means GoogleTest.

#ifndef EXACTQ_ENGINE_IO_TESTING_CORPUS_H_
#define EXACTQ_ENGINE_IO_TESTING_CORPUS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/format/frame_geometry.h"
#include "nlohmann/json.hpp"

namespace exactq {
namespace corpus {

inline constexpr char kCorpusEnvVar[] = "EXACTQ_CORPUS";

// The corpus directory (holding cases.json), or NotFound saying why not.
absl::StatusOr<std::string> FindCorpusDir();

// One reference/distorted pair from cases.json.
struct CorpusCase {
  std::string id;        // "p576p10_x265_crf30"
  std::string ref_path;  // absolute or relative to the working directory
  std::string dist_path;
  FrameGeometry geometry;
  int frames = 0;
};

// Every case in <dir>/cases.json, in file order.
absl::StatusOr<std::vector<CorpusCase>> LoadCorpusCases(const std::string& dir);

// Parses a JSON file (without exceptions: a parse error is a status).
absl::StatusOr<nlohmann::json> LoadJsonFile(const std::string& path);

// <dir>/peer_scores.json: {"cases": {id: {peer: {metric: {"frames": [...], "pooled":
// {...}}}}}}; a peer that failed on a case has {"error": "..."} instead.
absl::StatusOr<nlohmann::json> LoadPeerScores(const std::string& dir);

}  // namespace corpus
}  // namespace exactq

#endif  // EXACTQ_ENGINE_IO_TESTING_CORPUS_H_
