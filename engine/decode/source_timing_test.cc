#include "engine/decode/source_timing.h"

#include "gtest/gtest.h"

namespace exactq {
namespace {

SourceTiming Timing(int64_t num, int64_t den, double start) {
  SourceTiming t;
  t.rate_num = num;
  t.rate_den = den;
  t.start_seconds = start;
  t.start_known = true;
  return t;
}

TEST(SourceTimingTest, SameRateAndStartPair) {
  EXPECT_TRUE(CheckSourcesPair(Timing(24000, 1001, 0), Timing(24000, 1001, 0.01)).ok());
  EXPECT_TRUE(CheckSourcesPair(Timing(25, 1, 0), Timing(50, 2, 0)).ok());
}

TEST(SourceTimingTest, DifferentRatesAreRefusedNamingBoth) {
  absl::Status s = CheckSourcesPair(Timing(24, 1, 0), Timing(25, 1, 0));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("24/1"), std::string::npos) << s;
  EXPECT_NE(s.message().find("25/1"), std::string::npos) << s;
}

TEST(SourceTimingTest, StartOffsetOfAFrameIsRefused) {
  absl::Status s = CheckSourcesPair(Timing(24, 1, 0), Timing(24, 1, 1.0 / 24));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("start at different times"), std::string::npos) << s;
}

TEST(SourceTimingTest, UnknownTimingTakesTheOther) {
  SourceTiming raw;  // raw YUV or an elementary stream
  EXPECT_TRUE(CheckSourcesPair(raw, Timing(30, 1, 5)).ok());
  EXPECT_TRUE(CheckSourcesPair(Timing(30, 1, 5), raw).ok());
}

}  // namespace
}  // namespace exactq
