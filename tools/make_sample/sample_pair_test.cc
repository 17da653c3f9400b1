// The committed sample pair is exactly what the generator writes, and is what it says
// it is (geometry, frame count, a distortion of moderate strength).

#include "tools/make_sample/sample_pair.h"

#include <fstream>
#include <sstream>
#include <string>

#include "engine/io/y4m_reader.h"
#include "engine/metrics/psnr/psnr.h"
#include "gtest/gtest.h"

namespace exactq {
namespace {

// Committed files, relative to the workspace root (Bazel runs tests there, in the
// runfiles tree; the files are data dependencies).
constexpr char kCommittedRef[] = "samples/sample.ref.y4m";
constexpr char kCommittedDist[] = "samples/sample.dist.y4m";

std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

TEST(SamplePairTest, RegeneratedFilesEqualTheCommittedOnes) {
  const std::string ref_path = ::testing::TempDir() + "/sample.ref.y4m";
  const std::string dist_path = ::testing::TempDir() + "/sample.dist.y4m";
  ASSERT_TRUE(WriteSamplePair(ref_path, dist_path).ok());
  const std::string ref = ReadFileBytes(ref_path);
  const std::string dist = ReadFileBytes(dist_path);
  EXPECT_TRUE(ref == ReadFileBytes(kCommittedRef))
      << "samples/sample.ref.y4m is stale: run `bazel run //tools/make_sample`";
  EXPECT_TRUE(dist == ReadFileBytes(kCommittedDist))
      << "samples/sample.dist.y4m is stale: run `bazel run //tools/make_sample`";
  EXPECT_LT(ref.size(), 150u * 1024);
  EXPECT_LT(dist.size(), 150u * 1024);
}

TEST(SamplePairTest, CommittedPairIsQcifWithAModerateDistortion) {
  absl::StatusOr<Y4mReader> ref_reader = Y4mReader::Open(kCommittedRef);
  absl::StatusOr<Y4mReader> dist_reader = Y4mReader::Open(kCommittedDist);
  ASSERT_TRUE(ref_reader.ok()) << ref_reader.status();
  ASSERT_TRUE(dist_reader.ok()) << dist_reader.status();
  EXPECT_EQ(ref_reader->geometry(), (FrameGeometry{176, 144, {ChromaLayout::k420, 8}}));
  EXPECT_EQ(ref_reader->header().color_range, ColorRange::kLimited);

  PsnrMetric psnr(PsnrOptions{});
  Frame ref;
  Frame dist;
  int frames = 0;
  while (*ref_reader->ReadFrame(&ref)) {
    ASSERT_TRUE(*dist_reader->ReadFrame(&dist));
    absl::StatusOr<FrameScores> scores = psnr.Score(ref, dist);
    ASSERT_TRUE(scores.ok()) << scores.status();
    // Noise of +-3 on a blurred ramp: a visible but mild distortion, not identity.
    for (const NamedScore& score : *scores) {
      EXPECT_GT(score.value, 30.0) << score.name << " frame " << frames;
      EXPECT_LT(score.value, 50.0) << score.name << " frame " << frames;
    }
    ++frames;
  }
  EXPECT_EQ(frames, kSampleFrames);
  EXPECT_FALSE(*dist_reader->ReadFrame(&dist));
}

TEST(SamplePairTest, FramesDifferOverTime) {
  EXPECT_NE(MakeSampleReference(0).sample(0, 48, 80), MakeSampleReference(2).sample(0, 48, 80));
}

}  // namespace
}  // namespace exactq
