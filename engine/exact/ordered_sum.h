// The exact ordered sum: the bits of `double s = 0; for (i) s = s + x[i];` from parallel
// work, for every metric and backend.
//
// Three implementations share one small interface, OrderedSum:
//   OrderedSumReference  the plain loop. This IS the definition of the result.
//   OrderedSumThreads    host threads; returns the loop's bits for every thread count.
//   OrderedSumCuda       (ordered_sum_cuda.h) terms in device memory, one double back.
// There is deliberately no inexact variant here: a tree or atomic sum is a different
// function, and a baseline for benchmarks lives in bench/exact/ under its own name.
//
// How the parallel versions work (docs/design.md "The ordered sum", the signed design in
// docs/ordered-sum.md, algebra in ordered_sum_algebra.h):
//   1. chunks of `chunk_terms` consecutive terms get an approximate sum (any order);
//   2. a plan names each chunk's frame (binade) from the approximate prefix before it;
//   3. each chunk is summarised under its planned frame with integer operations only;
//   4. a walk takes the exact running sum through the chunks: it applies a chunk's summary
//      when the check allows it, and otherwise re-plans the chunk in sub-chunks of
//      `subchunk_terms` under the frame of the exact sum, adding one by one only the
//      sub-chunks that are still refused.
// The plan is advice: a wrong plan costs time (more term-by-term adds), never a bit.
//
//   exactq::exact::OrderedSumThreads sum(/*num_threads=*/8);
//   exactq::exact::OrderedSumStats stats;
//   absl::StatusOr<double> total = sum.Sum(terms.data(), terms.size(), &stats);
//   // *total has the bits of the loop; stats says how many terms went one by one.
//
// NaN: the result is a NaN exactly when the loop's is, but its payload may differ (the
// CUDA version and inf + -inf formed by the walk give the canonical quiet NaN).
#ifndef EXACTQ_ENGINE_EXACT_ORDERED_SUM_H_
#define EXACTQ_ENGINE_EXACT_ORDERED_SUM_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "engine/exact/ordered_sum_algebra.h"
#include "engine/platform/worker_pool.h"

namespace exactq {
namespace exact {

// What a parallel sum had to do the slow way; callers report these (e.g. as Prometheus
// counters) to show that the fallback stays rare on real frames.
struct OrderedSumStats {
  int64_t terms = 0;
  int64_t chunks = 0;
  // Chunks the walk refused under their plan; each was re-planned in sub-chunks.
  int64_t chunks_rejected = 0;
  // Sub-chunks refused under the exact frame; their terms were added one by one.
  int64_t subchunks_rejected = 0;
  // Terms added with a double add in the walk (the term-by-term fallback).
  int64_t terms_one_by_one = 0;
  // Composed steps of the device walk: runs of chunks with one plan, plus one per refused
  // chunk (0 on the host, which walks chunk by chunk; the host model of the device walk
  // reports the same count as the device).
  int64_t walk_windows = 0;
  // Device only. The segment pipeline (the fast path, tried first): whether it gave the
  // result (1) or refused and the event walk did (0), its walk steps and its crossing
  // lanes (sub-chunks added one by one). The four counts above are the event walk's and
  // stay 0 when the segment pipeline gave the result.
  int64_t segment_accepted = 0;
  int64_t segment_steps = 0;
  int64_t segment_crossing_lanes = 0;
  // Of the segment pipeline's chunks, those formed through the tile (a tie, a special term,
  // a path near a binade edge, a sum's first chunk, or strided_chunks off); the others were
  // one strided run.
  int64_t segment_tile_chunks = 0;
  // Whether the segment pipeline ran under the previous call's plan (OrderedSumOptions
  // ::reuse_plan), and then how many chunks this call's plan changed (summarised again).
  int64_t segment_plan_reused = 0;
  int64_t segment_replanned_chunks = 0;

  OrderedSumStats& operator+=(const OrderedSumStats& o) {
    terms += o.terms;
    chunks += o.chunks;
    chunks_rejected += o.chunks_rejected;
    subchunks_rejected += o.subchunks_rejected;
    terms_one_by_one += o.terms_one_by_one;
    walk_windows += o.walk_windows;
    segment_accepted += o.segment_accepted;
    segment_steps += o.segment_steps;
    segment_crossing_lanes += o.segment_crossing_lanes;
    segment_tile_chunks += o.segment_tile_chunks;
    segment_plan_reused += o.segment_plan_reused;
    segment_replanned_chunks += o.segment_replanned_chunks;
    return *this;
  }
};

struct OrderedSumOptions {
  // 1024 = one 256-lane CUDA block of 4 terms per lane; the host uses the same so that
  // stats compare across backends. Any value >= 1 is exact (tests use tiny ones).
  int64_t chunk_terms = 1024;
  // The re-plan grain for a refused chunk: one warp's 8 lanes of 4 terms on the device.
  int64_t subchunk_terms = 32;
  // Wrong plans on purpose, for tests only (see PlanMode).
  PlanMode plan_mode = PlanMode::kApproximatePrefix;
  int fixed_frame = 0;  // for PlanMode::kFixedFrame
  // Device only: which pipelines OrderedSumCuda runs. kSegmentsThenEventWalk tries the
  // segment pipeline and runs the event walk only when a check refuses it; the others
  // are for tests and benchmarks (kSegmentsOnly reports a refusal as FAILED_PRECONDITION).
  enum class DevicePipeline : int { kSegmentsThenEventWalk = 0, kEventWalkOnly = 1, kSegmentsOnly = 2 };
  DevicePipeline device_pipeline = DevicePipeline::kSegmentsThenEventWalk;
  // Device only: the segment pipeline's kernels after the first are launched with
  // programmatic dependent launch where the device has it (gpu::PlanOptions); false
  // gives plain launches (same bits; for benchmarks).
  bool programmatic_launch = true;
  // Device only: the segment pipeline's chunk stage first tries each chunk as one run from
  // strided reads, and summarises lane by lane only the chunks that refuses (gpu::PlanOptions
  // ::strided_chunks). false: every chunk lane by lane (same bits; for tests and benchmarks).
  bool strided_chunks = true;
  // Device only: the segment pipeline's chunk stage takes first the chunks near a binade
  // or sign crossing, its slowest (gpu::PlanOptions::crossings_first). false: index order
  // (same bits and stats; for benchmarks).
  bool crossings_first = true;
  // Device only: a call over as many terms as the call before it on the same OrderedSumCuda
  // (the next frame of a stream) starts under that call's plan: the chunk stage runs in the
  // same pass over the terms as the approximate sums, and only the chunks whose plan this
  // frame changes are summarised again (gpu::EnqueueSegmentedSumReusingPlan). The same
  // bits, steps and fallbacks as a fresh plan; it applies with plan_mode
  // kApproximatePrefix and strided_chunks. Off by default: on the H200 it saves the
  // second read of the terms but not time (bench/results/ordered_sum.md): the
  // chunks it must summarise again are those near a binade crossing, the slowest ones,
  // and they then run alone after the pass instead of beside it.
  bool reuse_plan = false;
  // Host only: how OrderedSumThreads forms approximate chunk sums and summaries. Every
  // choice gives the same sums, summaries, plans, stats and bits (tests run them all):
  // kAuto takes the AVX2 kernels where the CPU has AVX2 and the generic (SSE2) ones
  // elsewhere; kGeneric forces the latter; kScalar is the one-chunk-at-a-time scalar code
  // (the kernels' definition; also what chunk sizes the kernels do not take use).
  enum class HostKernels : int { kAuto = 0, kGeneric = 1, kScalar = 2 };
  HostKernels host_kernels = HostKernels::kAuto;
};

// The interface. `terms` must be readable by the implementation: host memory for the
// host variants, device memory for OrderedSumCuda. `stats` may be null.
class OrderedSum {
 public:
  virtual ~OrderedSum() = default;
  virtual absl::StatusOr<double> Sum(const double* terms, size_t n, OrderedSumStats* stats) = 0;
  virtual const char* name() const = 0;
};

// The definition: the plain loop, left to right from +0.
class OrderedSumReference final : public OrderedSum {
 public:
  static double Loop(const double* terms, size_t n);

  absl::StatusOr<double> Sum(const double* terms, size_t n, OrderedSumStats* stats) override;
  const char* name() const override { return "reference"; }
};

// Host threads. The chunk layout and the plan do not depend on the thread count, so
// neither the result nor the stats do.
//
// One pass over memory: the terms are taken in blocks of chunks small enough to stay in
// the core's L2 cache (256 KiB); a block's approximate chunk sums are formed first
// (reading memory), then, once the plan of the block before it is known, the block's plan
// is folded from the approximate prefix and its summaries are formed from the cache.
// Threads take blocks in increasing order from a shared counter and hand the approximate
// prefix on from block to block, so the plan is the sequential one whatever the thread
// count. While a thread forms a block's summaries it asks for the lines of its next block,
// so memory and arithmetic overlap. The chunk sums and summaries come from vectorised
// kernels (internal/cpu_kernels.h: AVX2 where the CPU has it, SSE2 otherwise) that give
// the scalar code's values bit for bit. The checked walk then runs over all chunks on the
// calling thread.
class OrderedSumThreads final : public OrderedSum {
 public:
  // `pool` (not owned, optional): the threads to run on, shared with the caller's other
  // work (one Sum at a time); without one the sum starts its own pool at its first Sum
  // that needs threads and keeps it.
  explicit OrderedSumThreads(int num_threads, OrderedSumOptions options = {}, WorkerPool* pool = nullptr);

  absl::StatusOr<double> Sum(const double* terms, size_t n, OrderedSumStats* stats) override;
  const char* name() const override { return "threads"; }

  int num_threads() const { return num_threads_; }
  // The host kernels this sum uses for its chunk size and options: "avx2", "generic" or
  // "scalar" (for benchmarks and logs; the bits never depend on it).
  const char* kernels() const;

 private:
  int num_threads_;
  OrderedSumOptions options_;
  WorkerPool* pool_;
  std::unique_ptr<WorkerPool> own_pool_;
};

// The building blocks, shared with tests and with host code that walks summaries it
// formed elsewhere.

// The summary of terms[0..n) under `frame`, composed left to right.
RunSummary SummarizeTerms(const double* terms, size_t n, int frame);

// Adds terms[0..n) to the exact running sum `s` the way the walk does with a refused
// chunk: sub-chunks of `subchunk_terms`, each summarised under the frame of the exact sum
// at its start and applied when the check allows it, the others added one by one.
void AddTermsByReplan(const double* terms, size_t n, int64_t subchunk_terms, double& s, OrderedSumStats& stats);

}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_ORDERED_SUM_H_
