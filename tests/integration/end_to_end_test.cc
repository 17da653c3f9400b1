// The real exactqd on a free loopback port, the real exactq client, real files.
// PSNR through server and client equals libvmaf bit for bit on every corpus frame
// (the fork where libvmaf cannot read odd sizes), pooled statistics included.
#include <cmath>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "engine/io/testing/corpus.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/grpc_probe.h"
#include "tests/testing/server_process.h"

namespace exactq {
namespace {

class EndToEndTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new exactq::testing::ServerProcess();
    ASSERT_TRUE(server_->Start()) << server_->log();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  // Runs `exactq score` with --json and returns the parsed document.
  static nlohmann::json Score(const std::vector<std::string>& extra, int* exit_code, std::string* output,
                              const std::string& stdin_path = "") {
    const std::string json_path = exactq::testing::MakeTempDir("json") + "/out.json";
    std::vector<std::string> argv = {exactq::testing::ClientBinary(), "score"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), {"--server", server_->address(), "--json", json_path, "--quiet"});
    *exit_code = exactq::testing::RunCommand(argv, output, stdin_path);
    if (*exit_code != 0) return nullptr;
    return nlohmann::json::parse(exactq::testing::ReadFile(json_path), nullptr, false);
  }

  static exactq::testing::ServerProcess* server_;
};

exactq::testing::ServerProcess* EndToEndTest::server_ = nullptr;

TEST_F(EndToEndTest, ServesHealthReflectionAndMetrics) {
  EXPECT_EQ(exactq::testing::HealthStatus(server_->address()), 1);
  EXPECT_NE(exactq::testing::ReflectionListServices(server_->address()).find("exactq.v1.Scorer"), std::string::npos);
  const std::string page = exactq::testing::HttpGet(server_->metrics_port(), "/metrics");
  EXPECT_NE(page.find("# TYPE exactq_frames_scored_total counter"), std::string::npos) << page;
  EXPECT_NE(page.find("exactq_build_info{cuda=\""), std::string::npos) << page;
  EXPECT_NE(page.find(",version=\"0.1.0\"} 1\n"), std::string::npos) << page;
  EXPECT_NE(page.find("exactq_fallbacks_total{reason=\"no_gpu\"} 0"), std::string::npos) << page;
  // No GPU here: none given, none usable, and health stays SERVING (a CPU server is whole).
  EXPECT_NE(page.find("\nexactq_configured_gpus 0\n"), std::string::npos) << page;
  EXPECT_NE(page.find("\nexactq_usable_gpus 0\n"), std::string::npos) << page;
}

TEST_F(EndToEndTest, ScoresTheCommittedSample) {
  int code;
  std::string output;
  nlohmann::json doc = Score({"samples/sample.ref.y4m", "samples/sample.dist.y4m"}, &code, &output);
  ASSERT_EQ(code, 0) << output;
  ASSERT_TRUE(doc.is_object());
  ASSERT_EQ(doc["frames"].size(), 3u);
  for (const auto& frame : doc["frames"]) {
    for (const char* name : {"psnr_y", "psnr_cb", "psnr_cr"}) {
      ASSERT_TRUE(frame["metrics"][name].is_number()) << frame;
      EXPECT_GT(frame["metrics"][name].get<double>(), 20.0);
    }
    EXPECT_EQ(frame["backend"], "cpu");
  }
  EXPECT_EQ(doc["metric_versions"]["psnr"], 1);
  EXPECT_EQ(doc["job_id"], "samples/sample.ref.y4m vs samples/sample.dist.y4m");
  EXPECT_EQ(doc["totals"]["frames"], 3);
  const std::string page = exactq::testing::HttpGet(server_->metrics_port(), "/metrics");
  EXPECT_NE(page.find("exactq_frames_scored_total{backend=\"cpu\",metric=\"psnr\"}"), std::string::npos);
}

// Expected per-frame and pooled psnr of a case: libvmaf's where it read the file,
// else the fork's (which agrees with libvmaf bit for bit wherever both ran).
const nlohmann::json* PeerPsnr(const nlohmann::json& peer_case) {
  for (const char* peer : {"netflix_vmaf", "lusoris_vmaf"}) {
    if (!peer_case.contains(peer)) continue;
    const nlohmann::json& p = peer_case[peer];
    if (p.contains("psnr") && p["psnr"].contains("frames")) return &p["psnr"];
  }
  return nullptr;
}

// The client's answers against a peer's frames and pooled values for one case, bit for
// bit: every expected output of every frame (with `only_ours`, those the client
// reports; the peer printed more), and min/max/mean/harmonic mean of `pooled` (every
// pooled output of the peer when empty). Returns the frames compared.
int ExpectPeerBits(const nlohmann::json& doc, const nlohmann::json& expected, const std::string& id, bool only_ours,
                   const std::vector<std::string>& pooled = {}) {
  EXPECT_EQ(doc["frames"].size(), expected["frames"].size()) << id;
  if (doc["frames"].size() != expected["frames"].size()) return 0;
  for (size_t f = 0; f < doc["frames"].size(); ++f) {
    for (const auto& [name, value] : expected["frames"][f].items()) {
      if (only_ours && !doc["frames"][f]["metrics"].contains(name)) continue;
      const double want = value.get<double>();
      const double got = doc["frames"][f]["metrics"][name].get<double>();
      EXPECT_EQ(exactq::testing::DoubleBits(got), exactq::testing::DoubleBits(want))
          << id << " frame " << f << " " << name << ": got " << std::setprecision(17) << got << " want " << want;
    }
  }
  std::vector<std::string> names = pooled;
  if (names.empty()) {
    for (const auto& [name, stats] : expected["pooled"].items()) names.push_back(name);
  }
  for (const std::string& name : names) {
    for (const char* stat : {"min", "max", "mean", "harmonic_mean"}) {
      const double want = expected["pooled"][name][stat].get<double>();
      const double got = doc["pooled_metrics"][name][stat].get<double>();
      EXPECT_EQ(exactq::testing::DoubleBits(got), exactq::testing::DoubleBits(want))
          << id << " pooled " << name << "." << stat << ": got " << std::setprecision(17) << got << " want " << want;
    }
  }
  return static_cast<int>(doc["frames"].size());
}

TEST_F(EndToEndTest, PsnrEqualsLibvmafBitForBitOnTheWholeCorpus) {
  absl::StatusOr<std::string> dir = corpus::FindCorpusDir();
  if (!dir.ok()) GTEST_SKIP() << dir.status().message();
  absl::StatusOr<std::vector<corpus::CorpusCase>> cases = corpus::LoadCorpusCases(*dir);
  ASSERT_TRUE(cases.ok()) << cases.status();
  absl::StatusOr<nlohmann::json> peers = corpus::LoadPeerScores(*dir);
  ASSERT_TRUE(peers.ok()) << peers.status();
  int frames_checked = 0;
  for (const corpus::CorpusCase& c : *cases) {
    SCOPED_TRACE(c.id);
    const nlohmann::json* expected = PeerPsnr((*peers)["cases"][c.id]);
    ASSERT_NE(expected, nullptr) << "no peer psnr for " << c.id;
    int code;
    std::string output;
    nlohmann::json doc = Score({c.ref_path, c.dist_path, "--metrics", "psnr,ssim"}, &code, &output);
    ASSERT_EQ(code, 0) << output;
    frames_checked += ExpectPeerBits(doc, *expected, c.id, /*only_ours=*/false);
  }
  EXPECT_GE(frames_checked, 26);
}

// vmaf through server and client, with frames in flight (motion reads the previous
// reference, motion2 the next frame): libvmaf's bits for every frame it scored, every
// output, and its pooled mean and harmonic mean.
TEST_F(EndToEndTest, VmafEqualsLibvmafBitForBitOnTheCorpus) {
  absl::StatusOr<std::string> dir = corpus::FindCorpusDir();
  if (!dir.ok()) GTEST_SKIP() << dir.status().message();
  absl::StatusOr<std::vector<corpus::CorpusCase>> cases = corpus::LoadCorpusCases(*dir);
  ASSERT_TRUE(cases.ok()) << cases.status();
  absl::StatusOr<nlohmann::json> peers = corpus::LoadPeerScores(*dir);
  ASSERT_TRUE(peers.ok()) << peers.status();
  int frames_checked = 0;
  for (const corpus::CorpusCase& c : *cases) {
    SCOPED_TRACE(c.id);
    const nlohmann::json& expected = (*peers)["cases"][c.id]["netflix_vmaf"]["vmaf_v0.6.1"];
    if (!expected.contains("frames")) continue;  // libvmaf could not read this pair
    int code;
    std::string output;
    nlohmann::json doc = Score({c.ref_path, c.dist_path, "--metrics", "vmaf,psnr"}, &code, &output);
    ASSERT_EQ(code, 0) << output;
    for (const auto& frame : doc["frames"]) ASSERT_TRUE(frame["metrics"]["vmaf"].is_number());
    frames_checked += ExpectPeerBits(doc, expected, c.id, /*only_ours=*/true, {"vmaf"});
  }
  EXPECT_GE(frames_checked, 31);
}

// ssim through server and client: the fork's bits at 8 to 12 bits; at 16 bits the
// peers overflow, and the correct value (product in double) is 0.9824021046501512.
TEST_F(EndToEndTest, SsimEqualsTheForkBitForBitAndIsRightAt16Bits) {
  absl::StatusOr<std::string> dir = corpus::FindCorpusDir();
  if (!dir.ok()) GTEST_SKIP() << dir.status().message();
  absl::StatusOr<std::vector<corpus::CorpusCase>> cases = corpus::LoadCorpusCases(*dir);
  ASSERT_TRUE(cases.ok()) << cases.status();
  absl::StatusOr<nlohmann::json> peers = corpus::LoadPeerScores(*dir);
  ASSERT_TRUE(peers.ok()) << peers.status();
  int frames_checked = 0;
  for (const corpus::CorpusCase& c : *cases) {
    int code;
    std::string output;
    nlohmann::json doc = Score({c.ref_path, c.dist_path, "--metrics", "ssim"}, &code, &output);
    ASSERT_EQ(code, 0) << output;
    const nlohmann::json& expected = (*peers)["cases"][c.id]["lusoris_vmaf"]["ssim"]["frames"];
    ASSERT_EQ(doc["frames"].size(), expected.size()) << c.id;
    for (size_t f = 0; f < expected.size(); ++f) {
      const double want = c.geometry.format.bit_depth == 16 ? 0.9824021046501512 : expected[f]["ssim"].get<double>();
      const double got = doc["frames"][f]["metrics"]["ssim"].get<double>();
      EXPECT_EQ(exactq::testing::DoubleBits(got), exactq::testing::DoubleBits(want))
          << c.id << " frame " << f << ": got " << std::setprecision(17) << got << " want " << want;
      ++frames_checked;
    }
  }
  EXPECT_GE(frames_checked, 47);  // every frame of the 26 cases
}

TEST_F(EndToEndTest, RawYuvWithExplicitGeometryGivesTheY4mScores) {
  absl::StatusOr<std::string> dir = corpus::FindCorpusDir();
  if (!dir.ok()) GTEST_SKIP() << dir.status().message();
  int code;
  std::string output;
  nlohmann::json y4m = Score({*dir + "/pcifp16.ref.y4m", *dir + "/pcifp16_downup.dist.y4m"}, &code, &output);
  ASSERT_EQ(code, 0) << output;
  nlohmann::json raw = Score({*dir + "/pcifp16.ref.yuv", *dir + "/pcifp16_downup.dist.yuv", "--width", "352",
                              "--height", "288", "--pixfmt", "yuv420p16le"},
                             &code, &output);
  ASSERT_EQ(code, 0) << output;
  EXPECT_EQ(raw["frames"], y4m["frames"]);
}

TEST_F(EndToEndTest, ReadsY4mFromStdin) {
  int code;
  std::string output;
  nlohmann::json file = Score({"samples/sample.ref.y4m", "samples/sample.dist.y4m"}, &code, &output);
  ASSERT_EQ(code, 0) << output;
  nlohmann::json piped = Score({"samples/sample.ref.y4m", "-"}, &code, &output, "samples/sample.dist.y4m");
  ASSERT_EQ(code, 0) << output;
  EXPECT_EQ(piped["frames"], file["frames"]);
}

TEST_F(EndToEndTest, ClientReportsBadInputClearly) {
  int code;
  std::string output;
  Score({"samples/no-such-file.y4m", "samples/sample.dist.y4m"}, &code, &output);
  EXPECT_NE(code, 0);
  EXPECT_NE(output.find("no-such-file.y4m"), std::string::npos) << output;

  // A truncated distorted file: the last frame is cut short.
  const std::string dir = exactq::testing::MakeTempDir("trunc");
  const std::string dist = exactq::testing::ReadFile("samples/sample.dist.y4m");
  std::ofstream(dir + "/cut.y4m") << dist.substr(0, dist.size() - 100);
  Score({"samples/sample.ref.y4m", dir + "/cut.y4m"}, &code, &output);
  EXPECT_NE(code, 0);
  EXPECT_NE(output.find("frame 2"), std::string::npos) << output;

  // Geometry mismatch: a 4:4:4 file against the 4:2:0 sample.
  absl::StatusOr<std::string> corpus_dir = corpus::FindCorpusDir();
  if (corpus_dir.ok()) {
    Score({"samples/sample.ref.y4m", *corpus_dir + "/p8x8s444.ref.y4m"}, &code, &output);
    EXPECT_NE(code, 0);
    EXPECT_NE(output.find("geometry"), std::string::npos) << output;
  }

  // Not Y4M and no raw geometry.
  std::ofstream(dir + "/junk.yuv") << "not a video";
  Score({dir + "/junk.yuv", dir + "/junk.yuv"}, &code, &output);
  EXPECT_NE(code, 0);
  EXPECT_NE(output.find("--width"), std::string::npos) << output;

  // Server unreachable: a port nothing listens on.
  std::vector<std::string> argv = {exactq::testing::ClientBinary(),
                                   "score",
                                   "samples/sample.ref.y4m",
                                   "samples/sample.dist.y4m",
                                   "--server",
                                   "127.0.0.1:1",
                                   "--connect_timeout",
                                   "2"};
  EXPECT_NE(exactq::testing::RunCommand(argv, &output), 0);
  EXPECT_NE(output.find("cannot reach the server"), std::string::npos) << output;
  // And the server is still serving.
  EXPECT_EQ(exactq::testing::HealthStatus(server_->address()), 1);
}

}  // namespace
}  // namespace exactq

namespace exactq {
namespace {

// The client follows the server's chunk limit from StreamAccepted, whatever its own.
TEST(ClientChunkingTest, HonoursTheServersChunkLimit) {
  exactq::testing::ServerProcess server({"--max-chunk-bytes=4096"});
  ASSERT_TRUE(server.Start()) << server.log();
  std::string output;
  EXPECT_EQ(exactq::testing::RunCommand({exactq::testing::ClientBinary(), "score", "samples/sample.ref.y4m",
                                         "samples/sample.dist.y4m", "--server", server.address(), "--quiet"},
                                        &output),
            0)
      << output;
}

}  // namespace
}  // namespace exactq
