// DecodeAhead on a real encode (ffmpeg's test pattern as FFV1): pictures in order and
// equal to the decoder alone, the transform run on the decoding thread, its errors,
// counting the rest, stopping mid-stream, and buffers reused rather than allocated.
#include "engine/decode/decode_ahead.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/decode/byte_source.h"
#include "gtest/gtest.h"

namespace exactq {
namespace {

std::string TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

std::string Encode(const std::string& name, int frames) {
  const std::string path = absl::StrCat(TempDir(), "/", name);
  const std::string command = absl::StrCat("ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=48x32:rate=24 ",
                                           "-frames:v ", frames, " -c:v ffv1 -pix_fmt yuv420p ", path);
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

std::vector<Frame> DecodeAlone(const std::string& path) {
  std::unique_ptr<VideoDecoder> decoder = Open(path);
  std::vector<Frame> frames;
  Frame frame;
  while (*decoder->ReadFrame(&frame)) frames.push_back(frame);
  return frames;
}

bool SameBytes(const Frame& a, const Frame& b) {
  return a.geometry() == b.geometry() && std::memcmp(a.bytes(), b.bytes(), a.size_bytes()) == 0;
}

// The luma plane's samples inverted, as a 4:0:0 picture: a transform whose output is
// easy to predict and of another format than its input.
const FrameGeometry kInvertedGeometry{48, 32, PixelFormat{ChromaLayout::k400, 8}};
absl::Status InvertLuma(const Frame& decoded, Frame* out) {
  for (size_t i = 0; i < out->size_bytes(); ++i) out->mutable_plane8(0)[i] = 255 - decoded.plane8(0)[i];
  return absl::OkStatus();
}

TEST(DecodeAheadTest, PicturesInOrderEqualTheDecoderAlone) {
  const std::string path = Encode("nine.mkv", 9);
  const std::vector<Frame> alone = DecodeAlone(path);
  ASSERT_EQ(alone.size(), 9u);
  for (int queue : {1, 3}) {
    DecodeAhead::Options options;
    options.queue_frames = queue;
    DecodeAhead source(Open(path), options);
    EXPECT_EQ(source.geometry(), alone[0].geometry());
    Frame picture;
    absl::Status end;
    size_t count = 0;
    while (source.Take(&picture, &end)) {
      ASSERT_LT(count, alone.size());
      EXPECT_TRUE(SameBytes(picture, alone[count])) << "queue " << queue << " picture " << count;
      ++count;
    }
    EXPECT_TRUE(end.ok()) << end;
    EXPECT_EQ(count, alone.size());
    EXPECT_EQ(source.taken(), 9);
    EXPECT_FALSE(source.Take(&picture, &end));  // stays at the end
  }
}

TEST(DecodeAheadTest, TheTransformRunsOnTheDecodingThread) {
  const std::string path = Encode("seven.mkv", 7);
  const std::vector<Frame> alone = DecodeAlone(path);
  std::atomic<int> on_caller_thread{0};
  const std::thread::id caller = std::this_thread::get_id();
  DecodeAhead::Options options;
  options.transform = DecodeAhead::Transform{kInvertedGeometry, [&](const Frame& decoded, Frame* out) {
                                               if (std::this_thread::get_id() == caller) ++on_caller_thread;
                                               EXPECT_EQ(out->geometry(), kInvertedGeometry);
                                               return InvertLuma(decoded, out);
                                             }};
  DecodeAhead source(Open(path), options);
  EXPECT_EQ(source.geometry(), kInvertedGeometry);
  EXPECT_EQ(source.info().geometry, alone[0].geometry());  // the decoder's own
  Frame picture, want = *Frame::Create(kInvertedGeometry);
  absl::Status end;
  size_t count = 0;
  while (source.Take(&picture, &end)) {
    ASSERT_TRUE(InvertLuma(alone[count], &want).ok());
    EXPECT_TRUE(SameBytes(picture, want)) << "picture " << count;
    ++count;
  }
  EXPECT_TRUE(end.ok()) << end;
  EXPECT_EQ(count, alone.size());
  EXPECT_EQ(on_caller_thread.load(), 0);
}

TEST(DecodeAheadTest, ATransformErrorEndsTheSourceAfterThePicturesBeforeIt) {
  const std::string path = Encode("eight.mkv", 8);
  int calls = 0;  // the decoding thread's only
  DecodeAhead::Options options;
  options.transform = DecodeAhead::Transform{kInvertedGeometry, [&](const Frame& decoded, Frame* out) {
                                               if (++calls == 4) return absl::InternalError("picture 3 refused");
                                               return InvertLuma(decoded, out);
                                             }};
  DecodeAhead source(Open(path), options);
  Frame picture;
  absl::Status end;
  int count = 0;
  while (source.Take(&picture, &end)) ++count;
  EXPECT_EQ(count, 3);
  EXPECT_EQ(end.code(), absl::StatusCode::kInternal) << end;
  EXPECT_EQ(end.message(), "picture 3 refused");
}

TEST(DecodeAheadTest, CountRestDecodesTheRestWithoutTransforming) {
  const std::string path = Encode("twenty.mkv", 20);
  std::atomic<int> transformed{0};
  DecodeAhead::Options options;
  options.queue_frames = 2;
  options.transform = DecodeAhead::Transform{kInvertedGeometry, [&](const Frame& decoded, Frame* out) {
                                               ++transformed;
                                               return InvertLuma(decoded, out);
                                             }};
  DecodeAhead source(Open(path), options);
  Frame picture;
  absl::Status end;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(source.Take(&picture, &end));
  EXPECT_EQ(source.CountRest(&end), 17);
  EXPECT_TRUE(end.ok()) << end;
  // At most the queue and the picture in hand were transformed beyond the three taken.
  EXPECT_LE(transformed.load(), 3 + 2 + 1);
  EXPECT_FALSE(source.Take(&picture, &end));
  EXPECT_EQ(source.CountRest(&end), 0);
}

TEST(DecodeAheadTest, StoppingMidStreamJoinsAndEndsCleanly) {
  const std::string path = Encode("thirty.mkv", 30);
  DecodeAhead source(Open(path), {});
  Frame picture;
  absl::Status end;
  ASSERT_TRUE(source.Take(&picture, &end));
  source.Stop();
  int queued = 0;
  while (source.Take(&picture, &end)) ++queued;
  EXPECT_LE(queued, 2);
  EXPECT_TRUE(end.ok()) << end;
  source.Stop();  // idempotent
}

class CountingResource : public std::pmr::memory_resource {
 public:
  int allocations() const { return allocations_; }

 private:
  void* do_allocate(size_t bytes, size_t alignment) override {
    ++allocations_;
    return std::pmr::new_delete_resource()->allocate(bytes, alignment);
  }
  void do_deallocate(void* p, size_t bytes, size_t alignment) override {
    std::pmr::new_delete_resource()->deallocate(p, bytes, alignment);
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }
  std::atomic<int> allocations_{0};
};

// The caller's buffers go back to the queue: a long stream allocates a few pictures,
// not one per picture, and every picture handed out lives in frame_memory.
TEST(DecodeAheadTest, BuffersAreReusedAndLiveInFrameMemory) {
  const std::string path = Encode("forty.mkv", 40);
  CountingResource memory;
  for (bool transform : {false, true}) {
    const int before = memory.allocations();
    DecodeAhead::Options options;
    options.frame_memory = &memory;
    options.queue_frames = 2;
    if (transform) options.transform = DecodeAhead::Transform{kInvertedGeometry, InvertLuma};
    DecodeAhead source(Open(path), options);
    Frame picture;  // the default resource's: replaced by the first picture, not reused
    absl::Status end;
    int count = 0;
    while (source.Take(&picture, &end)) {
      EXPECT_EQ(picture.memory_resource(), &memory);
      ++count;
    }
    EXPECT_EQ(count, 40);
    EXPECT_LE(memory.allocations() - before, 2 + 2) << "transform " << transform;
  }
}

}  // namespace
}  // namespace exactq
