#include "server/startup_self_check.h"

#include "engine/runtime/gpu_scorer.h"
#include "gtest/gtest.h"

namespace exactq::server {
namespace {

TEST(StartupSelfCheckTest, ACpuServerPasses) {
  DevicePool pool({}, DevicePool::Options{}, "no GPU here");
  EXPECT_TRUE(StartupSelfCheck(&pool));
}

// A device that cannot score the golden pairs (here: one that does not exist) is taken
// out of the pool for good, and the server still serves on what is left.
TEST(StartupSelfCheckTest, AGpuThatFailsTheCheckIsLost) {
  absl::StatusOr<std::vector<GpuDevice>> real = ListGpuDevices();
  const int bogus = real.ok() ? static_cast<int>(real->size()) + 7 : 7;
  DevicePool pool({GpuDevice{bogus, "not a GPU", "0.0", 0}}, DevicePool::Options{});
  EXPECT_TRUE(StartupSelfCheck(&pool));
  EXPECT_TRUE(pool.IsLost(bogus));
  EXPECT_EQ(pool.usable(), 0);
  EXPECT_NE(pool.Snapshot()[0].last_error.find("self-check"), std::string::npos) << pool.Snapshot()[0].last_error;
}

}  // namespace
}  // namespace exactq::server
