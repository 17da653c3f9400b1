#include "engine/runtime/runtime_config.h"

#include "gtest/gtest.h"

namespace exactq {
namespace {

TEST(RuntimeConfigTest, ParsesGpuLists) {
  EXPECT_FALSE(ParseGpuList("")->has_value());
  EXPECT_FALSE(ParseGpuList("all")->has_value());
  EXPECT_EQ(**ParseGpuList("none"), std::vector<int>{});
  EXPECT_EQ(**ParseGpuList("0,2"), (std::vector<int>{0, 2}));
  EXPECT_FALSE(ParseGpuList("0,x").ok());
  EXPECT_FALSE(ParseGpuList("-1").ok());
}

TEST(RuntimeConfigTest, ParsesFaults) {
  EXPECT_EQ(ParseFaultInjection("")->fail_gpu_after_frames, -1);
  absl::StatusOr<FaultInjection> both = ParseFaultInjection("gpu_fail_after=3,gpu_alloc_fail");
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->fail_gpu_after_frames, 3);
  EXPECT_TRUE(both->fail_gpu_allocations);
  EXPECT_EQ(both->lose_gpu_after_frames, -1);
  EXPECT_EQ(ParseFaultInjection("gpu_lost_after=0")->lose_gpu_after_frames, 0);
  EXPECT_FALSE(ParseFaultInjection("gpu_lost_after=-2").ok());
  EXPECT_FALSE(ParseFaultInjection("gpu_fail_after=x").ok());
  EXPECT_FALSE(ParseFaultInjection("melt").ok());
}

TEST(RuntimeConfigTest, GpuWaitNamesRoundTrip) {
  for (GpuWait wait : {GpuWait::kSpin, GpuWait::kYield, GpuWait::kBlock}) {
    absl::StatusOr<GpuWait> parsed = ParseGpuWait(GpuWaitName(wait));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, wait);
  }
  EXPECT_EQ(ParseGpuWait("busy").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseGpuWait("").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace exactq
