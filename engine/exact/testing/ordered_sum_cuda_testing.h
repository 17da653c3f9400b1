// Test support for the fused path: terms that a kernel computes on demand from their
// index (a TermSource), so the device sums them without ever storing them, while the
// host computes the very same doubles for the loop. Test-only.
//
//   std::vector<double> terms(n);
//   for (size_t i = 0; i < n; ++i) terms[i] = GeneratedTerm(i, n);
//   absl::StatusOr<double> got = SumGeneratedTermsOnDevice(n, &stats);  // == the loop over terms
#ifndef EXACTQ_ENGINE_EXACT_TESTING_ORDERED_SUM_CUDA_TESTING_H_
#define EXACTQ_ENGINE_EXACT_TESTING_ORDERED_SUM_CUDA_TESTING_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "engine/exact/ordered_sum.h"
#include "engine/exact/ordered_sum_algebra.h"

namespace exactq {
namespace exact {

// An SSIM-like signed term: w * num / den with one correctly rounded division (the same on
// host and device), negated from a third of the sequence on, so the sum climbs, crosses
// zero and ends negative.
EXACTQ_HD inline double GeneratedTerm(uint64_t i, uint64_t n) {
  uint64_t h = (i + 1) * 0x9e3779b97f4a7c15ull;
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 32;
  const double num = static_cast<double>(h & 0xfffff) + 1.0;
  const double den = static_cast<double>((h >> 20) & 0xffff) + 65536.0;
  const double term = 65536.0 * (num / den);
  return 3 * i >= n ? -term : term;
}

// OrderedSumCuda's pipeline instantiated with a TermSource that calls GeneratedTerm.
absl::StatusOr<double> SumGeneratedTermsOnDevice(size_t n, OrderedSumStats* stats);

// Sum k of a batch of kGeneratedBatch: GeneratedTerm itself, its negation times 0.75
// (the total crosses zero the other way), and its square (unsigned, wider range).
inline constexpr int kGeneratedBatch = 3;
EXACTQ_HD inline double GeneratedBatchTerm(uint64_t i, uint64_t n, int k) {
  const double t = GeneratedTerm(i, n);
  if (k == 0) return t;
  if (k == 1) return -t * 0.75;
  return t * t;
}

// What a batch of K segment sums left: status[k] is sum k's segment pipeline status (0:
// accepted, and sums[k] is then the loop's), one of these (engine/exact's kSegment*
// values, for host code; the .cu checks that they agree).
inline constexpr int32_t kBatchAccepted = 0;
inline constexpr int32_t kBatchRefused = 1;
inline constexpr int32_t kBatchOverflow = 2;
inline constexpr int32_t kBatchUnstaged = 3;
template <int K>
struct BatchSumsOnDevice {
  double sums[K];
  int32_t status[K];
};

// The batched segment pipeline (EnqueueSegmentedSumsFromChunkSums) over the
// kGeneratedBatch sums of GeneratedBatchTerm, computed on demand; the chunk sums come from
// a plain kernel, as a metric's terms kernel would leave them.
using GeneratedBatchSums = BatchSumsOnDevice<kGeneratedBatch>;
absl::StatusOr<GeneratedBatchSums> SumGeneratedBatchOnDevice(size_t n);

// A batch of MappedArrayTerms over two stored arrays (the chunk stage copies the stored
// values and maps them as it reads them): sums 0, 1, 3 and 4 read array A (GeneratedTerm)
// through different maps, sum 2 reads array B (GeneratedTerm squared). Sum 4's map, the
// square, promises terms >= 0 (kNonNegativeTerms, through VisitMap): the strided form's
// shorter per-term step.
inline constexpr int kStoredBatch = 5;
EXACTQ_HD inline double StoredBatchValue(uint64_t i, uint64_t n, int k) {  // the stored double
  const double t = GeneratedTerm(i, n);
  return k == 2 ? t * t : t;
}
EXACTQ_HD inline double StoredBatchMap(int k, double x) {  // term k of a stored x
  if (k == 1) return -x * 0.75;
  if (k == 3) return (x * x) * x;
  if (k == 4) return x * x;
  return x;
}
EXACTQ_HD inline double StoredBatchTerm(uint64_t i, uint64_t n, int k) {
  return StoredBatchMap(k, StoredBatchValue(i, n, k));
}
using StoredBatchSums = BatchSumsOnDevice<kStoredBatch>;
// slab_chunks > 0 (a multiple of 32): the chunk stage in slabs of that many chunks
// (EnqueueSegmentedSumsChunkStage, slab after slab, then EnqueueSegmentedSumsFinish).
// skipped_slab >= 0: a complete run in slabs first, then, on the same workspaces (whose
// records are that run's), a run that leaves out slab number skipped_slab.
absl::StatusOr<StoredBatchSums> SumStoredBatchOnDevice(size_t n, int64_t slab_chunks = 0, int64_t skipped_slab = -1);

// A batch of sums the segment pipeline cannot take, beside one it can, over terms in
// device memory: kAdversarialBenign (GeneratedTerm: accepted), kAdversarialOscillating
// (the sum leaps between about 0 and 2^33 at every term: every lane of every chunk
// crosses binades, more than the pools hold) and kAdversarialWrongAdvice (GeneratedTerm,
// its chunk sums given 2^30 times too large, so every chunk is planned 30 binades off and
// the walk's checks refuse).
inline constexpr int kAdversarialBatch = 3;
inline constexpr int kAdversarialBenign = 0;
inline constexpr int kAdversarialOscillating = 1;
inline constexpr int kAdversarialWrongAdvice = 2;
EXACTQ_HD inline double AdversarialBatchTerm(uint64_t i, uint64_t n, int k) {
  if (k == kAdversarialOscillating) return i % 2 == 0 ? 0x1p33 : -0x1p33 + 1.0;
  return GeneratedTerm(i, n);
}
using AdversarialBatchSums = BatchSumsOnDevice<kAdversarialBatch>;
absl::StatusOr<AdversarialBatchSums> SumAdversarialBatchOnDevice(size_t n, int64_t slab_chunks = 0);

}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_TESTING_ORDERED_SUM_CUDA_TESTING_H_
