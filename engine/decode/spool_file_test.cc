#include "engine/decode/spool_file.h"

#include <cstdlib>
#include <string>
#include <thread>

#include "gtest/gtest.h"

namespace exactq {
namespace {

std::string TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

std::string ReadAll(ByteSource* source) {
  std::string out;
  uint8_t buffer[7];
  while (true) {
    absl::StatusOr<size_t> n = source->Read(buffer, sizeof buffer);
    EXPECT_TRUE(n.ok()) << n.status();
    if (!n.ok() || *n == 0) return out;
    out.append(reinterpret_cast<char*>(buffer), *n);
  }
}

TEST(SpoolFileTest, ReaderWaitsForTheWriterAndSeesTheEnd) {
  absl::StatusOr<std::shared_ptr<SpoolFile>> spool = SpoolFile::Create(TempDir(), 1 << 20, "upload");
  ASSERT_TRUE(spool.ok()) << spool.status();
  std::unique_ptr<ByteSource> reader = (*spool)->OpenReader();
  std::string expected;
  std::thread writer([&] {
    for (int i = 0; i < 100; ++i) {
      const std::string part = "part " + std::to_string(i) + ";";
      ASSERT_TRUE((*spool)->Append(part.data(), part.size()).ok());
    }
    (*spool)->Finish();
  });
  for (int i = 0; i < 100; ++i) expected += "part " + std::to_string(i) + ";";
  EXPECT_EQ(ReadAll(reader.get()), expected);
  writer.join();
  EXPECT_EQ(reader->Size(), static_cast<int64_t>(expected.size()));
  // Seeking back (an index at the end sends the demuxer back to the start).
  ASSERT_TRUE(reader->Seek(5).ok());
  EXPECT_EQ(ReadAll(reader.get()), expected.substr(5));
}

TEST(SpoolFileTest, SizeIsUnknownUntilFinished) {
  absl::StatusOr<std::shared_ptr<SpoolFile>> spool = SpoolFile::Create(TempDir(), 100, "upload");
  ASSERT_TRUE(spool.ok());
  std::unique_ptr<ByteSource> reader = (*spool)->OpenReader();
  ASSERT_TRUE((*spool)->Append("abc", 3).ok());
  EXPECT_EQ(reader->Size(), -1);
  (*spool)->Finish();
  EXPECT_EQ(reader->Size(), 3);
}

TEST(SpoolFileTest, LimitIsEnforcedAndReadersSeeTheError) {
  absl::StatusOr<std::shared_ptr<SpoolFile>> spool = SpoolFile::Create(TempDir(), 10, "reference upload");
  ASSERT_TRUE(spool.ok());
  std::unique_ptr<ByteSource> reader = (*spool)->OpenReader();
  ASSERT_TRUE((*spool)->Append("0123456789", 10).ok());
  absl::Status over = (*spool)->Append("x", 1);
  EXPECT_EQ(over.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(over.message().find("reference upload"), std::string::npos) << over;
  // The error wins over bytes not read yet: the upload is void.
  uint8_t buffer[16];
  EXPECT_EQ(reader->Read(buffer, sizeof buffer).status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(SpoolFileTest, AbortWakesABlockedReader) {
  absl::StatusOr<std::shared_ptr<SpoolFile>> spool = SpoolFile::Create(TempDir(), 100, "upload");
  ASSERT_TRUE(spool.ok());
  std::unique_ptr<ByteSource> reader = (*spool)->OpenReader();
  std::thread aborter([&] { (*spool)->Abort(absl::CancelledError("the client went away")); });
  uint8_t buffer[4];
  EXPECT_EQ(reader->Read(buffer, sizeof buffer).status().code(), absl::StatusCode::kCancelled);
  aborter.join();
}

}  // namespace
}  // namespace exactq
