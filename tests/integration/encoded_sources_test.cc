// Encoded sources through the real exactqd and exactq: a rendition uploaded as its
// encoded bytes, or read by the server under --source_root, scores exactly as the same
// rendition decoded to Y4M by the ffmpeg CLI and sent as raw pictures (every score of
// every frame and every pooled statistic, compared as bits), for H.264, HEVC, AV1 and
// FFV1 at 8 and 10 bits. Paths outside the roots are refused; corrupt bitstreams and
// different frame counts end the stream with a named error and leave the server whole.
#include <stdlib.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/server_process.h"

namespace exactq {
namespace {

constexpr char kMetrics[] = "psnr,ssim,ssimulacra2";

int Shell(const std::string& command, std::string* output) {
  return exactq::testing::RunCommand({"/bin/bash", "-c", command}, output);
}

class EncodedSourcesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = new std::string(exactq::testing::MakeTempDir("root"));
    outside_ = new std::string(exactq::testing::MakeTempDir("outside"));
    std::string output;
    // 8 frames at 8 and 10 bits, then renditions of them.
    for (const auto& [name, args] : std::vector<std::pair<std::string, std::string>>{
             {"ref8.y4m", "-pix_fmt yuv420p"},
             {"ref10.y4m", "-pix_fmt yuv420p10le -strict -1"},
         }) {
      ASSERT_EQ(Shell("ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=64x64:rate=24 -frames:v 8 " + args + " " +
                          *root_ + "/" + name,
                      &output),
                0)
          << output;
    }
    std::ofstream(*outside_ + "/secret.mkv") << "not for clients";
    server_ = new exactq::testing::ServerProcess({"--source_root=" + *root_, "--gpus=none"});
    ASSERT_TRUE(server_->Start()) << server_->log();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete root_;
    delete outside_;
    server_ = nullptr;
    root_ = outside_ = nullptr;
  }

  // Encodes the 8- or 10-bit reference into `name` and decodes it back to Y4M with the
  // ffmpeg CLI (every picture, none dropped or repeated).
  static void MakeRendition(const std::string& name, const std::string& codec_args, bool ten_bit, bool av1) {
    std::string output;
    const std::string ref = *root_ + (ten_bit ? "/ref10.y4m" : "/ref8.y4m");
    ASSERT_EQ(Shell("ffmpeg -nostdin -v error -y -i " + ref + " " + codec_args + " " + *root_ + "/" + name, &output), 0)
        << output;
    ASSERT_EQ(Shell(std::string("ffmpeg -nostdin -v error -y ") + (av1 ? "-c:v libdav1d " : "") + "-i " + *root_ + "/" +
                        name + " -fps_mode passthrough -f yuv4mpegpipe -strict -1 " + *root_ + "/" + name + ".y4m",
                    &output),
              0)
        << output;
  }

  // `exactq score` with --json; the parsed document (null on failure, output set).
  static nlohmann::json Score(const std::string& arguments, int* exit_code, std::string* output) {
    const std::string json_path = exactq::testing::MakeTempDir("json") + "/out.json";
    *exit_code = Shell("cd " + *root_ + " && " + ClientPath() + " score " + arguments + " --metrics " + kMetrics +
                           " --backend cpu --quiet --server " + server_->address() + " --json " + json_path,
                       output);
    if (*exit_code != 0) return nullptr;
    return nlohmann::json::parse(exactq::testing::ReadFile(json_path), nullptr, false);
  }

  // Absolute: the commands run in the source root.
  static std::string ClientPath() {
    char* path = ::realpath(exactq::testing::ClientBinary().c_str(), nullptr);
    std::string result = path != nullptr ? path : exactq::testing::ClientBinary();
    std::free(path);
    return result;
  }

  static exactq::testing::ServerProcess* server_;
  static std::string* root_;
  static std::string* outside_;
};

exactq::testing::ServerProcess* EncodedSourcesTest::server_ = nullptr;
std::string* EncodedSourcesTest::root_ = nullptr;
std::string* EncodedSourcesTest::outside_ = nullptr;

// Every per-frame score and pooled statistic, as bits.
void ExpectSameScores(const nlohmann::json& want, const nlohmann::json& got, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_TRUE(want.is_object());
  ASSERT_TRUE(got.is_object());
  ASSERT_EQ(want["frames"].size(), got["frames"].size());
  ASSERT_EQ(want["frames"].size(), 8u);
  for (size_t i = 0; i < want["frames"].size(); ++i) {
    for (const auto& [name, value] : want["frames"][i]["metrics"].items()) {
      ASSERT_TRUE(got["frames"][i]["metrics"].contains(name)) << name;
      EXPECT_EQ(exactq::testing::DoubleBits(value.get<double>()),
                exactq::testing::DoubleBits(got["frames"][i]["metrics"][name].get<double>()))
          << "frame " << i << " " << name;
    }
  }
  EXPECT_EQ(want["pooled_metrics"].dump(), got["pooled_metrics"].dump());
}

struct Rendition {
  const char* name;
  const char* args;
  bool ten_bit;
  bool av1;
};

class EncodedRenditionTest : public EncodedSourcesTest, public ::testing::WithParamInterface<Rendition> {};

TEST_P(EncodedRenditionTest, UploadAndServerPathScoreAsTheDecodedY4m) {
  const Rendition& r = GetParam();
  MakeRendition(r.name, r.args, r.ten_bit, r.av1);
  const std::string ref = r.ten_bit ? "ref10.y4m" : "ref8.y4m";
  int code;
  std::string output;
  const nlohmann::json raw = Score(ref + " " + r.name + ".y4m", &code, &output);
  ASSERT_EQ(code, 0) << output;
  const nlohmann::json upload = Score(ref + " " + r.name, &code, &output);
  ASSERT_EQ(code, 0) << output;
  ExpectSameScores(raw, upload, "upload");
  const nlohmann::json path = Score(ref + " " + r.name + " --server-paths", &code, &output);
  ASSERT_EQ(code, 0) << output;
  ExpectSameScores(raw, path, "server path");
  // Process substitution: both inputs are pipes, read once.
  const nlohmann::json piped = Score("<(cat " + ref + ") <(cat " + r.name + ")", &code, &output);
  ASSERT_EQ(code, 0) << output;
  ExpectSameScores(raw, piped, "pipes");
}

INSTANTIATE_TEST_SUITE_P(
    Codecs, EncodedRenditionTest,
    ::testing::Values(Rendition{"h264_8.mp4", "-c:v libx264 -preset veryfast -bf 2 -crf 35", false, false},
                      Rendition{"hevc_10.mkv", "-c:v libx265 -preset ultrafast -x265-params log-level=none -crf 35",
                                true, false},
                      Rendition{"av1_8.ivf", "-c:v libaom-av1 -cpu-used 8 -crf 50", false, true},
                      Rendition{"av1_10.mkv", "-c:v libaom-av1 -cpu-used 8 -crf 50", true, true},
                      Rendition{"ffv1_10.mkv", "-c:v ffv1", true, false}),
    [](const ::testing::TestParamInfo<Rendition>& info) {
      std::string name = info.param.name;
      for (char& c : name) {
        if (c == '.') c = '_';
      }
      return name;
    });

TEST_F(EncodedSourcesTest, TenBitPipeRecipeScoresAsTheFile) {
  MakeRendition("pipe10.mkv", "-c:v libx264 -preset veryfast -crf 35", true, false);
  int code;
  std::string output;
  const nlohmann::json file = Score("ref10.y4m pipe10.mkv.y4m", &code, &output);
  ASSERT_EQ(code, 0) << output;
  // The README's recipe: ffmpeg decodes, exactq reads Y4M on stdin.
  const std::string json_path = exactq::testing::MakeTempDir("json") + "/out.json";
  ASSERT_EQ(Shell("cd " + *root_ + " && ffmpeg -nostdin -v error -i pipe10.mkv -f yuv4mpegpipe -strict -1 - | " +
                      ClientPath() + " score ref10.y4m - --metrics " + kMetrics + " --backend cpu --quiet --server " +
                      server_->address() + " --json " + json_path,
                  &output),
            0)
      << output;
  ExpectSameScores(file, nlohmann::json::parse(exactq::testing::ReadFile(json_path), nullptr, false), "ffmpeg pipe");
  // Two Y4M named pipes (process substitution): each signature is read once, replayed.
  const nlohmann::json pipes = Score("<(cat ref10.y4m) <(cat pipe10.mkv.y4m)", &code, &output);
  ASSERT_EQ(code, 0) << output;
  ExpectSameScores(file, pipes, "Y4M pipes");
}

// --decode picks where the server decodes and the answer says where it did. This server
// runs with --gpus=none, which keeps decoding off the GPUs too: cpu and auto (also the
// server's default) decode on the CPU (auto saying why, the same bits), gpu is refused
// naming the flag, and another word is refused. (engine/decode:gpu_decode_test covers a machine without a GPU decoder
// and, on the GPU machine, the GPU's pictures.)
TEST_F(EncodedSourcesTest, TheDecodeDeviceIsChosenAndReported) {
  MakeRendition("decode_device.mkv", "-c:v libx265 -preset ultrafast -crf 30 -x265-params log-level=none", false,
                false);
  int code;
  std::string output;
  const nlohmann::json cpu = Score("ref8.y4m decode_device.mkv --decode cpu", &code, &output);
  ASSERT_EQ(code, 0) << output;
  EXPECT_EQ(cpu["decode"]["distorted"]["device"], "cpu");
  EXPECT_EQ(cpu["decode"]["distorted"]["cpu_reason"], "");
  EXPECT_EQ(cpu["decode"]["reference"]["device"], "cpu");

  const nlohmann::json automatic = Score("ref8.y4m decode_device.mkv --decode auto", &code, &output);
  ASSERT_EQ(code, 0) << output;
  ExpectSameScores(cpu, automatic, "auto against cpu");
  EXPECT_EQ(automatic["decode"]["distorted"]["device"], "cpu");
  EXPECT_EQ(automatic["decode"]["distorted"]["cpu_reason"], "the server runs with --gpus=none");
  EXPECT_EQ(automatic["decode"]["reference"]["cpu_reason"], "the server runs with --gpus=none")
      << automatic["decode"].dump();

  // No --decode: the server's default, auto.
  const nlohmann::json by_default = Score("ref8.y4m decode_device.mkv", &code, &output);
  ASSERT_EQ(code, 0) << output;
  ExpectSameScores(cpu, by_default, "the server's default against cpu");
  EXPECT_EQ(by_default["decode"]["distorted"]["cpu_reason"], "the server runs with --gpus=none")
      << by_default["decode"].dump();

  Score("ref8.y4m decode_device.mkv --decode gpu", &code, &output);
  EXPECT_NE(code, 0);
  EXPECT_NE(output.find("FAILED_PRECONDITION: "), std::string::npos) << output;
  EXPECT_NE(output.find("header.decode: gpu, but the server runs with --gpus=none"), std::string::npos) << output;

  Score("ref8.y4m decode_device.mkv --decode nvdec", &code, &output);
  EXPECT_NE(code, 0);
  EXPECT_NE(output.find("INVALID_ARGUMENT: "), std::string::npos) << output;
  EXPECT_NE(output.find("header.decode: \"nvdec\" is not a decode device"), std::string::npos) << output;
}

TEST_F(EncodedSourcesTest, PathsOutsideTheRootsAreRefused) {
  int code;
  std::string output;
  Score("ref8.y4m " + *outside_ + "/secret.mkv --server-paths", &code, &output);
  EXPECT_NE(code, 0);
  EXPECT_NE(output.find("PERMISSION_DENIED: "), std::string::npos) << output;
  Score("ref8.y4m ../" + exactq::testing::MakeTempDir("x").substr(root_->rfind('/') + 1) + " --server-paths", &code,
        &output);
  EXPECT_NE(code, 0);
  EXPECT_NE(output.find("PERMISSION_DENIED: "), std::string::npos) << output;
  Score("ref8.y4m missing.mkv --server-paths", &code, &output);
  EXPECT_NE(code, 0);
  EXPECT_NE(output.find("NOT_FOUND: "), std::string::npos) << output;
}

TEST_F(EncodedSourcesTest, DifferentFrameCountsNameBothCounts) {
  std::string output;
  ASSERT_EQ(
      Shell("ffmpeg -nostdin -v error -y -i " + *root_ + "/ref8.y4m -frames:v 6 -c:v ffv1 " + *root_ + "/short.mkv",
            &output),
      0)
      << output;
  int code;
  Score("ref8.y4m short.mkv", &code, &output);
  EXPECT_NE(code, 0);
  EXPECT_NE(output.find("INVALID_ARGUMENT: "), std::string::npos) << output;
  EXPECT_NE(output.find("the reference has 8 frames and the distorted 6"), std::string::npos) << output;
}

TEST_F(EncodedSourcesTest, CorruptUploadNamesTheFrameAndTheServerStaysWhole) {
  std::string output;
  ASSERT_EQ(Shell("ffmpeg -nostdin -v error -y -i " + *root_ + "/ref8.y4m -c:v libx264 -preset veryfast -f h264 " +
                      *root_ + "/corrupt.h264",
                  &output),
            0)
      << output;
  // Zeros inside slice data cut a picture short.
  std::string bytes = exactq::testing::ReadFile(*root_ + "/corrupt.h264");
  for (size_t i = bytes.size() * 3 / 10; i < bytes.size() * 3 / 10 + 16; ++i) bytes[i] = 0;
  std::ofstream(*root_ + "/corrupt.h264", std::ios::binary) << bytes;
  int code;
  Score("ref8.y4m corrupt.h264", &code, &output);
  EXPECT_NE(code, 0);
  EXPECT_NE(output.find("INVALID_ARGUMENT: "), std::string::npos) << output;
  EXPECT_NE(output.find("frame "), std::string::npos) << output;
  // Not a video at all.
  std::ofstream(*root_ + "/garbage.bin") << std::string(5000, 'x');
  Score("ref8.y4m garbage.bin", &code, &output);
  EXPECT_NE(code, 0);
  EXPECT_NE(output.find("INVALID_ARGUMENT: "), std::string::npos) << output;
  // The server still scores.
  const nlohmann::json ok = Score("ref8.y4m ref8.y4m", &code, &output);
  EXPECT_EQ(code, 0) << output;
  EXPECT_TRUE(server_->running());
}

}  // namespace
}  // namespace exactq
