// The colour fields of a decoded picture hold whatever number the bitstream gave, also
// ones FFmpeg's enums do not name; they are read as numbers (no enum load, which UBSan
// reports: the decode fuzzer found one, tests/fuzz/decode_regressions/) and refused or
// passed by value.
#include "engine/decode/av_frame_conversion.h"

#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"

extern "C" {
#include <libavutil/frame.h>
}

namespace exactq::decode::internal {
namespace {

template <typename Field>
void SetRaw(Field* field, int value) {
  static_assert(sizeof(Field) == sizeof(int));
  std::memcpy(field, &value, sizeof value);
}

class ColourFromAvTest : public ::testing::Test {
 protected:
  void SetUp() override { picture_ = av_frame_alloc(); }
  void TearDown() override { av_frame_free(&picture_); }
  AVFrame* picture_ = nullptr;
};

TEST_F(ColourFromAvTest, UndefinedPrimariesAndTransferPassUndefinedMatrixIsRefusedByNumber) {
  SetRaw(&picture_->color_primaries, 240);
  SetRaw(&picture_->color_trc, 200);
  SetRaw(&picture_->color_range, 77);
  absl::StatusOr<AvColour> colour = ColourFromAv(*picture_);
  ASSERT_TRUE(colour.ok()) << colour.status();
  EXPECT_FALSE(colour->matrix.has_value());
  EXPECT_FALSE(colour->range.has_value());

  SetRaw(&picture_->colorspace, 240);
  colour = ColourFromAv(*picture_);
  EXPECT_EQ(colour.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(std::string(colour.status().message()).find("matrix is the undefined value 240"), std::string::npos)
      << colour.status();
}

TEST_F(ColourFromAvTest, DefinedValuesKeepTheirMeaningAndNames) {
  SetRaw(&picture_->colorspace, AVCOL_SPC_BT709);
  SetRaw(&picture_->color_range, AVCOL_RANGE_MPEG);
  absl::StatusOr<AvColour> colour = ColourFromAv(*picture_);
  ASSERT_TRUE(colour.ok()) << colour.status();
  EXPECT_EQ(colour->matrix, ColorMatrix::kBt709);
  EXPECT_EQ(colour->range, ColorRange::kLimited);

  SetRaw(&picture_->color_primaries, AVCOL_PRI_BT2020);
  colour = ColourFromAv(*picture_);
  EXPECT_EQ(colour.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(std::string(colour.status().message()).find("primaries is bt2020"), std::string::npos) << colour.status();
}

// Each plane as {surface plane, step, offset, shift}.
std::vector<std::array<int, 4>> Fields(const std::vector<SurfacePlane>& layout) {
  std::vector<std::array<int, 4>> out;
  for (const SurfacePlane& p : layout) out.push_back({p.surface_plane, p.step, p.offset, p.shift});
  return out;
}

// Where the planar planes lie in the GPU decoder's surfaces, by the formats' definitions:
// NV12/P010/P016 hold Y, then U and V interleaved (U first); P010 and YUV444P16 keep a
// sample in the top bits of its 16-bit word.
TEST(SurfaceLayoutTest, NamesEachPlanesSourceStepOffsetAndShift) {
  const FrameGeometry nv12{64, 32, {ChromaLayout::k420, 8}};
  absl::StatusOr<std::vector<SurfacePlane>> layout = SurfaceLayout(AV_PIX_FMT_NV12, nv12);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(Fields(*layout), (std::vector<std::array<int, 4>>{{0, 1, 0, 0}, {1, 2, 0, 0}, {1, 2, 1, 0}}));

  const FrameGeometry p010{64, 32, {ChromaLayout::k420, 10}};
  layout = SurfaceLayout(AV_PIX_FMT_P010LE, p010);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(Fields(*layout), (std::vector<std::array<int, 4>>{{0, 1, 0, 6}, {1, 2, 0, 6}, {1, 2, 1, 6}}));

  const FrameGeometry yuv444_12{64, 32, {ChromaLayout::k444, 12}};
  layout = SurfaceLayout(AV_PIX_FMT_YUV444P16LE, yuv444_12);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(Fields(*layout), (std::vector<std::array<int, 4>>{{0, 1, 0, 4}, {1, 1, 0, 4}, {2, 1, 0, 4}}));

  // A surface that cannot hold the geometry is refused by name.
  EXPECT_EQ(SurfaceLayout(AV_PIX_FMT_NV12, p010).status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(SurfaceLayout(AV_PIX_FMT_YUV444P, nv12).status().code(), absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace exactq::decode::internal
