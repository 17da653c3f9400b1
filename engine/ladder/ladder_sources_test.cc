// LadderSources on real encodes made here with the ffmpeg CLI: a 64x48 reference
// (testsrc2 as FFV1) and renditions of it made by ffmpeg's scale filter at 32x24 and
// 48x36, a same-size one with noise, shorter and longer ones, other pixel formats and
// rates. Every picture handed out is compared byte for byte with the same source decoded
// alone (and, for a scaled rendition, with scale::ScaleBicubic of that picture).
#include "engine/ladder/ladder_sources.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/decode/byte_source.h"
#include "engine/scale/bicubic_scaler.h"
#include "gtest/gtest.h"

namespace exactq {
namespace {

constexpr int kFrames = 10;

std::string TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

// testsrc2 at 64x48 and 24 fps, `frames` of it through `filters` (ffmpeg's -vf, e.g. a
// scale to a rendition's size), as lossless FFV1 in Matroska; made once per name.
std::string Encode(const std::string& name, int frames, const std::string& filters = "",
                   const std::string& pix_fmt = "yuv420p", const std::string& rate = "24") {
  static std::map<std::string, std::string>* made = new std::map<std::string, std::string>;
  if (auto it = made->find(name); it != made->end()) return it->second;
  const std::string path = absl::StrCat(TempDir(), "/", name);
  const std::string command =
      absl::StrCat("ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=64x48:rate=", rate, " -frames:v ", frames,
                   filters.empty() ? "" : " -vf " + filters, " -c:v ffv1 -pix_fmt ", pix_fmt, " ", path);
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  (*made)[name] = path;
  return path;
}

std::string Reference() { return Encode("ref.mkv", kFrames); }
std::string Small() { return Encode("r32x24.mkv", kFrames, "scale=32:24:flags=bicubic"); }
std::string Medium() { return Encode("r48x36.mkv", kFrames, "scale=48:36:flags=bicubic"); }
// Same size, other pictures (the reference with noise): a real rendition not scaled.
std::string Noisy() { return Encode("r64x48_noise.mkv", kFrames, "noise=alls=20:allf=t"); }

// The first `fraction_tenths` tenths of `path`'s bytes in a new file: FFV1 in Matroska
// cut this way decodes some pictures, then fails naming the cut (truncated).
std::string Truncated(const std::string& path, const std::string& name, int fraction_tenths) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  const std::string out_path = absl::StrCat(TempDir(), "/", name);
  std::ofstream out(out_path, std::ios::binary);
  out << bytes.substr(0, bytes.size() * fraction_tenths / 10);
  return out_path;
}

std::unique_ptr<VideoDecoder> Open(const std::string& path) {
  absl::StatusOr<std::unique_ptr<ByteSource>> file = FileByteSource::Open(path);
  EXPECT_TRUE(file.ok()) << file.status();
  if (!file.ok()) return nullptr;
  absl::StatusOr<std::unique_ptr<VideoDecoder>> decoder = VideoDecoder::Open(*std::move(file), DecoderOptions{});
  EXPECT_TRUE(decoder.ok()) << decoder.status();
  return decoder.ok() ? *std::move(decoder) : nullptr;
}

std::vector<std::unique_ptr<VideoDecoder>> OpenAll(const std::vector<std::string>& paths) {
  std::vector<std::unique_ptr<VideoDecoder>> decoders;
  for (const std::string& path : paths) decoders.push_back(Open(path));
  return decoders;
}

// Every picture of `path`, decoded alone.
std::vector<Frame> DecodeAlone(const std::string& path) {
  std::unique_ptr<VideoDecoder> decoder = Open(path);
  std::vector<Frame> frames;
  while (decoder != nullptr) {
    Frame frame;
    absl::StatusOr<bool> more = decoder->ReadFrame(&frame);
    EXPECT_TRUE(more.ok()) << more.status();
    if (!more.ok() || !*more) break;
    frames.push_back(std::move(frame));
  }
  return frames;
}

bool SameBytes(const Frame& a, const Frame& b) {
  return a.geometry() == b.geometry() && std::memcmp(a.bytes(), b.bytes(), a.size_bytes()) == 0;
}

bool Contains(const absl::Status& s, const std::string& text) { return s.message().find(text) != std::string::npos; }

// Scaled by the decoding thread alone, or with a pool of scaling threads: the same bytes.
void ExpectEveryRenditionAtTheReferenceSize(int scale_threads) {
  SCOPED_TRACE(scale_threads);
  const std::vector<std::string> renditions = {Reference(), Small(), Medium(), Noisy()};
  LadderSources::Options options;
  options.scale_threads = scale_threads;
  absl::StatusOr<std::unique_ptr<LadderSources>> ladder =
      LadderSources::Start(Open(Reference()), OpenAll(renditions), options);
  ASSERT_TRUE(ladder.ok()) << ladder.status();
  LadderSources& l = **ladder;
  ASSERT_EQ(l.rendition_count(), 4u);
  const FrameGeometry geometry = l.reference_info().geometry;
  EXPECT_EQ(geometry, (FrameGeometry{64, 48, PixelFormat{ChromaLayout::k420, 8}}));
  EXPECT_EQ(l.rendition_info(1).geometry.width, 32);
  EXPECT_EQ(l.rendition_info(2).geometry.height, 36);
  EXPECT_FALSE(l.scaled(0));
  EXPECT_TRUE(l.scaled(1));
  EXPECT_TRUE(l.scaled(2));
  EXPECT_FALSE(l.scaled(3));

  const std::vector<Frame> reference_alone = DecodeAlone(Reference());
  std::vector<std::vector<Frame>> alone;
  for (const std::string& path : renditions) alone.push_back(DecodeAlone(path));
  ASSERT_EQ(reference_alone.size(), static_cast<size_t>(kFrames));

  Frame reference;
  std::vector<Frame> pictures;
  std::vector<bool> present;
  int index = 0;
  while (true) {
    absl::StatusOr<bool> more = l.Next(&reference, &pictures, &present);
    ASSERT_TRUE(more.ok()) << more.status();
    if (!*more) break;
    ASSERT_LT(index, kFrames);
    ASSERT_EQ(pictures.size(), 4u);
    ASSERT_EQ(present, std::vector<bool>(4, true)) << "frame " << index;
    EXPECT_TRUE(SameBytes(reference, reference_alone[index])) << "frame " << index;
    for (size_t i = 0; i < renditions.size(); ++i) {
      const Frame& alone_picture = alone[i][index];
      if (l.scaled(i)) {
        absl::StatusOr<Frame> want = scale::ScaleBicubic(alone_picture, geometry);
        ASSERT_TRUE(want.ok()) << want.status();
        EXPECT_TRUE(SameBytes(pictures[i], *want)) << "rendition " << i << " frame " << index;
      } else {
        EXPECT_TRUE(SameBytes(pictures[i], alone_picture)) << "rendition " << i << " frame " << index;
      }
    }
    // The reference itself as a rendition: its own pictures, untouched.
    EXPECT_TRUE(SameBytes(pictures[0], reference)) << "frame " << index;
    ++index;
  }
  EXPECT_EQ(index, kFrames);
  EXPECT_EQ(l.frames(), kFrames);
  for (const absl::Status& end : l.Finish()) EXPECT_TRUE(end.ok()) << end;
  // Later calls keep the answer; Next stays at the end.
  for (const absl::Status& end : l.Finish()) EXPECT_TRUE(end.ok()) << end;
  absl::StatusOr<bool> after = l.Next(&reference, &pictures, &present);
  ASSERT_TRUE(after.ok());
  EXPECT_FALSE(*after);
}

TEST(LadderSourcesTest, EveryRenditionAtTheReferenceSizeByteForByte) {
  ExpectEveryRenditionAtTheReferenceSize(1);
  ExpectEveryRenditionAtTheReferenceSize(3);
}

TEST(LadderSourcesTest, ScalingOffRefusesASmallerRenditionNamingItAndBothSizes) {
  LadderSources::Options options;
  options.scale = ScaleMode::kNone;
  absl::StatusOr<std::unique_ptr<LadderSources>> ladder =
      LadderSources::Start(Open(Reference()), OpenAll({Noisy(), Medium()}), options);
  ASSERT_FALSE(ladder.ok());
  EXPECT_EQ(ladder.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(ladder.status(), "rendition 1")) << ladder.status();
  EXPECT_TRUE(Contains(ladder.status(), "48x36")) << ladder.status();
  EXPECT_TRUE(Contains(ladder.status(), "64x48")) << ladder.status();

  // Same-size renditions need no scaling.
  ladder = LadderSources::Start(Open(Reference()), OpenAll({Noisy(), Reference()}), options);
  ASSERT_TRUE(ladder.ok()) << ladder.status();
  EXPECT_FALSE((*ladder)->scaled(0));
}

TEST(LadderSourcesTest, OtherFrameCountsEndTheirRenditionNamingBothCounts) {
  const std::string shorter = Encode("r48x36_short.mkv", kFrames - 3, "scale=48:36:flags=bicubic");
  const std::string longer = Encode("r32x24_long.mkv", kFrames + 4, "scale=32:24:flags=bicubic");
  absl::StatusOr<std::unique_ptr<LadderSources>> ladder =
      LadderSources::Start(Open(Reference()), OpenAll({shorter, Small(), longer}), {});
  ASSERT_TRUE(ladder.ok()) << ladder.status();
  LadderSources& l = **ladder;
  const std::vector<Frame> small_alone = DecodeAlone(Small());
  const std::vector<Frame> shorter_alone = DecodeAlone(shorter);
  const FrameGeometry geometry = l.reference_info().geometry;

  Frame reference;
  std::vector<Frame> pictures;
  std::vector<bool> present;
  int index = 0;
  while (true) {
    absl::StatusOr<bool> more = l.Next(&reference, &pictures, &present);
    ASSERT_TRUE(more.ok()) << more.status();
    if (!*more) break;
    EXPECT_EQ(present[0], index < kFrames - 3) << "frame " << index;
    EXPECT_TRUE(present[1]) << "frame " << index;
    EXPECT_TRUE(present[2]) << "frame " << index;
    if (present[0]) {
      EXPECT_TRUE(SameBytes(pictures[0], *scale::ScaleBicubic(shorter_alone[index], geometry))) << index;
    }
    // The others go on after one ended, with their own pictures.
    EXPECT_TRUE(SameBytes(pictures[1], *scale::ScaleBicubic(small_alone[index], geometry))) << index;
    ++index;
  }
  EXPECT_EQ(index, kFrames);
  const std::vector<absl::Status> ends = l.Finish();
  ASSERT_EQ(ends.size(), 3u);
  EXPECT_EQ(ends[0].code(), absl::StatusCode::kInvalidArgument) << ends[0];
  EXPECT_TRUE(
      Contains(ends[0], absl::StrCat("the reference has ", kFrames, " frames and rendition 0 has ", kFrames - 3)))
      << ends[0];
  EXPECT_TRUE(ends[1].ok()) << ends[1];
  EXPECT_EQ(ends[2].code(), absl::StatusCode::kInvalidArgument) << ends[2];
  EXPECT_TRUE(
      Contains(ends[2], absl::StrCat("the reference has ", kFrames, " frames and rendition 2 has ", kFrames + 4)))
      << ends[2];
}

TEST(LadderSourcesTest, APixelFormatMismatchIsRefusedNamingTheRendition) {
  const std::string yuv422 = Encode("r48x36_422.mkv", 2, "scale=48:36", "yuv422p");
  absl::StatusOr<std::unique_ptr<LadderSources>> ladder =
      LadderSources::Start(Open(Reference()), OpenAll({Small(), yuv422}), {});
  ASSERT_FALSE(ladder.ok());
  EXPECT_EQ(ladder.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(ladder.status(), "rendition 1")) << ladder.status();
  EXPECT_TRUE(Contains(ladder.status(), "yuv422p")) << ladder.status();

  const std::string ten_bit = Encode("r64x48_10bit.mkv", 2, "", "yuv420p10le");
  ladder = LadderSources::Start(Open(Reference()), OpenAll({ten_bit}), {});
  ASSERT_FALSE(ladder.ok());
  EXPECT_TRUE(Contains(ladder.status(), "rendition 0")) << ladder.status();
  EXPECT_TRUE(Contains(ladder.status(), "yuv420p10le")) << ladder.status();
}

TEST(LadderSourcesTest, MisalignedTimingIsRefusedNamingTheRendition) {
  const std::string other_rate = Encode("r32x24_25fps.mkv", kFrames, "scale=32:24", "yuv420p", "25");
  absl::StatusOr<std::unique_ptr<LadderSources>> ladder =
      LadderSources::Start(Open(Reference()), OpenAll({Small(), Medium(), other_rate}), {});
  ASSERT_FALSE(ladder.ok());
  EXPECT_EQ(ladder.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(ladder.status(), "rendition 2")) << ladder.status();
  EXPECT_TRUE(Contains(ladder.status(), "frame rates differ")) << ladder.status();
}

TEST(LadderSourcesTest, NoRenditionIsRefused) {
  absl::StatusOr<std::unique_ptr<LadderSources>> ladder = LadderSources::Start(Open(Reference()), {}, {});
  EXPECT_EQ(ladder.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(LadderSourcesTest, ARenditionDecoderErrorEndsOnlyThatRendition) {
  const std::string cut = Truncated(Encode("r32x24_tocut.mkv", kFrames, "scale=32:24"), "r32x24_cut.mkv", 7);
  absl::StatusOr<std::unique_ptr<LadderSources>> ladder =
      LadderSources::Start(Open(Reference()), OpenAll({Medium(), cut}), {});
  ASSERT_TRUE(ladder.ok()) << ladder.status();
  Frame reference;
  std::vector<Frame> pictures;
  std::vector<bool> present;
  int index = 0, cut_pictures = 0;
  while (true) {
    absl::StatusOr<bool> more = (*ladder)->Next(&reference, &pictures, &present);
    ASSERT_TRUE(more.ok()) << more.status();
    if (!*more) break;
    EXPECT_TRUE(present[0]);
    cut_pictures += present[1] ? 1 : 0;
    ++index;
  }
  EXPECT_EQ(index, kFrames);
  EXPECT_LT(cut_pictures, kFrames);
  const std::vector<absl::Status> ends = (*ladder)->Finish();
  EXPECT_TRUE(ends[0].ok()) << ends[0];
  EXPECT_EQ(ends[1].code(), absl::StatusCode::kInvalidArgument) << ends[1];
  EXPECT_TRUE(Contains(ends[1], "truncated")) << ends[1];
}

TEST(LadderSourcesTest, AReferenceDecoderErrorEndsEverything) {
  const std::string cut = Truncated(Reference(), "ref_cut.mkv", 7);
  absl::StatusOr<std::unique_ptr<LadderSources>> ladder =
      LadderSources::Start(Open(cut), OpenAll({Small(), Noisy()}), {});
  ASSERT_TRUE(ladder.ok()) << ladder.status();
  Frame reference;
  std::vector<Frame> pictures;
  std::vector<bool> present;
  absl::Status error;
  for (int i = 0; i <= kFrames && error.ok(); ++i) {
    absl::StatusOr<bool> more = (*ladder)->Next(&reference, &pictures, &present);
    if (!more.ok())
      error = more.status();
    else
      ASSERT_TRUE(*more) << "the cut reference ended cleanly";
  }
  ASSERT_FALSE(error.ok());
  EXPECT_TRUE(Contains(error, "truncated")) << error;
  EXPECT_LT((*ladder)->frames(), kFrames);
  absl::StatusOr<bool> again = (*ladder)->Next(&reference, &pictures, &present);
  EXPECT_EQ(again.status(), error);  // sticky
  for (const absl::Status& end : (*ladder)->Finish()) EXPECT_EQ(end, error);
}

TEST(LadderSourcesTest, FinishBeforeTheEndIsAPreconditionError) {
  absl::StatusOr<std::unique_ptr<LadderSources>> ladder =
      LadderSources::Start(Open(Reference()), OpenAll({Small()}), {});
  ASSERT_TRUE(ladder.ok());
  EXPECT_EQ((*ladder)->Finish()[0].code(), absl::StatusCode::kFailedPrecondition);
}

// Counts what lives in it, so the test sees where handed-out pictures come from.
class CountingResource : public std::pmr::memory_resource {
 public:
  int64_t live() const { return live_; }

 private:
  void* do_allocate(size_t bytes, size_t alignment) override {
    ++live_;
    return std::pmr::new_delete_resource()->allocate(bytes, alignment);
  }
  void do_deallocate(void* p, size_t bytes, size_t alignment) override {
    --live_;
    std::pmr::new_delete_resource()->deallocate(p, bytes, alignment);
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }
  std::atomic<int64_t> live_{0};
};

TEST(LadderSourcesTest, PicturesLiveInTheGivenMemory) {
  CountingResource memory;
  {
    LadderSources::Options options;
    options.frame_memory = &memory;
    options.queue_frames = 3;
    absl::StatusOr<std::unique_ptr<LadderSources>> ladder =
        LadderSources::Start(Open(Reference()), OpenAll({Small(), Noisy()}), options);
    ASSERT_TRUE(ladder.ok());
    Frame reference;  // from the default resource: replaced, never filled
    std::vector<Frame> pictures;
    std::vector<bool> present;
    while (*(*ladder)->Next(&reference, &pictures, &present)) {
      EXPECT_EQ(reference.memory_resource(), &memory);
      for (const Frame& picture : pictures) EXPECT_EQ(picture.memory_resource(), &memory);
    }
    EXPECT_GT(memory.live(), 0);
  }
  EXPECT_EQ(memory.live(), 0);
}

TEST(LadderSourcesTest, DestroyingMidStreamJoinsEveryThread) {
  const std::string long_reference = Encode("ref_long.mkv", 60);
  const std::string long_small = Encode("r32x24_longer.mkv", 60, "scale=32:24");
  const std::string long_medium = Encode("r48x36_longer.mkv", 60, "scale=48:36");
  for (int taken : {0, 1, 5}) {
    absl::StatusOr<std::unique_ptr<LadderSources>> ladder =
        LadderSources::Start(Open(long_reference), OpenAll({long_small, long_medium, long_reference}), {});
    ASSERT_TRUE(ladder.ok());
    Frame reference;
    std::vector<Frame> pictures;
    std::vector<bool> present;
    for (int i = 0; i < taken; ++i) ASSERT_TRUE(*(*ladder)->Next(&reference, &pictures, &present));
    ladder->reset();  // must not hang, leak or race (TSan runs this too)
  }
}

}  // namespace
}  // namespace exactq
