// OpenDecoderWithThreads against the server's decoder-thread budget: a side whose codec
// threads (FFV1 here) holds what it decodes on; a Y4M side holds none, not even while it
// opens, so streams that open at once do not starve each other's decoders.
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/decode/byte_source.h"
#include "engine/decode/video_decoder.h"
#include "gtest/gtest.h"
#include "server/decode_thread_budget.h"
#include "server/encoded_source.h"

namespace exactq::server {
namespace {

std::string TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

// Three frames of ffmpeg's test pattern with `codec_args` into `name`.
std::string Encode(const std::string& name, const std::string& codec_args) {
  const std::string path = absl::StrCat(TempDir(), "/", name);
  const std::string command = absl::StrCat("ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=64x48:rate=24 ",
                                           "-frames:v 3 ", codec_args, " ", path, " 2>", TempDir(), "/ffmpeg.log");
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return path;
}

std::unique_ptr<VideoDecoder> Open(const std::string& path, uint32_t threads, DecodeThreadBudget* budget,
                                   std::vector<DecodeThreadBudget::Grant>* grants) {
  absl::StatusOr<std::unique_ptr<ByteSource>> file = FileByteSource::Open(path);
  EXPECT_TRUE(file.ok()) << file.status();
  if (!file.ok()) return nullptr;
  absl::StatusOr<std::unique_ptr<VideoDecoder>> decoder =
      OpenDecoderWithThreads(*std::move(file), DecoderOptions{}, threads, budget, grants);
  EXPECT_TRUE(decoder.ok()) << decoder.status();
  return decoder.ok() ? *std::move(decoder) : nullptr;
}

TEST(DecoderThreadsTest, OnlySidesWhoseCodecThreadsHoldTheBudget) {
  const std::string y4m = Encode("ref.y4m", "-pix_fmt yuv420p");
  const std::string ffv1 = Encode("dist.mkv", "-c:v ffv1 -pix_fmt yuv420p");
  DecodeThreadBudget budget(4);
  std::vector<DecodeThreadBudget::Grant> grants;

  // A stream as the decode bench opens one: the Y4M reference first, then the rendition.
  std::unique_ptr<VideoDecoder> reference = Open(y4m, 4, &budget, &grants);
  ASSERT_NE(reference, nullptr);
  EXPECT_EQ(budget.in_use(), 0u) << "a Y4M side holds no decoder threads";
  std::unique_ptr<VideoDecoder> distorted = Open(ffv1, 4, &budget, &grants);
  ASSERT_NE(distorted, nullptr);
  EXPECT_EQ(distorted->info().threads, 4) << "the whole budget is left for the side that threads";
  EXPECT_EQ(budget.in_use(), 4u);

  // A second stream finds the budget spent: its threading side still gets one thread.
  std::unique_ptr<VideoDecoder> second = Open(ffv1, 4, &budget, &grants);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->info().threads, 1);
  EXPECT_EQ(budget.in_use(), 5u);
}

}  // namespace
}  // namespace exactq::server
