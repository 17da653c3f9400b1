#include "engine/metrics/psnr/plane_sse.h"

#include <algorithm>

namespace exactq {
namespace {

// 8-bit squares are at most 255^2 = 65025 < 2^16, so 2^16 of them fit a uint32.
// Summing a block in 32 bits lets the compiler use 32-bit vector lanes.
constexpr size_t kBlock8 = size_t{1} << 16;

uint32_t BlockSse8(const uint8_t* ref, const uint8_t* dist, size_t count) {
  uint32_t sum = 0;
  for (size_t i = 0; i < count; ++i) {
    const int32_t e = int32_t{ref[i]} - int32_t{dist[i]};
    sum += static_cast<uint32_t>(e * e);
  }
  return sum;
}

}  // namespace

uint64_t SumSquaredError8(const uint8_t* ref, const uint8_t* dist, size_t count) {
  uint64_t sum = 0;
  for (size_t start = 0; start < count; start += kBlock8) {
    const size_t n = std::min(kBlock8, count - start);
    sum += BlockSse8(ref + start, dist + start, n);
  }
  return sum;
}

uint64_t SumSquaredError16(const uint16_t* ref, const uint16_t* dist, size_t count) {
  uint64_t sum = 0;
  for (size_t i = 0; i < count; ++i) {
    // |e| <= 65535, so e*e < 2^32 fits uint32 (int32 would overflow at 16 bits).
    const int32_t e = int32_t{ref[i]} - int32_t{dist[i]};
    const uint32_t magnitude = static_cast<uint32_t>(e < 0 ? -e : e);
    sum += uint64_t{magnitude * magnitude};
  }
  return sum;
}

uint64_t PlaneSse(const Frame& ref, const Frame& dist, int plane) {
  const size_t count = ref.geometry().plane_samples(plane);
  if (ref.geometry().bytes_per_sample() == 1) {
    return SumSquaredError8(ref.plane8(plane), dist.plane8(plane), count);
  }
  return SumSquaredError16(ref.plane16(plane), dist.plane16(plane), count);
}

}  // namespace exactq
