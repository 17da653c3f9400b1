// Plane SSE throughput at 8 and 16 bits on a 3840x2160 luma plane.
//
//   bazel run -c opt //engine/metrics/psnr:plane_sse_benchmark

#include <cstdint>
#include <vector>

#include "benchmark/benchmark.h"
#include "engine/metrics/psnr/plane_sse.h"

namespace exactq {
namespace {

constexpr size_t kSamples = size_t{3840} * 2160;

// Deterministic, not constant: every difference and square is exercised.
template <typename Sample>
std::vector<Sample> Plane(uint32_t multiplier, uint32_t mask) {
  std::vector<Sample> plane(kSamples);
  for (size_t i = 0; i < kSamples; ++i) {
    plane[i] = static_cast<Sample>((i * multiplier) & mask);
  }
  return plane;
}

void BM_SumSquaredError8(benchmark::State& state) {
  const std::vector<uint8_t> ref = Plane<uint8_t>(7, 0xff);
  const std::vector<uint8_t> dist = Plane<uint8_t>(13, 0xff);
  for (auto _ : state) {
    benchmark::DoNotOptimize(SumSquaredError8(ref.data(), dist.data(), kSamples));
  }
  state.SetItemsProcessed(state.iterations() * kSamples);
}
BENCHMARK(BM_SumSquaredError8);

void BM_SumSquaredError16(benchmark::State& state) {
  const std::vector<uint16_t> ref = Plane<uint16_t>(7, 0xffff);
  const std::vector<uint16_t> dist = Plane<uint16_t>(31, 0xffff);
  for (auto _ : state) {
    benchmark::DoNotOptimize(SumSquaredError16(ref.data(), dist.data(), kSamples));
  }
  state.SetItemsProcessed(state.iterations() * kSamples);
}
BENCHMARK(BM_SumSquaredError16);

}  // namespace
}  // namespace exactq

BENCHMARK_MAIN();
