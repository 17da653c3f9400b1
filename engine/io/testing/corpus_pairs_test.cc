#include "engine/io/testing/corpus_pairs.h"

#include <cstdio>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace exactq {
namespace corpus {
namespace {

// A 2x2 4:2:0 8-bit Y4M file of `frames` frames, in the test's temporary directory.
std::string WriteY4m(const std::string& name, int frames) {
  const std::string path = std::string(::testing::TempDir()) + "/" + name;
  std::ofstream out(path, std::ios::binary);
  out << "YUV4MPEG2 W2 H2 F25:1 Ip A1:1 C420jpeg\n";
  for (int i = 0; i < frames; ++i) out << "FRAME\n" << std::string(6, static_cast<char>(16 + i));
  return path;
}

CorpusCase Case(int ref_frames, int dis_frames, int listed) {
  CorpusCase c;
  c.id = "case_" + std::to_string(ref_frames) + "_" + std::to_string(dis_frames) + "_" + std::to_string(listed);
  c.ref_path = WriteY4m(c.id + "_ref.y4m", ref_frames);
  c.dist_path = WriteY4m(c.id + "_dis.y4m", dis_frames);
  c.frames = listed;
  return c;
}

// Reads to the end; the status of the last Next.
absl::Status ReadAll(const CorpusCase& c, int* pairs) {
  absl::StatusOr<CorpusPairReader> reader = CorpusPairReader::Open(c);
  if (!reader.ok()) return reader.status();
  Frame ref, dis;
  *pairs = 0;
  for (;;) {
    absl::StatusOr<bool> more = reader->Next(&ref, &dis);
    if (!more.ok()) return more.status();
    if (!*more) return absl::OkStatus();
    EXPECT_EQ(ref.bytes()[0], 16 + *pairs);
    ++*pairs;
  }
}

TEST(CorpusPairReaderTest, ReadsEveryPairInStep) {
  int pairs = 0;
  ASSERT_TRUE(ReadAll(Case(3, 3, 3), &pairs).ok());
  EXPECT_EQ(pairs, 3);
}

TEST(CorpusPairReaderTest, FilesOfDifferentLengthsAreAnErrorNamingTheCase) {
  int pairs = 0;
  const absl::Status s = ReadAll(Case(3, 2, 3), &pairs);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("case_3_2_3"), std::string::npos) << s;
  EXPECT_EQ(pairs, 2);
}

TEST(CorpusPairReaderTest, ACountOtherThanCasesJsonsIsAnError) {
  int pairs = 0;
  EXPECT_EQ(ReadAll(Case(2, 2, 3), &pairs).code(), absl::StatusCode::kDataLoss);
}

TEST(CorpusPairReaderTest, AbsentFilesAreSaidToBeAbsent) {
  CorpusCase c = Case(1, 1, 1);
  EXPECT_TRUE(CaseFilesPresent(c));
  c.dist_path += ".missing";
  EXPECT_FALSE(CaseFilesPresent(c));
  EXPECT_FALSE(CorpusPairReader::Open(c).ok());
}

}  // namespace
}  // namespace corpus
}  // namespace exactq
