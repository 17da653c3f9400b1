#include "engine/format/pixel_format.h"

#include <string>

#include "gtest/gtest.h"

namespace exactq {
namespace {

TEST(PixelFormatTest, ParsesFfmpegNames) {
  struct Case {
    const char* name;
    ChromaLayout layout;
    int bit_depth;
  };
  const Case cases[] = {
      {"yuv420p", ChromaLayout::k420, 8},      {"yuv422p", ChromaLayout::k422, 8},
      {"yuv444p", ChromaLayout::k444, 8},      {"gray", ChromaLayout::k400, 8},
      {"yuv420p10le", ChromaLayout::k420, 10}, {"yuv422p10le", ChromaLayout::k422, 10},
      {"yuv444p12le", ChromaLayout::k444, 12}, {"yuv420p16le", ChromaLayout::k420, 16},
      {"yuv444p16le", ChromaLayout::k444, 16}, {"gray10le", ChromaLayout::k400, 10},
      {"gray16le", ChromaLayout::k400, 16},    {"yuv420p9le", ChromaLayout::k420, 9},
      {"yuv444p11le", ChromaLayout::k444, 11}, {"YUV420P10LE", ChromaLayout::k420, 10},
  };
  for (const Case& c : cases) {
    absl::StatusOr<PixelFormat> format = ParsePixelFormat(c.name);
    ASSERT_TRUE(format.ok()) << c.name << ": " << format.status();
    EXPECT_EQ(format->layout, c.layout) << c.name;
    EXPECT_EQ(format->bit_depth, c.bit_depth) << c.name;
  }
}

TEST(PixelFormatTest, NameRoundTripsForEveryLayoutAndDepth) {
  for (ChromaLayout layout : {ChromaLayout::k400, ChromaLayout::k420, ChromaLayout::k422, ChromaLayout::k444}) {
    for (int depth = kMinBitDepth; depth <= kMaxBitDepth; ++depth) {
      const PixelFormat format{layout, depth};
      const std::string name = PixelFormatName(format);
      absl::StatusOr<PixelFormat> parsed = ParsePixelFormat(name);
      ASSERT_TRUE(parsed.ok()) << name << ": " << parsed.status();
      EXPECT_EQ(*parsed, format) << name;
    }
  }
  EXPECT_EQ(PixelFormatName({ChromaLayout::k400, 8}), "gray");
  EXPECT_EQ(PixelFormatName({ChromaLayout::k400, 12}), "gray12le");
  EXPECT_EQ(PixelFormatName({ChromaLayout::k422, 10}), "yuv422p10le");
}

TEST(PixelFormatTest, RejectsWhatIsNotPlanarLittleEndianYuv) {
  for (const char* name : {"", "yuv420p10be", "nv12", "yuyv422", "yuva420p", "yuv420p8le", "yuv420p17le",
                           "yuv420p010le", "yuv420p10", "gray8", "rgb24", "yuv411p", "yuv420p+10le"}) {
    absl::StatusOr<PixelFormat> format = ParsePixelFormat(name);
    EXPECT_FALSE(format.ok()) << name;
    EXPECT_EQ(format.status().code(), absl::StatusCode::kInvalidArgument) << name;
  }
  EXPECT_NE(ParsePixelFormat("yuv420p10be").status().message().find("big-endian"), absl::string_view::npos);
}

TEST(PixelFormatTest, LayoutProperties) {
  EXPECT_EQ(PlaneCount(ChromaLayout::k400), 1);
  EXPECT_EQ(PlaneCount(ChromaLayout::k420), 3);
  EXPECT_EQ(ChromaShiftX(ChromaLayout::k420), 1);
  EXPECT_EQ(ChromaShiftY(ChromaLayout::k420), 1);
  EXPECT_EQ(ChromaShiftX(ChromaLayout::k422), 1);
  EXPECT_EQ(ChromaShiftY(ChromaLayout::k422), 0);
  EXPECT_EQ(ChromaShiftX(ChromaLayout::k444), 0);
  EXPECT_EQ(ChromaShiftY(ChromaLayout::k444), 0);
}

TEST(PixelFormatTest, ValidatesBitDepth) {
  EXPECT_TRUE(ValidatePixelFormat({ChromaLayout::k420, 8}).ok());
  EXPECT_TRUE(ValidatePixelFormat({ChromaLayout::k420, 16}).ok());
  EXPECT_EQ(ValidatePixelFormat({ChromaLayout::k420, 7}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidatePixelFormat({ChromaLayout::k420, 17}).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace exactq
