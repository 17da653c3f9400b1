#include "engine/metrics/psnr/plane_sse.h"

#include <vector>

#include "gtest/gtest.h"

namespace exactq {
namespace {

TEST(PlaneSseTest, SmallSumsByHand) {
  const uint8_t ref8[] = {10, 20, 30, 255};
  const uint8_t dist8[] = {13, 16, 30, 0};
  // 3^2 + 4^2 + 0 + 255^2 = 9 + 16 + 65025
  EXPECT_EQ(SumSquaredError8(ref8, dist8, 4), 65050u);
  EXPECT_EQ(SumSquaredError8(ref8, dist8, 0), 0u);

  const uint16_t ref16[] = {0, 65535, 1000};
  const uint16_t dist16[] = {65535, 0, 1023};
  // 2 * 65535^2 + 23^2
  EXPECT_EQ(SumSquaredError16(ref16, dist16, 3), 2ull * 4294836225ull + 529);
}

// 200000 samples of error 255: 13,005,000,000 > 2^32, spread over several 2^16 blocks.
TEST(PlaneSseTest, EightBitSumCrossesBlocksWithoutOverflow) {
  const size_t count = 200000;
  std::vector<uint8_t> ref(count, 255);
  std::vector<uint8_t> dist(count, 0);
  EXPECT_EQ(SumSquaredError8(ref.data(), dist.data(), count), 200000ull * 65025);
}

// A whole 16-bit plane at full-scale error: 4096 * (65535^2) > 2^32.
TEST(PlaneSseTest, SixteenBitFullScale) {
  const size_t count = 4096;
  std::vector<uint16_t> ref(count, 65535);
  std::vector<uint16_t> dist(count, 0);
  EXPECT_EQ(SumSquaredError16(ref.data(), dist.data(), count), 4096ull * 4294836225ull);
}

TEST(PlaneSseTest, PlaneSseReadsTheRightPlane) {
  absl::StatusOr<Frame> ref = Frame::Create({3, 3, {ChromaLayout::k420, 12}});
  ASSERT_TRUE(ref.ok());
  Frame dist = *ref;
  dist.set_sample(2, 1, 1, 5);  // Cr, 2x2
  EXPECT_EQ(PlaneSse(*ref, dist, 0), 0u);
  EXPECT_EQ(PlaneSse(*ref, dist, 1), 0u);
  EXPECT_EQ(PlaneSse(*ref, dist, 2), 25u);
}

}  // namespace
}  // namespace exactq
