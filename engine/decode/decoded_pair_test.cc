#include "engine/decode/decoded_pair.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/decode/byte_source.h"
#include "gtest/gtest.h"

namespace exactq {
namespace {

std::string TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

// `frames` of ffmpeg's test pattern as lossless FFV1 (fast to make and to decode).
std::string Encode(const std::string& name, int frames, const std::string& args = "-pix_fmt yuv420p") {
  const std::string path = absl::StrCat(TempDir(), "/", name);
  const std::string command = absl::StrCat("ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=48x32:rate=24 ",
                                           "-frames:v ", frames, " -c:v ffv1 ", args, " ", path);
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return path;
}

std::unique_ptr<VideoDecoder> Open(const std::string& path) {
  absl::StatusOr<std::unique_ptr<ByteSource>> file = FileByteSource::Open(path);
  EXPECT_TRUE(file.ok()) << file.status();
  absl::StatusOr<std::unique_ptr<VideoDecoder>> decoder = VideoDecoder::Open(*std::move(file), DecoderOptions{});
  EXPECT_TRUE(decoder.ok()) << decoder.status();
  return decoder.ok() ? *std::move(decoder) : nullptr;
}

TEST(DecodedPairTest, PairsEveryFrameInOrder) {
  const std::string path = Encode("same.mkv", 9);
  absl::StatusOr<std::unique_ptr<DecodedPair>> pair = DecodedPair::Start(Open(path), Open(path), {});
  ASSERT_TRUE(pair.ok()) << pair.status();
  Frame ref, dist;
  int pairs = 0;
  while (true) {
    absl::StatusOr<bool> more = (*pair)->Next(&ref, &dist);
    ASSERT_TRUE(more.ok()) << more.status();
    if (!*more) break;
    ASSERT_EQ(std::memcmp(ref.bytes(), dist.bytes(), ref.size_bytes()), 0) << "pair " << pairs;
    ++pairs;
  }
  EXPECT_EQ(pairs, 9);
}

TEST(DecodedPairTest, DifferentCountsAnswerTheCommonFramesThenNameBothCounts) {
  absl::StatusOr<std::unique_ptr<DecodedPair>> pair =
      DecodedPair::Start(Open(Encode("seven.mkv", 7)), Open(Encode("five.mkv", 5)), {});
  ASSERT_TRUE(pair.ok()) << pair.status();
  Frame ref, dist;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(*(*pair)->Next(&ref, &dist));
  absl::StatusOr<bool> end = (*pair)->Next(&ref, &dist);
  ASSERT_FALSE(end.ok());
  EXPECT_EQ(end.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(end.status().message().find("reference has 7 frames and the distorted 5"), std::string::npos)
      << end.status();
}

TEST(DecodedPairTest, DifferentPixelFormatsAreRefused) {
  absl::StatusOr<std::unique_ptr<DecodedPair>> pair =
      DecodedPair::Start(Open(Encode("a8.mkv", 2)), Open(Encode("a10.mkv", 2, "-pix_fmt yuv420p10le")), {});
  ASSERT_FALSE(pair.ok());
  EXPECT_NE(pair.status().message().find("yuv420p10le"), std::string::npos) << pair.status();
}

TEST(DecodedPairTest, StoppingEarlyJoinsTheDecoders) {
  const std::string path = Encode("long.mkv", 30);
  absl::StatusOr<std::unique_ptr<DecodedPair>> pair = DecodedPair::Start(Open(path), Open(path), {});
  ASSERT_TRUE(pair.ok());
  Frame ref, dist;
  ASSERT_TRUE(*(*pair)->Next(&ref, &dist));
  pair->reset();  // must not hang or leak
}

}  // namespace
}  // namespace exactq
