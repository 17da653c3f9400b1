// A sequential host model of the device walk: windows of same-plan chunks composed in
// one step, the longest accepted prefix, and the re-plan of a refused chunk in 32-term
// sub-chunks under the exact frame, with the device's scans and reductions replaced by
// loops. Test-only.
//
// The device (internal/event_walk*.cuh) organises the same decisions differently (pieces
// of predicted-accepted chunks, transitions prepared in parallel), but the counts are
// functions of the terms and the plan alone: a chunk is refused exactly when its summary
// under its plan fails the check against the exact sum before it, and a sub-chunk of a
// refused chunk goes one by one exactly when its summary under the exact sum's frame fails.
// walk_windows is reported as the number of runs of chunks with one plan plus the number
// of refused chunks, on the device and here.
//
// Two uses: a host test runs it against the loop on every fixture (the walk's algorithm,
// checked where no GPU is needed), and the CUDA parity test compares the device's
// fallback counts with it under plans that do not depend on approximate sums, which
// catches kernel bugs that happen not to change the result.
//
//   std::vector<int> plan = ModelPlan(n, PlanMode::kFixedFrame, 16);
//   OrderedSumStats stats;
//   double s = ModelDeviceWalk(terms.data(), n, plan, &stats);
#ifndef EXACTQ_ENGINE_EXACT_TESTING_ORDERED_SUM_DEVICE_MODEL_H_
#define EXACTQ_ENGINE_EXACT_TESTING_ORDERED_SUM_DEVICE_MODEL_H_

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

#endif  // EXACTQ_ENGINE_EXACT_TESTING_ORDERED_SUM_DEVICE_MODEL_H_
