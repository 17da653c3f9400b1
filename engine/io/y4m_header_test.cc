#include "engine/io/y4m_header.h"

#include <string>

#include "gtest/gtest.h"

namespace exactq {
namespace {

// The header line of the corpus's 10-bit files, as ffmpeg 5.1 wrote it.
constexpr char kFfmpeg10BitHeader[] = "YUV4MPEG2 W576 H324 F25:1 Ip A1:1 C420p10 XYSCSS=420P10 XCOLORRANGE=LIMITED";

TEST(Y4mHeaderTest, ParsesFfmpegHeader) {
  absl::StatusOr<Y4mHeader> header = ParseY4mHeader(kFfmpeg10BitHeader);
  ASSERT_TRUE(header.ok()) << header.status();
  EXPECT_EQ(header->geometry, (FrameGeometry{576, 324, {ChromaLayout::k420, 10}}));
  EXPECT_EQ(header->frame_rate, (Y4mRatio{25, 1}));
  EXPECT_EQ(header->pixel_aspect, (Y4mRatio{1, 1}));
  EXPECT_EQ(header->interlace, 'p');
  ASSERT_TRUE(header->color_range.has_value());
  EXPECT_EQ(*header->color_range, ColorRange::kLimited);
}

TEST(Y4mHeaderTest, FormatReproducesFfmpegHeader) {
  absl::StatusOr<Y4mHeader> header = ParseY4mHeader(kFfmpeg10BitHeader);
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(FormatY4mHeader(*header), std::string(kFfmpeg10BitHeader) + "\n");
}

TEST(Y4mHeaderTest, MinimalHeaderUsesY4mDefaults) {
  absl::StatusOr<Y4mHeader> header = ParseY4mHeader("YUV4MPEG2 W8 H6");
  ASSERT_TRUE(header.ok()) << header.status();
  EXPECT_EQ(header->geometry, (FrameGeometry{8, 6, {ChromaLayout::k420, 8}}));
  EXPECT_FALSE(header->frame_rate.known());
  EXPECT_FALSE(header->color_range.has_value());
  EXPECT_EQ(header->interlace, '?');
}

TEST(Y4mHeaderTest, EveryFfmpegColorspaceName) {
  struct Case {
    const char* tag;
    ChromaLayout layout;
    int depth;
  };
  const Case cases[] = {
      {"420jpeg", ChromaLayout::k420, 8}, {"420paldv", ChromaLayout::k420, 8}, {"420mpeg2", ChromaLayout::k420, 8},
      {"420", ChromaLayout::k420, 8},     {"422", ChromaLayout::k422, 8},      {"444", ChromaLayout::k444, 8},
      {"mono", ChromaLayout::k400, 8},    {"420p9", ChromaLayout::k420, 9},    {"420p10", ChromaLayout::k420, 10},
      {"422p10", ChromaLayout::k422, 10}, {"444p10", ChromaLayout::k444, 10},  {"420p12", ChromaLayout::k420, 12},
      {"422p12", ChromaLayout::k422, 12}, {"444p12", ChromaLayout::k444, 12},  {"420p14", ChromaLayout::k420, 14},
      {"422p14", ChromaLayout::k422, 14}, {"444p14", ChromaLayout::k444, 14},  {"420p16", ChromaLayout::k420, 16},
      {"422p16", ChromaLayout::k422, 16}, {"444p16", ChromaLayout::k444, 16},  {"mono9", ChromaLayout::k400, 9},
      {"mono10", ChromaLayout::k400, 10}, {"mono12", ChromaLayout::k400, 12},  {"mono16", ChromaLayout::k400, 16},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Y4mHeader> header = ParseY4mHeader(std::string("YUV4MPEG2 W4 H4 C") + c.tag);
    ASSERT_TRUE(header.ok()) << c.tag << ": " << header.status();
    EXPECT_EQ(header->geometry.format, (PixelFormat{c.layout, c.depth})) << c.tag;
  }
}

TEST(Y4mHeaderTest, ColorspaceNameRoundTripsEveryFormat) {
  for (ChromaLayout layout : {ChromaLayout::k400, ChromaLayout::k420, ChromaLayout::k422, ChromaLayout::k444}) {
    for (int depth = 8; depth <= 16; ++depth) {
      const PixelFormat format{layout, depth};
      absl::StatusOr<PixelFormat> parsed = ParseY4mColorspace(Y4mColorspaceName(format));
      ASSERT_TRUE(parsed.ok()) << Y4mColorspaceName(format);
      EXPECT_EQ(*parsed, format);
    }
  }
  EXPECT_EQ(Y4mColorspaceName({ChromaLayout::k420, 8}), "420jpeg");
  EXPECT_EQ(Y4mColorspaceName({ChromaLayout::k444, 16}), "444p16");
  EXPECT_EQ(Y4mColorspaceName({ChromaLayout::k400, 10}), "mono10");
}

TEST(Y4mHeaderTest, XyscssStandsInForAMissingC) {
  absl::StatusOr<Y4mHeader> header = ParseY4mHeader("YUV4MPEG2 W4 H4 XYSCSS=444P12");
  ASSERT_TRUE(header.ok()) << header.status();
  EXPECT_EQ(header->geometry.format, (PixelFormat{ChromaLayout::k444, 12}));
}

TEST(Y4mHeaderTest, FormatsMonoWithoutXyscssAndFullRange) {
  Y4mHeader header;
  header.geometry = {7, 3, {ChromaLayout::k400, 12}};
  header.frame_rate = {30000, 1001};
  header.pixel_aspect = {0, 0};
  header.interlace = 't';
  header.color_range = ColorRange::kFull;
  EXPECT_EQ(FormatY4mHeader(header), "YUV4MPEG2 W7 H3 F30000:1001 It A0:0 Cmono12 XCOLORRANGE=FULL\n");
}

void ExpectErrorNaming(const std::string& line, const std::string& needle) {
  absl::StatusOr<Y4mHeader> header = ParseY4mHeader(line);
  ASSERT_FALSE(header.ok()) << line;
  EXPECT_EQ(header.status().code(), absl::StatusCode::kInvalidArgument) << line;
  EXPECT_NE(header.status().message().find(needle), absl::string_view::npos)
      << line << " -> " << header.status().message();
}

TEST(Y4mHeaderTest, BadHeadersNameTheTag) {
  ExpectErrorNaming("YUV4MPEG W4 H4", "YUV4MPEG2");
  ExpectErrorNaming("", "YUV4MPEG2");
  ExpectErrorNaming("YUV4MPEG2 W0 H4", "'W0'");
  ExpectErrorNaming("YUV4MPEG2 W-4 H4", "'W-4'");
  ExpectErrorNaming("YUV4MPEG2 W4 H99999", "'H99999'");
  ExpectErrorNaming("YUV4MPEG2 W4 Habc", "'Habc'");
  ExpectErrorNaming("YUV4MPEG2 H4", "W (width)");
  ExpectErrorNaming("YUV4MPEG2 W4", "H (height)");
  ExpectErrorNaming("YUV4MPEG2 W4 H4 F25", "'F25'");
  ExpectErrorNaming("YUV4MPEG2 W4 H4 F25:0", "'F25:0'");
  ExpectErrorNaming("YUV4MPEG2 W4 H4 Ix", "'Ix'");
  ExpectErrorNaming("YUV4MPEG2 W4 H4 A1", "'A1'");
  ExpectErrorNaming("YUV4MPEG2 W4 H4 C411", "'C411'");
  ExpectErrorNaming("YUV4MPEG2 W4 H4 C444alpha", "'C444alpha'");
  ExpectErrorNaming("YUV4MPEG2 W4 H4 C420p17", "'C420p17'");
  ExpectErrorNaming("YUV4MPEG2 W4 H4 C420p8", "'C420p8'");
  ExpectErrorNaming("YUV4MPEG2 W4 H4 XCOLORRANGE=STUDIO", "'XCOLORRANGE=STUDIO'");
  ExpectErrorNaming("YUV4MPEG2 W4 H4 Z1", "'Z1'");
  ExpectErrorNaming("YUV4MPEG2 W4 H4 C420p10 XYSCSS=444P10", "XYSCSS");
}

TEST(Y4mHeaderTest, IgnoresUnknownExtensionsAndExtraSpaces) {
  absl::StatusOr<Y4mHeader> header = ParseY4mHeader("YUV4MPEG2  W4 H2  XFOO=bar C444 ");
  ASSERT_TRUE(header.ok()) << header.status();
  EXPECT_EQ(header->geometry, (FrameGeometry{4, 2, {ChromaLayout::k444, 8}}));
}

}  // namespace
}  // namespace exactq
