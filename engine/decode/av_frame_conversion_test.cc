// The colour fields of a decoded picture hold whatever number the bitstream gave, also
// ones FFmpeg's enums do not name; they are read as numbers (no enum load, which UBSan
// reports: the decode fuzzer found one, tests/fuzz/decode_regressions/) and refused or
// passed by value.
#include "engine/decode/av_frame_conversion.h"

#include <cstring>
#include <string>

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

}  // namespace
}  // namespace exactq::decode::internal
