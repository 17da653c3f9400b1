#include "engine/platform/frames_in_flight.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace exactq {
namespace {

TEST(FramesInFlightTest, CountsNestedFramesPerDevice) {
  EXPECT_EQ(FramesInFlight(3), 0);
  {
    FrameInFlight first(3);
    EXPECT_EQ(first.in_flight(), 1);
    FrameInFlight second(3);
    EXPECT_EQ(second.in_flight(), 2);
    FrameInFlight elsewhere(4);  // another device's count
    EXPECT_EQ(elsewhere.in_flight(), 1);
    EXPECT_EQ(FramesInFlight(3), 2);
    EXPECT_EQ(FramesInFlight(4), 1);
  }
  EXPECT_EQ(FramesInFlight(3), 0);
  EXPECT_EQ(FramesInFlight(4), 0);
}

TEST(FramesInFlightTest, UncountedOrdinalsAreAlone) {
  FrameInFlight negative(-1);
  FrameInFlight high(kMaxCountedDevices);
  FrameInFlight high_again(kMaxCountedDevices);
  EXPECT_EQ(negative.in_flight(), 1);
  EXPECT_EQ(high_again.in_flight(), 1);
  EXPECT_EQ(FramesInFlight(kMaxCountedDevices), 0);
}

// Threads entering and leaving at once: every count a frame sees lies within 1 .. the
// number of threads, and the count returns to 0.
TEST(FramesInFlightTest, ThreadsLeaveTheCountAtZero) {
  constexpr int kThreads = 8;
  constexpr int kFrames = 20000;
  std::vector<std::thread> threads;
  std::vector<int> worst(kThreads, 0);
  std::vector<int> least(kThreads, kThreads + 1);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kFrames; ++i) {
        FrameInFlight frame(1);
        worst[t] = std::max(worst[t], frame.in_flight());
        least[t] = std::min(least[t], frame.in_flight());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_LE(worst[t], kThreads);
    EXPECT_GE(least[t], 1);
  }
  EXPECT_EQ(FramesInFlight(1), 0);
}

}  // namespace
}  // namespace exactq
