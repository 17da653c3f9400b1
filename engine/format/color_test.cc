#include "engine/format/color.h"

#include "gtest/gtest.h"

namespace exactq {
namespace {

TEST(ColorTest, RangeNamesRoundTripAndAcceptFfmpegSpellings) {
  for (ColorRange range : {ColorRange::kLimited, ColorRange::kFull}) {
    EXPECT_EQ(*ParseColorRange(ColorRangeName(range)), range);
  }
  EXPECT_EQ(*ParseColorRange("tv"), ColorRange::kLimited);
  EXPECT_EQ(*ParseColorRange("LIMITED"), ColorRange::kLimited);
  EXPECT_EQ(*ParseColorRange("pc"), ColorRange::kFull);
  EXPECT_EQ(*ParseColorRange("jpeg"), ColorRange::kFull);
  EXPECT_EQ(ParseColorRange("studio").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ColorTest, MatrixNamesRoundTripAndAcceptBt601Aliases) {
  for (ColorMatrix matrix : {ColorMatrix::kBt709, ColorMatrix::kBt601, ColorMatrix::kBt2020Ncl}) {
    EXPECT_EQ(*ParseColorMatrix(ColorMatrixName(matrix)), matrix);
  }
  EXPECT_EQ(*ParseColorMatrix("smpte170m"), ColorMatrix::kBt601);
  EXPECT_EQ(*ParseColorMatrix("bt470bg"), ColorMatrix::kBt601);
  EXPECT_EQ(ParseColorMatrix("bt2020c").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace exactq
