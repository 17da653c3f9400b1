// The vectorised host kernels of OrderedSumThreads (internal to ordered_sum.cc and its
// tests): approximate chunk sums and chunk summaries, four chunks at a time.
//
// The same source (cpu_kernels.inc) is compiled twice into a table of
// function pointers, as engine/metrics/ssimulacra2 does: kernels_generic.cc (baseline
// x86-64: 4-lane GCC vectors split into SSE2 halves) and kernels_avx2.cc (-mavx2, without
// -mfma). Lane j of a vector works on chunk j of a group of four consecutive chunks, and
// performs, in the same order, the IEEE operations of the scalar code it replaces:
//   ApproximateSums4  == ApproximateChunkSum (below) of each chunk, bit for bit;
//   Summarize4        == SummarizeTermsBinary64 (binary64_summaries.h) of each chunk: the
//                        same binary64 fold per lane (rint is computed another way, with
//                        the same value), and the same hand-over decision. A lane that
//                        hands over (a tie, a prefix at 2^53 or beyond, inf, NaN) is left
//                        to the caller, which forms it with SummarizeTermsFast (the
//                        integer fold), exactly as SummarizeTermsBinary64 would.
// So both tables give the scalar path's chunk sums and summaries, hence its plans, stats
// and bits (cpu_kernels_test.cc runs both against the scalar functions).
#ifndef EXACTQ_ENGINE_EXACT_ORDERED_SUM_CPU_KERNELS_H_
#define EXACTQ_ENGINE_EXACT_ORDERED_SUM_CPU_KERNELS_H_

#include <cstddef>
#include <cstdint>

#include "engine/exact/ordered_sum_algebra.h"

namespace exactq {
namespace exact {
namespace internal {

// An approximate sum in a fixed order: four interleaved partial sums, then their sum. Only
// the plan reads it; it is fixed so that plans and stats do not depend on the kernels.
inline double ApproximateChunkSum(const double* x, size_t n) {
  double a[4] = {0.0, 0.0, 0.0, 0.0};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    a[0] = a[0] + x[i];
    a[1] = a[1] + x[i + 1];
    a[2] = a[2] + x[i + 2];
    a[3] = a[3] + x[i + 3];
  }
  for (; i < n; ++i) a[0] = a[0] + x[i];
  return (a[0] + a[1]) + (a[2] + a[3]);
}

// Whether the kernels take chunks of this many terms: a positive multiple of 4 that fits
// SummarizeTermsBinary64's int length.
inline bool KernelChunk(int64_t chunk_terms) {
  return chunk_terms >= 4 && chunk_terms % 4 == 0 && chunk_terms <= (int64_t{1} << 30);
}

struct ChunkKernels {
  const char* isa;
  // sums[j] = ApproximateChunkSum(x + j * chunk, chunk) for j = 0..3; KernelChunk(chunk).
  void (*approximate_sums4)(const double* x, int64_t chunk, double sums[4]);
  // For j = 0..3 with FastFrame(frames[j]) for all four: the summary of
  // x[j*chunk .. (j+1)*chunk) under frames[j], written to out[j], unless bit j of the
  // result is set: then the binary64 fold handed that chunk over and out[j] is untouched.
  // `prefetch`, if not null, is where the next 4 * chunk terms this thread will read
  // start: their lines are requested while the fold computes (a hint; never read).
  int (*summarize4)(const double* x, int64_t chunk, const int frames[4], RunSummary out[4], const double* prefetch);
};

// Baseline x86-64 (SSE2).
const ChunkKernels& GenericChunkKernels();
// Requires AVX2 at run time (Avx2Supported()).
const ChunkKernels& Avx2ChunkKernels();
bool Avx2Supported();

}  // namespace internal
}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_ORDERED_SUM_CPU_KERNELS_H_
