// A host thread waiting on an event made by CreateHostWaitEvent sleeps when host waits
// block and burns its core when they spin (skips without a GPU). The stream holds a
// host function that sleeps 300 ms before the event, so the wait lasts that long; the
// waiting thread's own CPU time tells how it waited.
#include "engine/platform/host_wait_event.h"

#include <cuda_runtime_api.h>
#include <time.h>

#include <chrono>
#include <thread>

#include "engine/platform/testing/cuda_device.h"
#include "gtest/gtest.h"

namespace exactq {
namespace {

constexpr double kWaitSeconds = 0.3;

double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// The waiting thread's CPU seconds over one wait of kWaitSeconds.
double CpuSecondsWaiting(bool block) {
  SetHostWaitsBlock(block);
  cudaStream_t stream = nullptr;
  cudaEvent_t done = nullptr;
  EXPECT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  EXPECT_EQ(CreateHostWaitEvent(&done), cudaSuccess);
  EXPECT_EQ(
      cudaLaunchHostFunc(
          stream, [](void*) { std::this_thread::sleep_for(std::chrono::duration<double>(kWaitSeconds)); }, nullptr),
      cudaSuccess);
  EXPECT_EQ(cudaEventRecord(done, stream), cudaSuccess);
  const double cpu0 = ThreadCpuSeconds();
  EXPECT_EQ(cudaEventSynchronize(done), cudaSuccess);
  const double cpu = ThreadCpuSeconds() - cpu0;
  cudaEventDestroy(done);
  cudaStreamDestroy(stream);
  SetHostWaitsBlock(true);
  return cpu;
}

TEST(HostWaitEventCudaTest, BlockingWaitsSleepAndSpinningWaitsBurnTheCore) {
  EXACTQ_SKIP_WITHOUT_CUDA_DEVICE();
  const double blocked = CpuSecondsWaiting(true);
  const double spun = CpuSecondsWaiting(false);
  std::printf("waiting %.0f ms: blocked %.1f ms of CPU, spinning %.1f ms\n", 1e3 * kWaitSeconds, 1e3 * blocked,
              1e3 * spun);
  EXPECT_LT(blocked, 0.1 * kWaitSeconds);
  EXPECT_GT(spun, 0.5 * kWaitSeconds);
}

}  // namespace
}  // namespace exactq
