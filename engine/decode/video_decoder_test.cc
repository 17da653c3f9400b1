// Decodes tiny encodes made here with the ffmpeg CLI and compares every frame, bit for
// bit, with `ffmpeg -f yuv4mpegpipe` of the same file (FFmpeg's decoders are
// bit-exact, so the two must agree), read through a file and through a spool fed in
// small chunks by another thread as an upload would be.
#include "engine/decode/video_decoder.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/decode/byte_source.h"
#include "engine/decode/spool_file.h"
#include "engine/io/y4m_reader.h"
#include "gtest/gtest.h"

namespace exactq {
namespace {

constexpr int kFrames = 6;

std::string TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

void Run(const std::string& command) {
  const std::string line = absl::StrCat(command, " 2>", TempDir(), "/ffmpeg.log");
  ASSERT_EQ(std::system(line.c_str()), 0) << line;
}

// A few frames of ffmpeg's test pattern, encoded with `codec_args` into `name`.
std::string Encode(const std::string& name, const std::string& codec_args, const std::string& source = "",
                   int frames = kFrames) {
  const std::string path = absl::StrCat(TempDir(), "/", name);
  const std::string input = source.empty() ? "-f lavfi -i testsrc2=size=64x64:rate=24" : source;
  Run(absl::StrCat("ffmpeg -nostdin -v error -y ", input, " -frames:v ", frames, " ", codec_args, " ", path));
  return path;
}

// `ffmpeg -f yuv4mpegpipe` of an encoded file: every decoded picture, none dropped or
// repeated (passthrough), 10-bit too (-strict -1).
std::string DecodeWithCli(const std::string& path, bool av1) {
  const std::string y4m = path + ".y4m";
  Run(absl::StrCat("ffmpeg -nostdin -v error -y ", av1 ? "-c:v libdav1d " : "", "-i ", path,
                   " -map 0:v:0 -fps_mode passthrough -f yuv4mpegpipe -strict -1 ", y4m));
  return y4m;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

// Feeds the file to a spool in 997-byte chunks from another thread.
struct Upload {
  std::shared_ptr<SpoolFile> spool;
  std::thread writer;
  ~Upload() {
    if (writer.joinable()) writer.join();
  }
};

std::unique_ptr<ByteSource> StartUpload(const std::string& path, Upload* upload) {
  absl::StatusOr<std::shared_ptr<SpoolFile>> spool = SpoolFile::Create(TempDir(), 64 << 20, "upload");
  EXPECT_TRUE(spool.ok()) << spool.status();
  upload->spool = *spool;
  std::unique_ptr<ByteSource> reader = upload->spool->OpenReader();
  upload->writer = std::thread([bytes = ReadFile(path), spool = upload->spool] {
    for (size_t at = 0; at < bytes.size(); at += 997) {
      if (!spool->Append(bytes.data() + at, std::min<size_t>(997, bytes.size() - at)).ok()) return;
    }
    spool->Finish();
  });
  return reader;
}

// Decodes all of `source` and compares with the CLI's Y4M frame by frame.
void ExpectSameAsCli(std::unique_ptr<ByteSource> source, const std::string& y4m_path, int threads) {
  DecoderOptions options;
  options.threads = threads;
  absl::StatusOr<std::unique_ptr<VideoDecoder>> decoder = VideoDecoder::Open(std::move(source), options);
  ASSERT_TRUE(decoder.ok()) << decoder.status();
  absl::StatusOr<Y4mReader> expected = Y4mReader::Open(y4m_path);
  ASSERT_TRUE(expected.ok()) << expected.status();
  EXPECT_EQ((*decoder)->info().geometry, expected->geometry())
      << GeometryDescription((*decoder)->info().geometry) << " vs " << GeometryDescription(expected->geometry());
  Frame got, want;
  int frames = 0;
  while (true) {
    absl::StatusOr<bool> more_got = (*decoder)->ReadFrame(&got);
    absl::StatusOr<bool> more_want = expected->ReadFrame(&want);
    ASSERT_TRUE(more_got.ok()) << more_got.status();
    ASSERT_TRUE(more_want.ok()) << more_want.status();
    ASSERT_EQ(*more_got, *more_want) << "frame counts differ at frame " << frames;
    if (!*more_got) break;
    ASSERT_EQ(got.geometry(), want.geometry()) << "frame " << frames;
    ASSERT_EQ(std::memcmp(got.bytes(), want.bytes(), want.size_bytes()), 0) << "frame " << frames << " differs";
    ++frames;
  }
  EXPECT_EQ(frames, kFrames);
}

struct Encoding {
  const char* name;  // also the file name
  const char* args;
  bool av1;
};

class DecodeMatchesCliTest : public ::testing::TestWithParam<Encoding> {};

TEST_P(DecodeMatchesCliTest, FromFileAndFromUpload) {
  const Encoding& e = GetParam();
  const std::string path = Encode(e.name, e.args);
  const std::string y4m = DecodeWithCli(path, e.av1);
  {
    SCOPED_TRACE("file, 1 thread");
    absl::StatusOr<std::unique_ptr<ByteSource>> file = FileByteSource::Open(path);
    ASSERT_TRUE(file.ok()) << file.status();
    ExpectSameAsCli(*std::move(file), y4m, 1);
  }
  {
    SCOPED_TRACE("upload, 3 frame threads");
    Upload upload;
    ExpectSameAsCli(StartUpload(path, &upload), y4m, 3);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Codecs, DecodeMatchesCliTest,
    ::testing::Values(
        // B-frames and the index at the end of the mp4 (the upload must seek).
        Encoding{"h264_8.mp4", "-c:v libx264 -preset veryfast -bf 2 -pix_fmt yuv420p", false},
        Encoding{"h264_10.mkv", "-c:v libx264 -preset veryfast -bf 2 -pix_fmt yuv420p10le", false},
        Encoding{"h264_444.h264", "-c:v libx264 -preset veryfast -pix_fmt yuv444p -f h264", false},
        Encoding{"h264_8.ts", "-c:v libx264 -preset veryfast -pix_fmt yuv420p", false},
        Encoding{"hevc_8.mkv", "-c:v libx265 -preset ultrafast -x265-params log-level=none -pix_fmt yuv420p", false},
        Encoding{"hevc_10.mp4", "-c:v libx265 -preset ultrafast -x265-params log-level=none -pix_fmt yuv420p10le",
                 false},
        Encoding{"av1_8.ivf", "-c:v libaom-av1 -cpu-used 8 -pix_fmt yuv420p", true},
        Encoding{"av1_10.mkv", "-c:v libaom-av1 -cpu-used 8 -pix_fmt yuv420p10le", true},
        Encoding{"ffv1_8.mkv", "-c:v ffv1 -pix_fmt yuv422p", false},
        Encoding{"ffv1_10.mkv", "-c:v ffv1 -pix_fmt yuv444p10le", false},
        Encoding{"ffv1_gray12.mkv", "-c:v ffv1 -pix_fmt gray12le", false}),
    [](const ::testing::TestParamInfo<Encoding>& info) {
      std::string name = info.param.name;
      for (char& c : name) {
        if (c == '.') c = '_';
      }
      return name;
    });

absl::Status DecodeAll(const std::string& path) {
  absl::StatusOr<std::unique_ptr<ByteSource>> file = FileByteSource::Open(path);
  if (!file.ok()) return file.status();
  absl::StatusOr<std::unique_ptr<VideoDecoder>> decoder = VideoDecoder::Open(*std::move(file), DecoderOptions{});
  if (!decoder.ok()) return decoder.status();
  Frame frame;
  while (true) {
    absl::StatusOr<bool> more = (*decoder)->ReadFrame(&frame);
    if (!more.ok()) return more.status();
    if (!*more) return absl::OkStatus();
  }
}

TEST(VideoDecoderErrorTest, NotAVideoFileIsInvalidArgument) {
  const std::string path = TempDir() + "/garbage.bin";
  WriteFile(path, std::string(4096, '\x5a'));
  absl::Status s = DecodeAll(path);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("garbage.bin"), std::string::npos) << s;
}

TEST(VideoDecoderErrorTest, MissingFileIsNotFound) {
  EXPECT_EQ(DecodeAll(TempDir() + "/no-such.mkv").code(), absl::StatusCode::kNotFound);
}

TEST(VideoDecoderErrorTest, TruncatedMp4NamesTheFrameAndTheCause) {
  const std::string path = Encode("cut.mp4", "-c:v libx264 -preset veryfast -pix_fmt yuv420p -movflags +faststart");
  std::string bytes = ReadFile(path);
  WriteFile(path, bytes.substr(0, bytes.size() * 6 / 10));
  absl::Status s = DecodeAll(path);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("frame "), std::string::npos) << s;
  EXPECT_NE(s.message().find("truncated"), std::string::npos) << s;
}

TEST(VideoDecoderErrorTest, TruncatedMovIsCaughtByTheSampleCount) {
  // The index (first, with faststart) lists six samples; the file stops inside the
  // last, so at most five whole packets arrive. FFV1 in mov: intra-only.
  const std::string path = Encode("cut_clean.mov", "-c:v ffv1 -pix_fmt yuv420p -movflags +faststart");
  std::string bytes = ReadFile(path);
  WriteFile(path, bytes.substr(0, bytes.size() - 10));
  absl::Status s = DecodeAll(path);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("truncated"), std::string::npos) << s;
}

TEST(VideoDecoderErrorTest, TruncatedMkvIsCaughtByTheTrackDuration) {
  // Matroska lists no samples; FFmpeg's muxer tags the track's duration.
  for (const char* codec : {"-c:v ffv1", "-c:v libx264 -preset veryfast"}) {
    const std::string path = Encode("cut.mkv", std::string(codec) + " -pix_fmt yuv420p", "", 10);
    std::string bytes = ReadFile(path);
    WriteFile(path, bytes.substr(0, bytes.size() * 7 / 10));
    absl::Status s = DecodeAll(path);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << codec << ": " << s;
    EXPECT_NE(s.message().find("truncated"), std::string::npos) << codec << ": " << s;
  }
}

TEST(VideoDecoderTest, EditListThatDropsPicturesIsNotTruncation) {
  // A stream copy that starts after the first picture keeps it in the file with an edit
  // list that hides it: fewer pictures than samples, and nothing is wrong.
  const std::string full = Encode("full.mp4", "-c:v libx264 -preset veryfast -g 100 -pix_fmt yuv420p", "", 12);
  const std::string trimmed = TempDir() + "/trimmed.mp4";
  exactq::Run("ffmpeg -nostdin -v error -y -ss 0.2 -i " + full + " -c copy " + trimmed);
  EXPECT_TRUE(DecodeAll(trimmed).ok()) << DecodeAll(trimmed);
}

TEST(VideoDecoderErrorTest, CorruptBitstreamNamesTheFrame) {
  const std::string path = Encode("corrupt.h264", "-c:v libx264 -preset veryfast -pix_fmt yuv420p -f h264");
  std::string bytes = ReadFile(path);
  // Zeros inside a picture's slice data cut it short (a start code where none should
  // be): the decoder finds macroblocks missing. Flipped bits in CABAC data may decode
  // to a different but well-formed picture, which no decoder can tell from intended
  // content (README, known issues).
  for (size_t i = bytes.size() * 3 / 10; i < bytes.size() * 3 / 10 + 16; ++i) bytes[i] = 0;
  WriteFile(path, bytes);
  absl::Status s = DecodeAll(path);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("frame "), std::string::npos) << s;
}

TEST(VideoDecoderErrorTest, HdrTransferIsRefusedByName) {
  const std::string path = Encode("pq.mkv",
                                  "-c:v libx265 -preset ultrafast -pix_fmt yuv420p10le -x265-params "
                                  "log-level=none:colorprim=bt709:transfer=smpte2084:colormatrix=bt709");
  absl::Status s = DecodeAll(path);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_NE(s.message().find("smpte2084"), std::string::npos) << s;
}

TEST(VideoDecoderErrorTest, Bt2020PrimariesAreRefusedByName) {
  const std::string path =
      Encode("bt2020.mkv", "-c:v ffv1 -pix_fmt yuv420p10le -color_primaries bt2020 -color_trc bt709 -colorspace bt709");
  absl::Status s = DecodeAll(path);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_NE(s.message().find("bt2020"), std::string::npos) << s;
}

TEST(VideoDecoderErrorTest, AlphaPixelFormatIsRefusedByName) {
  const std::string path = Encode("alpha.mkv", "-c:v ffv1 -pix_fmt yuva420p");
  absl::Status s = DecodeAll(path);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_NE(s.message().find("yuva420p"), std::string::npos) << s;
}

absl::StatusOr<DecodedStreamInfo> InfoOf(const std::string& path) {
  absl::StatusOr<std::unique_ptr<ByteSource>> file = FileByteSource::Open(path);
  if (!file.ok()) return file.status();
  absl::StatusOr<std::unique_ptr<VideoDecoder>> decoder = VideoDecoder::Open(*std::move(file), DecoderOptions{});
  if (!decoder.ok()) return decoder.status();
  return (*decoder)->info();
}

TEST(VideoDecoderTimingTest, RatesAndStartsComeFromTheContainer) {
  const std::string at24 = Encode("rate24.mkv", "-c:v ffv1 -pix_fmt yuv420p");
  const std::string at25 =
      Encode("rate25.mkv", "-c:v ffv1 -pix_fmt yuv420p", "-f lavfi -i testsrc2=size=64x64:rate=25");
  const std::string late = Encode("late.mkv", "-c:v ffv1 -pix_fmt yuv420p -output_ts_offset 0.5");
  const std::string y4m = Encode("pattern.y4m", "-pix_fmt yuv420p");
  absl::StatusOr<DecodedStreamInfo> a = InfoOf(at24), b = InfoOf(at25), c = InfoOf(late), d = InfoOf(y4m);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok() && d.ok());
  EXPECT_EQ(a->timing.rate_num, 24);
  EXPECT_EQ(a->timing.rate_den, 1);
  EXPECT_TRUE(CheckSourcesPair(a->timing, d->timing).ok())
      << TimingDescription(a->timing) << " vs " << TimingDescription(d->timing);
  EXPECT_EQ(CheckSourcesPair(a->timing, b->timing).code(), absl::StatusCode::kInvalidArgument);
  absl::Status offset = CheckSourcesPair(d->timing, c->timing);
  EXPECT_EQ(offset.code(), absl::StatusCode::kInvalidArgument) << TimingDescription(c->timing);
  // B-frames shift decoding timestamps, not the first picture's presentation time:
  // mp4 (an edit list), mkv and MPEG-TS renditions pair with the Y4M they came from.
  for (const char* name : {"bframes.mp4", "bframes.mkv", "bframes.ts"}) {
    absl::StatusOr<DecodedStreamInfo> e = InfoOf(Encode(name, "-c:v libx264 -preset veryfast -bf 3 -pix_fmt yuv420p"));
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_TRUE(CheckSourcesPair(d->timing, e->timing).ok()) << name << ": " << TimingDescription(e->timing);
  }
}

// What a decoder decodes on: the threads granted where the codec threads (FFmpeg's
// frame threads for HEVC and FFV1, dav1d's own pool for AV1), the reading thread alone
// where it does not (Y4M), which then asks for no grant: the server's thread budget
// lends a Y4M side nothing.
TEST(VideoDecoderTest, ThreadsAreThoseGrantedWhereTheCodecThreads) {
  for (const auto& [name, args, threads, granted] :
       {std::tuple<const char*, const char*, int, bool>{"threads.y4m", "-pix_fmt yuv420p", 1, false},
        {"threads_hevc.mkv", "-c:v libx265 -preset ultrafast -x265-params log-level=none -pix_fmt yuv420p", 2, true},
        {"threads_ffv1.mkv", "-c:v ffv1 -pix_fmt yuv420p", 2, true},
        {"threads_av1.ivf", "-c:v libaom-av1 -cpu-used 8 -pix_fmt yuv420p", 2, true}}) {
    DecoderOptions options;
    options.threads = 3;
    int asked = 0;
    options.grant_threads = [&asked](int n) {
      asked = n;
      return 2;  // fewer than asked, as a busy budget grants
    };
    absl::StatusOr<std::unique_ptr<ByteSource>> file = FileByteSource::Open(Encode(name, args));
    ASSERT_TRUE(file.ok()) << file.status();
    absl::StatusOr<std::unique_ptr<VideoDecoder>> decoder = VideoDecoder::Open(*std::move(file), options);
    ASSERT_TRUE(decoder.ok()) << decoder.status();
    EXPECT_EQ((*decoder)->info().threads, threads) << name;
    EXPECT_EQ(asked, granted ? 3 : 0) << name;
  }
}

}  // namespace
}  // namespace exactq
