#include "engine/runtime/device_pool.h"

#include <set>
#include <thread>

#include "gtest/gtest.h"

namespace exactq {
namespace {

using std::chrono::seconds;

std::vector<GpuDevice> Devices(int n) {
  std::vector<GpuDevice> out;
  for (int i = 0; i < n; ++i) out.push_back({i, "Test GPU", "9.0", 1ull << 30});
  return out;
}

// A pool whose clock the test moves.
struct PoolWithClock {
  explicit PoolWithClock(int n, int max_failures_in_row = 5) : pool(Devices(n), Options(max_failures_in_row)) {}
  DevicePool::Options Options(int max_failures_in_row) {
    DevicePool::Options o;
    o.retry_after = seconds(10);
    o.max_retry_after = seconds(60);
    o.max_failures_in_row = max_failures_in_row;
    o.now = [this] { return now; };
    return o;
  }
  DevicePool::Clock::time_point now{};
  DevicePool pool;
};

TEST(DevicePoolTest, HandsOutUsableDevicesInTurn) {
  PoolWithClock p(3);
  EXPECT_EQ(p.pool.configured(), 3);
  EXPECT_EQ(p.pool.usable(), 3);
  EXPECT_EQ(p.pool.NextDevice()->index, 0);
  EXPECT_EQ(p.pool.NextDevice()->index, 1);
  EXPECT_EQ(p.pool.NextDevice()->index, 2);
  EXPECT_EQ(p.pool.NextDevice()->index, 0);
  EXPECT_FALSE(p.pool.AllLost());
}

TEST(DevicePoolTest, ATransientFailureTakesTheDeviceOutUntilItsBackOffEnds) {
  PoolWithClock p(2);
  p.pool.ReportFailure(0, DeviceFault::kTransient, "cudaErrorLaunchOutOfResources");
  EXPECT_EQ(p.pool.usable(), 1);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(p.pool.NextDevice()->index, 1);
  EXPECT_FALSE(p.pool.IsLost(0));  // streams already on it keep it
  EXPECT_NE(p.pool.UnavailableReason().find("cuda:0 cooling_down for 10 s (cudaErrorLaunchOutOfResources)"),
            std::string::npos)
      << p.pool.UnavailableReason();
  p.now += seconds(10);
  EXPECT_EQ(p.pool.usable(), 2);
  std::set<int> seen;
  for (int i = 0; i < 2; ++i) seen.insert(p.pool.NextDevice()->index);
  EXPECT_EQ(seen, (std::set<int>{0, 1}));
}

TEST(DevicePoolTest, FailuresInARowDoubleTheBackOffAndASuccessClearsThem) {
  PoolWithClock p(1);
  p.pool.ReportFailure(0, DeviceFault::kTransient, "a");
  p.now += seconds(10);
  ASSERT_TRUE(p.pool.NextDevice().has_value());           // on probation
  p.pool.ReportFailure(0, DeviceFault::kTransient, "b");  // second in a row: 20 s
  p.now += seconds(19);
  EXPECT_FALSE(p.pool.NextDevice().has_value());
  p.now += seconds(1);
  ASSERT_TRUE(p.pool.NextDevice().has_value());
  p.pool.ReportSuccess(0);
  EXPECT_EQ(p.pool.Snapshot()[0].failures_in_row, 0);
  EXPECT_EQ(p.pool.Snapshot()[0].failures_total, 2);
  p.pool.ReportFailure(0, DeviceFault::kTransient, "c");  // back to 10 s
  p.now += seconds(10);
  EXPECT_TRUE(p.pool.NextDevice().has_value());
}

TEST(DevicePoolTest, BackOffIsCapped) {
  PoolWithClock p(1, /*max_failures_in_row=*/100);
  for (int i = 0; i < 20; ++i) p.pool.ReportFailure(0, DeviceFault::kTransient, "x");
  p.now += seconds(60);
  EXPECT_TRUE(p.pool.NextDevice().has_value());
}

TEST(DevicePoolTest, APoisonedDeviceIsLostForGood) {
  PoolWithClock p(2);
  p.pool.ReportFailure(1, DeviceFault::kPoisoned, "cudaErrorIllegalAddress");
  EXPECT_TRUE(p.pool.IsLost(1));
  EXPECT_FALSE(p.pool.AllLost());
  p.now += std::chrono::hours(24);
  p.pool.ReportSuccess(1);  // a late success from a frame that finished first changes nothing
  for (int i = 0; i < 4; ++i) EXPECT_EQ(p.pool.NextDevice()->index, 0);
  EXPECT_EQ(p.pool.usable(), 1);
  p.pool.ReportFailure(0, DeviceFault::kPoisoned, "cudaErrorLaunchFailure");
  EXPECT_TRUE(p.pool.AllLost());
  EXPECT_EQ(p.pool.usable(), 0);
  EXPECT_FALSE(p.pool.NextDevice().has_value());
  EXPECT_EQ(p.pool.UnavailableReason(),
            "no usable GPU: cuda:0 lost (cudaErrorLaunchFailure); cuda:1 lost (cudaErrorIllegalAddress)");
}

TEST(DevicePoolTest, ADeviceThatKeepsFailingIsLost) {
  PoolWithClock p(1, /*max_failures_in_row=*/3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(p.pool.IsLost(0));
    p.pool.ReportFailure(0, DeviceFault::kTransient, "again");
    p.now += std::chrono::minutes(5);
  }
  EXPECT_TRUE(p.pool.IsLost(0));
  EXPECT_TRUE(p.pool.AllLost());
}

TEST(DevicePoolTest, FailuresThatAreNotTheDevicesAndUnknownDevicesAreIgnored) {
  PoolWithClock p(1);
  p.pool.ReportFailure(0, DeviceFault::kNone, "input");
  p.pool.ReportFailure(7, DeviceFault::kPoisoned, "not ours");
  EXPECT_EQ(p.pool.usable(), 1);
  EXPECT_TRUE(p.pool.IsLost(7));  // a device the pool never had is never usable
}

TEST(DevicePoolTest, AnEmptyPoolIsNotLostAndSaysWhy) {
  DevicePool pool({}, {}, "no usable GPU: no CUDA device is visible");
  EXPECT_FALSE(pool.AllLost());  // a CPU-only server is healthy
  EXPECT_EQ(pool.usable(), 0);
  EXPECT_FALSE(pool.NextDevice().has_value());
  EXPECT_EQ(pool.UnavailableReason(), "no usable GPU: no CUDA device is visible");
}

TEST(DevicePoolTest, ManyThreadsReportingAtOnceLeaveAConsistentState) {
  DevicePool pool(Devices(4), {});
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&pool, t] {
      for (int i = 0; i < 2000; ++i) {
        std::optional<GpuDevice> d = pool.NextDevice();
        if (!d.has_value()) continue;
        if (t == 0 && i == 1000) pool.ReportFailure(3, DeviceFault::kPoisoned, "poisoned");
        pool.ReportSuccess(d->index);
        (void)pool.IsLost(d->index);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_TRUE(pool.IsLost(3));
  EXPECT_EQ(pool.usable(), 3);
}

}  // namespace
}  // namespace exactq
