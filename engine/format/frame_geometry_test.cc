#include "engine/format/frame_geometry.h"

#include "gtest/gtest.h"

namespace exactq {
namespace {

TEST(FrameGeometryTest, EvenSize420EightBit) {
  const FrameGeometry g{176, 144, {ChromaLayout::k420, 8}};
  ASSERT_TRUE(ValidateGeometry(g).ok());
  EXPECT_EQ(g.plane_count(), 3);
  EXPECT_EQ(g.plane_width(0), 176);
  EXPECT_EQ(g.plane_height(0), 144);
  EXPECT_EQ(g.plane_width(1), 88);
  EXPECT_EQ(g.plane_height(2), 72);
  EXPECT_EQ(g.bytes_per_sample(), 1);
  EXPECT_EQ(g.plane_offset(0), 0u);
  EXPECT_EQ(g.plane_offset(1), 176u * 144);
  EXPECT_EQ(g.plane_offset(2), 176u * 144 + 88 * 72);
  EXPECT_EQ(g.frame_bytes(), 176u * 144 * 3 / 2);
  EXPECT_EQ(g.max_sample_value(), 255u);
}

// The corpus's p17x33 case: ffmpeg's Y4M frames are 17*33 + 2*9*17 = 867 bytes.
TEST(FrameGeometryTest, OddSizeRoundsChromaUp) {
  const FrameGeometry g420{17, 33, {ChromaLayout::k420, 8}};
  EXPECT_EQ(g420.plane_width(1), 9);
  EXPECT_EQ(g420.plane_height(1), 17);
  EXPECT_EQ(g420.frame_bytes(), 867u);

  const FrameGeometry g422{641, 359, {ChromaLayout::k422, 10}};
  EXPECT_EQ(g422.plane_width(2), 321);
  EXPECT_EQ(g422.plane_height(2), 359);
  EXPECT_EQ(g422.frame_bytes(), (641u * 359 + 2u * 321 * 359) * 2);

  const FrameGeometry g444{1, 1, {ChromaLayout::k444, 8}};
  EXPECT_EQ(g444.plane_width(1), 1);
  EXPECT_EQ(g444.frame_bytes(), 3u);
}

TEST(FrameGeometryTest, LumaOnlyHasOnePlane) {
  const FrameGeometry g{64, 48, {ChromaLayout::k400, 12}};
  EXPECT_EQ(g.plane_count(), 1);
  EXPECT_EQ(g.frame_bytes(), 64u * 48 * 2);
  EXPECT_EQ(g.max_sample_value(), 4095u);
}

TEST(FrameGeometryTest, SixteenBitPeak) {
  const FrameGeometry g{8, 8, {ChromaLayout::k444, 16}};
  EXPECT_EQ(g.max_sample_value(), 65535u);
  EXPECT_EQ(g.bytes_per_sample(), 2);
  EXPECT_EQ(g.frame_bytes(), 8u * 8 * 3 * 2);
}

TEST(FrameGeometryTest, ValidationNamesTheField) {
  const auto message = [](const FrameGeometry& g) { return std::string(ValidateGeometry(g).message()); };
  EXPECT_NE(message({0, 10, {}}).find("width"), std::string::npos);
  EXPECT_NE(message({kMaxFrameDimension + 1, 10, {}}).find("width"), std::string::npos);
  EXPECT_NE(message({10, -1, {}}).find("height"), std::string::npos);
  EXPECT_NE(message({10, 10, {ChromaLayout::k420, 17}}).find("bit depth"), std::string::npos);
  EXPECT_EQ(ValidateGeometry({10, 10, {ChromaLayout::k420, 7}}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(ValidateGeometry({kMaxFrameDimension, 1, {ChromaLayout::k420, 16}}).ok());
}

TEST(FrameGeometryTest, Description) {
  EXPECT_EQ(GeometryDescription({1920, 1080, {ChromaLayout::k420, 10}}), "1920x1080 yuv420p10le");
}

}  // namespace
}  // namespace exactq
