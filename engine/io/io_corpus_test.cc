// The readers and the writer on every file of the shared corpus: each Y4M file
// parses with the geometry cases.json gives, holds the frames it lists and ends
// cleanly; writing what was read reproduces the file byte for byte; the raw .yuv
// copies hold the same pixels as their Y4M twins.

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "engine/format/frame.h"
#include "engine/io/raw_yuv_reader.h"
#include "engine/io/testing/corpus.h"
#include "engine/io/y4m_reader.h"
#include "engine/io/y4m_writer.h"
#include "gtest/gtest.h"

namespace exactq {
namespace {

struct ExpectedFile {
  FrameGeometry geometry;
  int frames = 0;
};

// File name -> what cases.json says about it.
std::map<std::string, ExpectedFile> ExpectedFiles(const std::vector<corpus::CorpusCase>& cases) {
  std::map<std::string, ExpectedFile> files;
  for (const corpus::CorpusCase& c : cases) {
    for (const std::string& path : {c.ref_path, c.dist_path}) {
      files[std::filesystem::path(path).filename().string()] = {c.geometry, c.frames};
    }
  }
  return files;
}

std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::string FrameBytes(const Frame& frame) {
  return std::string(reinterpret_cast<const char*>(frame.bytes()), frame.size_bytes());
}

TEST(IoCorpusTest, EveryY4mFileReadsAndWritesBackIdentically) {
  absl::StatusOr<std::string> dir = corpus::FindCorpusDir();
  if (!dir.ok()) GTEST_SKIP() << dir.status().message();
  absl::StatusOr<std::vector<corpus::CorpusCase>> cases = corpus::LoadCorpusCases(*dir);
  ASSERT_TRUE(cases.ok()) << cases.status();
  const std::map<std::string, ExpectedFile> expected = ExpectedFiles(*cases);

  int files_checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(*dir)) {
    if (entry.path().extension() != ".y4m") continue;
    const std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
    absl::StatusOr<Y4mReader> reader = Y4mReader::Open(entry.path().string());
    ASSERT_TRUE(reader.ok()) << reader.status();
    const auto it = expected.find(name);
    ASSERT_NE(it, expected.end()) << "not listed in cases.json";
    EXPECT_EQ(reader->geometry(), it->second.geometry) << GeometryDescription(reader->geometry());

    const std::string copy_path = ::testing::TempDir() + "/io_corpus_copy.y4m";
    absl::StatusOr<Y4mWriter> writer = Y4mWriter::Create(copy_path, reader->header());
    ASSERT_TRUE(writer.ok()) << writer.status();
    Frame frame;
    while (true) {
      absl::StatusOr<bool> more = reader->ReadFrame(&frame);
      ASSERT_TRUE(more.ok()) << more.status();
      if (!*more) break;
      EXPECT_TRUE(ValidateSampleRange(frame).ok()) << "frame " << reader->frames_read() - 1;
      ASSERT_TRUE(writer->WriteFrame(frame).ok());
    }
    ASSERT_TRUE(writer->Close().ok());
    EXPECT_EQ(reader->frames_read(), it->second.frames);
    EXPECT_TRUE(ReadFileBytes(copy_path) == ReadFileBytes(entry.path().string()))
        << "the written copy differs from the original";
    ++files_checked;
  }
  EXPECT_EQ(files_checked, static_cast<int>(expected.size()));
}

TEST(IoCorpusTest, RawYuvCopiesMatchTheirY4mTwins) {
  absl::StatusOr<std::string> dir = corpus::FindCorpusDir();
  if (!dir.ok()) GTEST_SKIP() << dir.status().message();
  int pairs_checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(*dir)) {
    if (entry.path().extension() != ".yuv") continue;
    std::filesystem::path y4m_path = entry.path();
    y4m_path.replace_extension(".y4m");
    SCOPED_TRACE(entry.path().filename().string());
    absl::StatusOr<Y4mReader> y4m = Y4mReader::Open(y4m_path.string());
    ASSERT_TRUE(y4m.ok()) << y4m.status();
    absl::StatusOr<RawYuvReader> raw = RawYuvReader::Open(entry.path().string(), y4m->geometry());
    ASSERT_TRUE(raw.ok()) << raw.status();
    Frame from_y4m;
    Frame from_raw;
    while (true) {
      absl::StatusOr<bool> more_y4m = y4m->ReadFrame(&from_y4m);
      absl::StatusOr<bool> more_raw = raw->ReadFrame(&from_raw);
      ASSERT_TRUE(more_y4m.ok()) << more_y4m.status();
      ASSERT_TRUE(more_raw.ok()) << more_raw.status();
      ASSERT_EQ(*more_y4m, *more_raw) << "frame counts differ";
      if (!*more_y4m) break;
      EXPECT_TRUE(FrameBytes(from_y4m) == FrameBytes(from_raw)) << "frame " << raw->frames_read();
    }
    ++pairs_checked;
  }
  EXPECT_GT(pairs_checked, 0) << "the corpus has no .yuv files";
}

}  // namespace
}  // namespace exactq
