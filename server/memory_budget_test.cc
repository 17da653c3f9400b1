#include "server/memory_budget.h"

#include <chrono>
#include <optional>
#include <thread>

#include "gtest/gtest.h"

namespace exactq::server {
namespace {

TEST(MemoryBudgetTest, RefusesOverTheLimitAndReleases) {
  MemoryBudget budget(100);
  auto a = budget.Reserve(60);
  ASSERT_TRUE(a.ok());
  auto b = budget.Reserve(41);
  EXPECT_EQ(b.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(b.status().message().find("max_buffered_bytes=100"), absl::string_view::npos);
  {
    auto c = budget.Reserve(40);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(budget.reserved(), 100u);
  }
  EXPECT_EQ(budget.reserved(), 60u);
  auto huge = budget.Reserve(1000);
  EXPECT_NE(huge.status().message().find("alone exceeds"), absl::string_view::npos);
}

TEST(MemoryBudgetTest, WaitsUntilMemoryIsReleased) {
  MemoryBudget budget(100);
  std::optional<MemoryBudget::Reservation> held;
  held.emplace(*budget.Reserve(80));
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    held.reset();
  });
  auto waited = budget.ReserveWhenAvailable(60, [] { return false; });
  releaser.join();
  ASSERT_TRUE(waited.ok());
  EXPECT_EQ(budget.reserved(), 60u);
  EXPECT_EQ(budget.ReserveWhenAvailable(50, [] { return true; }).status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(budget.ReserveWhenAvailable(101, [] { return false; }).status().code(),
            absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace exactq::server
