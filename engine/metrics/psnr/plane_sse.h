// Plane SSE: the sum of squared sample differences between two planes, in uint64.
//
// This is the only per-sample work of PSNR. The sum is an integer, so it is exact and
// independent of the order of additions: any backend (SIMD, threads, CUDA) that adds
// the same squares gets the same number, and the double arithmetic that follows
// (psnr_math.h) runs once per plane on the host. Bounds: a square is below 2^32 at 16
// bits and a plane has at most 2^28 samples, so the sum stays below 2^60.

#ifndef EXACTQ_ENGINE_METRICS_PSNR_PLANE_SSE_H_
#define EXACTQ_ENGINE_METRICS_PSNR_PLANE_SSE_H_

#include <cstddef>
#include <cstdint>

#include "engine/format/frame.h"

namespace exactq {

// Sum over i < count of (ref[i] - dist[i])^2.
uint64_t SumSquaredError8(const uint8_t* ref, const uint8_t* dist, size_t count);
uint64_t SumSquaredError16(const uint16_t* ref, const uint16_t* dist, size_t count);

// The SSE of one plane of two frames of the same geometry.
uint64_t PlaneSse(const Frame& ref, const Frame& dist, int plane);

}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_PSNR_PLANE_SSE_H_
