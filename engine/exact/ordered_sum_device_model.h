// A sequential host model of the device walk (ordered_sum_kernels.cuh, OrderedWalk):
// the same windows of same-plan chunks, the same longest-accepted-prefix rule, the same
// re-plan of a refused chunk in 32-term sub-chunks under the exact frame, with the block
// scans and reductions replaced by loops. Test-only.
//
// Two uses: a host test runs it against the loop on every fixture (the walk's algorithm,
// checked where no GPU is needed), and the CUDA parity test compares the device's
// fallback counts with it under plans that do not depend on approximate sums, which
// catches kernel bugs that happen not to change the result.
//
//   std::vector<int> plan = ModelPlan(n, PlanMode::kFixedFrame, 16);
//   OrderedSumStats stats;
//   double s = ModelDeviceWalk(terms.data(), n, plan, &stats);
#ifndef EXACTQ_ENGINE_EXACT_ORDERED_SUM_DEVICE_MODEL_H_
#define EXACTQ_ENGINE_EXACT_ORDERED_SUM_DEVICE_MODEL_H_

#include <cstddef>
#include <vector>

#include "engine/exact/ordered_sum.h"

namespace exactq {
namespace exact {

inline constexpr int kModelChunkTerms = 1024;
inline constexpr int kModelSubchunkTerms = 32;
inline constexpr int kModelWindowChunks = 1024;

// The device's plan for modes that ignore the approximate prefix (kAllZero, kFixedFrame,
// kAllTermByTerm, and kOneBinadeHigh/kApproximatePrefix on an all-zero prefix). For the
// other modes pass approximate prefixes of your own.
std::vector<int> ModelPlan(size_t n, PlanMode mode, int fixed_frame);

// The host sequential prefix plan (what OrderedSumThreads uses).
std::vector<int> HostPrefixPlan(const double* terms, size_t n, PlanMode mode, int fixed_frame);

double ModelDeviceWalk(const double* terms, size_t n, const std::vector<int>& plan, OrderedSumStats* stats);

}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_ORDERED_SUM_DEVICE_MODEL_H_
