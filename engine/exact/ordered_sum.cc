#include "engine/exact/ordered_sum.h"

#include <algorithm>
#include <cfloat>
#include <cstdint>
#include <system_error>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "engine/exact/ordered_sum_fast.h"

// The loop is the definition, and the fallback adds must be the same binary64 adds: no
// extended precision (x87) and no contraction.
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "exact sums need FLT_EVAL_METHOD == 0 (binary64 adds, e.g. SSE2 on x86-64)"
#endif

namespace exactq {
namespace exact {

double OrderedSumReference::Loop(const double* terms, size_t n) {
  double s = 0.0;
  for (size_t i = 0; i < n; ++i) s = s + terms[i];
  return s;
}

absl::StatusOr<double> OrderedSumReference::Sum(const double* terms, size_t n, OrderedSumStats* stats) {
  if (stats != nullptr) {
    *stats = OrderedSumStats{};
    stats->terms = static_cast<int64_t>(n);
    stats->terms_one_by_one = static_cast<int64_t>(n);
  }
  return Loop(terms, n);
}

RunSummary SummarizeTerms(const double* terms, size_t n, int frame) {
  RunSummary run = IdentityRun();
  for (size_t i = 0; i < n; ++i) AppendTerm(run, BitsOf(terms[i]), frame);
  return run;
}

namespace {

// SummarizeTerms through the binary64 fold of ordered_sum_fast.h (which hands ties and
// long paths to the binary64 increments, and those to the integer rule): the same
// summary, several times faster.
RunSummary SummarizeFast(const double* terms, size_t n, int frame) {
  if (n > static_cast<size_t>(INT32_MAX)) return SummarizeTerms(terms, n, frame);
  return SummarizeTermsBinary64(terms, static_cast<int>(n), frame);
}

// An approximate sum in a fixed order: four interleaved partial sums, then their sum.
double ApproximateSum(const double* x, size_t n) {
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

}  // namespace

void AddTermsByReplan(const double* terms, size_t n, int64_t subchunk_terms, double& s,
                      OrderedSumStats& stats) {
  const size_t step = static_cast<size_t>(std::max<int64_t>(1, subchunk_terms));
  for (size_t begin = 0; begin < n; begin += step) {
    const size_t len = std::min(step, n - begin);
    uint64_t bits = BitsOf(s);
    // The exact sum is known here, so its frame is the right plan; only a binade crossing
    // (or a zero crossing, an inf, a NaN) inside the sub-chunk makes the check refuse.
    const int frame = FrameOfBits(bits);
    const RunSummary run = SummarizeFast(terms + begin, len, frame);
    if (TryApplyRun(bits, run, frame)) {
      s = DoubleOf(bits);
      continue;
    }
    ++stats.subchunks_rejected;
    stats.terms_one_by_one += static_cast<int64_t>(len);
    for (size_t i = begin; i < begin + len; ++i) s = s + terms[i];
  }
}

namespace {

// Runs fn(first_chunk, end_chunk) over contiguous ranges on up to num_threads threads.
// If a thread cannot be started, the calling thread does its range: the result does not
// depend on who computes which chunk.
template <class Fn>
void ParallelOverChunks(int64_t num_chunks, int num_threads, const Fn& fn) {
  const int64_t workers = std::max<int64_t>(1, std::min<int64_t>(num_threads, num_chunks));
  const auto range_begin = [&](int64_t w) { return num_chunks * w / workers; };
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(workers - 1));
  int64_t started = 1;  // range 0 is the calling thread's
  try {
    for (; started < workers; ++started) {
      threads.emplace_back([&fn, b = range_begin(started), e = range_begin(started + 1)] { fn(b, e); });
    }
  } catch (const std::system_error&) {
    // Fewer threads; the ranges from `started` on run below.
  }
  fn(range_begin(0), range_begin(1));
  for (int64_t w = started; w < workers; ++w) fn(range_begin(w), range_begin(w + 1));
  for (std::thread& t : threads) t.join();
}

}  // namespace

OrderedSumThreads::OrderedSumThreads(int num_threads, OrderedSumOptions options)
    : num_threads_(std::max(1, num_threads)), options_(options) {}

absl::StatusOr<double> OrderedSumThreads::Sum(const double* terms, size_t n, OrderedSumStats* stats_out) {
  if (options_.chunk_terms < 1 || options_.subchunk_terms < 1) {
    return absl::InvalidArgumentError("OrderedSumThreads: chunk_terms and subchunk_terms must be >= 1");
  }
  const int64_t chunk = options_.chunk_terms;
  const int64_t num_chunks = (static_cast<int64_t>(n) + chunk - 1) / chunk;
  const auto chunk_length = [&](int64_t c) {
    return static_cast<size_t>(std::min<int64_t>(chunk, static_cast<int64_t>(n) - c * chunk));
  };

  // 1. Approximate chunk sums (any fixed order would do: they only feed the plan). Four
  // interleaved partial sums: four independent chains of adds instead of one.
  std::vector<double> chunk_sums(static_cast<size_t>(num_chunks));
  ParallelOverChunks(num_chunks, num_threads_, [&](int64_t first, int64_t end) {
    for (int64_t c = first; c < end; ++c) chunk_sums[c] = ApproximateSum(terms + c * chunk, chunk_length(c));
  });

  // 2. The plan, from the approximate prefix before each chunk. Sequential: one add per
  // chunk, and the same plan for every thread count.
  std::vector<int> plan(static_cast<size_t>(num_chunks));
  double prefix = 0.0;
  for (int64_t c = 0; c < num_chunks; ++c) {
    plan[c] = PlanFrame(prefix, options_.plan_mode, options_.fixed_frame, static_cast<uint64_t>(c));
    prefix = prefix + chunk_sums[c];
  }

  // 3. Summaries under the plan: the parallel, integer-only part.
  std::vector<RunSummary> summaries(static_cast<size_t>(num_chunks));
  ParallelOverChunks(num_chunks, num_threads_, [&](int64_t first, int64_t end) {
    for (int64_t c = first; c < end; ++c) summaries[c] = SummarizeFast(terms + c * chunk, chunk_length(c), plan[c]);
  });

  // 4. The checked walk. One step per chunk on the host: cheap next to the summaries.
  OrderedSumStats stats;
  stats.terms = static_cast<int64_t>(n);
  stats.chunks = num_chunks;
  double s = 0.0;
  for (int64_t c = 0; c < num_chunks; ++c) {
    uint64_t bits = BitsOf(s);
    if (TryApplyRun(bits, summaries[c], plan[c])) {
      s = DoubleOf(bits);
      continue;
    }
    ++stats.chunks_rejected;
    AddTermsByReplan(terms + c * chunk, chunk_length(c), options_.subchunk_terms, s, stats);
  }
  if (stats_out != nullptr) *stats_out = stats;
  return s;
}

}  // namespace exact
}  // namespace exactq
