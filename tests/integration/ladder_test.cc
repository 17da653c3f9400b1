// Ladders through the real exactqd and exactq (`exactq ladder`): one reference against
// several renditions in one call. A same-size rendition scores as a plain stream of the
// reference and that rendition does (every score and pooled statistic, as bits); a
// smaller one scores as the plain stream of the reference and the rendition scaled by
// the exact scaler's own tool (scale_y4m); two runs agree bit for bit. A rendition with
// another frame count ends with both counts named while the others are answered;
// --scale=none refuses a smaller rendition by index; the server's rendition limit holds.
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

constexpr char kMetrics[] = "psnr,ssim,ssimulacra2,vmaf";
constexpr int kFrames = 6;

int Shell(const std::string& command, std::string* output) {
  return exactq::testing::RunCommand({"/bin/bash", "-c", command}, output);
}

std::string Absolute(const std::string& path) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  std::string result = resolved != nullptr ? resolved : path;
  std::free(resolved);
  return result;
}

class LadderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = new std::string(exactq::testing::MakeTempDir("ladder"));
    std::string output;
    const std::string ffmpeg = "cd " + *root_ + " && ffmpeg -nostdin -v error -y ";
    // A 64x48 reference and renditions of it: same size (two codecs), smaller (two
    // sizes), and one frame short.
    for (const std::string& command : {
             ffmpeg + "-f lavfi -i testsrc2=size=64x48:rate=24 -frames:v " + std::to_string(kFrames) +
                 " -pix_fmt yuv420p ref.y4m",
             ffmpeg + "-i ref.y4m -c:v libx264 -preset veryfast -crf 35 same_h264.mp4",
             ffmpeg + "-i ref.y4m -c:v ffv1 same_ffv1.mkv",
             ffmpeg + "-i ref.y4m -vf scale=32:24 -c:v libx264 -preset veryfast -crf 30 small_h264.mp4",
             ffmpeg + "-i ref.y4m -vf scale=48:36 -c:v ffv1 mid_ffv1.mkv",
             ffmpeg + "-i ref.y4m -frames:v " + std::to_string(kFrames - 1) + " -c:v ffv1 short_ffv1.mkv",
             // The plain-stream inputs: each rendition decoded to Y4M, the smaller ones
             // also scaled to 64x48 by the exact scaler's own tool.
             ffmpeg + "-i small_h264.mp4 -f yuv4mpegpipe small_h264.y4m",
             ffmpeg + "-i mid_ffv1.mkv -f yuv4mpegpipe mid_ffv1.y4m",
             "cd " + *root_ + " && " + Absolute(ScaleTool()) + " small_h264.y4m 64 48 small_scaled.y4m",
             "cd " + *root_ + " && " + Absolute(ScaleTool()) + " mid_ffv1.y4m 64 48 mid_scaled.y4m",
         }) {
      ASSERT_EQ(Shell(command, &output), 0) << command << "\n" << output;
    }
    server_ = new exactq::testing::ServerProcess({"--source_root=" + *root_, "--gpus=none", "--max_renditions=4"});
    ASSERT_TRUE(server_->Start()) << server_->log();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete root_;
    server_ = nullptr;
    root_ = nullptr;
  }

  static std::string ScaleTool() { return "engine/scale/scale_y4m"; }

  // Runs the client in the files' folder; the JSON it wrote (null when none).
  static nlohmann::json Run(const std::string& command, const std::string& arguments, int* exit_code,
                            std::string* output) {
    const std::string json_path = exactq::testing::MakeTempDir("json") + "/out.json";
    *exit_code = Shell("cd " + *root_ + " && " + Absolute(exactq::testing::ClientBinary()) + " " + command + " " +
                           arguments + " --metrics " + kMetrics + " --backend cpu --quiet --server " +
                           server_->address() + " --json " + json_path,
                       output);
    return nlohmann::json::parse(exactq::testing::ReadFile(json_path), nullptr, false);
  }

  static nlohmann::json Score(const std::string& ref, const std::string& dist) {
    int code;
    std::string output;
    nlohmann::json run = Run("score", ref + " " + dist, &code, &output);
    EXPECT_EQ(code, 0) << output;
    return run;
  }

  static exactq::testing::ServerProcess* server_;
  static std::string* root_;
};

exactq::testing::ServerProcess* LadderTest::server_ = nullptr;
std::string* LadderTest::root_ = nullptr;

// A rendition's frames and pooled statistics against a plain stream's, as bits.
void ExpectScoresAsStream(const nlohmann::json& stream, const nlohmann::json& rendition, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_TRUE(stream.is_object());
  ASSERT_TRUE(rendition.is_object());
  ASSERT_EQ(rendition["complete"], true) << rendition.dump();
  ASSERT_EQ(stream["frames"].size(), static_cast<size_t>(kFrames));
  ASSERT_EQ(rendition["frames"].size(), stream["frames"].size());
  for (size_t i = 0; i < stream["frames"].size(); ++i) {
    EXPECT_EQ(rendition["frames"][i]["frameNum"], stream["frames"][i]["frameNum"]);
    ASSERT_EQ(rendition["frames"][i]["metrics"].size(), stream["frames"][i]["metrics"].size());
    for (const auto& [name, value] : stream["frames"][i]["metrics"].items()) {
      ASSERT_TRUE(rendition["frames"][i]["metrics"].contains(name)) << name;
      EXPECT_EQ(exactq::testing::DoubleBits(value.get<double>()),
                exactq::testing::DoubleBits(rendition["frames"][i]["metrics"][name].get<double>()))
          << "frame " << i << " " << name;
    }
  }
  EXPECT_EQ(stream["pooled_metrics"].dump(), rendition["pooled_metrics"].dump());
}

TEST_F(LadderTest, EachRenditionScoresAsItsOwnStream) {
  int code;
  std::string output;
  const nlohmann::json ladder =
      Run("ladder", "ref.y4m same_h264.mp4 small_h264.mp4 same_ffv1.mkv mid_ffv1.mkv", &code, &output);
  ASSERT_EQ(code, 0) << output;
  ASSERT_EQ(ladder["complete"], true);
  ASSERT_EQ(ladder["renditions"].size(), 4u);
  EXPECT_EQ(ladder["reference"]["width"], 64);
  EXPECT_EQ(ladder["reference"]["height"], 48);
  EXPECT_EQ(ladder["scaler_version"], 1);
  // In argument order, with what the server decoded.
  const std::vector<std::tuple<std::string, int, int, bool, std::string>> want = {
      {"same_h264.mp4", 64, 48, false, "same_h264.mp4"},
      {"small_h264.mp4", 32, 24, true, "small_scaled.y4m"},
      {"same_ffv1.mkv", 64, 48, false, "same_ffv1.mkv"},
      {"mid_ffv1.mkv", 48, 36, true, "mid_scaled.y4m"},
  };
  for (size_t i = 0; i < want.size(); ++i) {
    const auto& [source, width, height, scaled, plain] = want[i];
    const nlohmann::json& r = ladder["renditions"][i];
    EXPECT_EQ(r["source"], source);
    EXPECT_EQ(r["width"], width);
    EXPECT_EQ(r["height"], height);
    EXPECT_EQ(r["scaled"], scaled);
    EXPECT_EQ(r["bytes"].get<int64_t>(), static_cast<int64_t>(exactq::testing::ReadFile(*root_ + "/" + source).size()));
    ExpectScoresAsStream(Score("ref.y4m", plain), r, source + " against ref.y4m " + plain);
  }

  // Scaling and scoring are deterministic: a second run, from server paths this time,
  // gives the same bits.
  const nlohmann::json again =
      Run("ladder", "ref.y4m same_h264.mp4 small_h264.mp4 same_ffv1.mkv mid_ffv1.mkv --server_paths", &code, &output);
  ASSERT_EQ(code, 0) << output;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(again["renditions"][i]["frames"].dump(), ladder["renditions"][i]["frames"].dump()) << i;
    EXPECT_EQ(again["renditions"][i]["pooled_metrics"].dump(), ladder["renditions"][i]["pooled_metrics"].dump());
  }
}

TEST_F(LadderTest, AShortRenditionEndsWithBothCountsAndTheOthersGoOn) {
  int code;
  std::string output;
  const nlohmann::json ladder = Run("ladder", "ref.y4m short_ffv1.mkv same_ffv1.mkv", &code, &output);
  EXPECT_EQ(code, 1) << output;
  EXPECT_NE(output.find("1 of 2 renditions ended with an error"), std::string::npos) << output;
  ASSERT_TRUE(ladder.is_object()) << output;
  const nlohmann::json& short_one = ladder["renditions"][0];
  EXPECT_EQ(short_one["complete"], false);
  const std::string error = short_one["error"];
  EXPECT_NE(error.find(std::to_string(kFrames - 1)), std::string::npos) << error;
  EXPECT_NE(error.find(std::to_string(kFrames)), std::string::npos) << error;
  // The common frames were answered.
  EXPECT_EQ(short_one["frames"].size(), static_cast<size_t>(kFrames - 1));
  ExpectScoresAsStream(Score("ref.y4m", "same_ffv1.mkv"), ladder["renditions"][1], "the full rendition");
}

TEST_F(LadderTest, ScaleNoneRefusesASmallerRenditionByIndex) {
  int code;
  std::string output;
  Run("ladder", "ref.y4m same_ffv1.mkv mid_ffv1.mkv --scale none", &code, &output);
  EXPECT_NE(code, 0);
  EXPECT_NE(output.find("INVALID_ARGUMENT"), std::string::npos) << output;
  EXPECT_NE(output.find("rendition 1"), std::string::npos) << output;
  EXPECT_NE(output.find("48x36"), std::string::npos) << output;
  EXPECT_NE(output.find("64x48"), std::string::npos) << output;
}

TEST_F(LadderTest, TheRenditionLimitHolds) {
  int code;
  std::string output;
  Run("ladder", "ref.y4m same_ffv1.mkv same_ffv1.mkv same_ffv1.mkv same_ffv1.mkv same_ffv1.mkv", &code, &output);
  EXPECT_NE(code, 0);
  EXPECT_NE(output.find("RESOURCE_EXHAUSTED"), std::string::npos) << output;
  EXPECT_NE(output.find("max_renditions=4"), std::string::npos) << output;
}

TEST_F(LadderTest, CsvHasARenditionColumn) {
  const std::string csv_path = exactq::testing::MakeTempDir("csv") + "/out.csv";
  std::string output;
  ASSERT_EQ(Shell("cd " + *root_ + " && " + Absolute(exactq::testing::ClientBinary()) +
                      " ladder ref.y4m same_ffv1.mkv mid_ffv1.mkv --metrics psnr --backend cpu --quiet --server " +
                      server_->address() + " --csv " + csv_path,
                  &output),
            0)
      << output;
  std::istringstream csv(exactq::testing::ReadFile(csv_path));
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line.rfind("rendition,source,frame,backend,psnr_y", 0), 0u) << line;
  int rows[2] = {0, 0};
  while (std::getline(csv, line)) {
    ASSERT_TRUE(line[0] == '0' || line[0] == '1') << line;
    ++rows[line[0] - '0'];
  }
  EXPECT_EQ(rows[0], kFrames);
  EXPECT_EQ(rows[1], kFrames);
}

}  // namespace
}  // namespace exactq
