// The device pipeline of the ssim CUDA twin, as host functions that enqueue it on a
// stream (plain C++: no device code here, so g++ code such as SsimCuda and the tests can
// call it).
//
// One frame's term sum, all on the device, nothing copied back but a small result:
//   1. terms      grid = chunks of 1024 raster pixels: each block computes its chunk's
//                 ssim terms from the luma planes (ssim_cuda_terms.cuh), stores them and a
//                 tree sum of them;
//   2. the exact sum of the stored terms by engine/exact's segment pipeline
//                 (engine/exact/device_sum.cuh: 32-chunk sums from the tree sums, segments,
//                 group steps, walk). It writes SsimTermSumResult's segment part. If one
//                 of its exact checks refused a step (segment_status != 0: rare, a
//                 prediction that was wrong), EnqueueSsimEventWalk runs the event-walk
//                 stages below on the same stored terms and writes the walk part.
// Event-walk stages (SsimPipelineOptions::segments = false runs them instead of 2):
//   plan       one block: an approximate prefix of the chunk sums names each chunk's
//              binade (advice only: a wrong plan costs time, never a bit);
//   summaries  grid = chunks: each chunk's RunSummary under its planned binade
//              (ssim_cuda_summaries.cuh: the tie-free path, else engine/exact's);
//   walk       engine/exact's OrderedWalk: the exact running sum through the summaries,
//              re-planning refused chunks from the stored terms.
// Every path gives the bits of `s = 0; for (pixel in raster order) s = s + term;`, which
// is ReferenceSums().term_sum: SsimTermSum() below reads it from the result.
//
// The fused form (SsimPipelineOptions::fused, measured and kept as an option, event walk
// only) does terms, plan and summaries in one kernel: chunks are taken in order through
// a ticket, each block publishes its tree sum and finds the approximate prefix before it
// by a decoupled look-back (engine/exact/internal/chunk_lookback.cuh), and summarises its terms while they are
// still in registers. On an H200 at 3840x2160 8-bit it was slower (0.32 ms against 0.26
// ms for the three stages, 2026-11-29). Its look-back adds in an order that depends on
// timing, so its plan (and the walk's fallback counts) may differ from run to run; the
// result's bits never do.
//
//   SsimDeviceFrame f = ...;  // planes already on the device, buffers from the sizes below
//   EnqueueSsimTermSum(f, {}, stream, nullptr);
//   cudaMemcpyAsync(&r, SsimTermSumResultOnDevice(f), sizeof r, ..., stream); sync;
//   if (NeedsEventWalk(r, {})) { EnqueueSsimEventWalk(f, {}, stream); copy r again; sync; }
//   double term_sum = SsimTermSum(r, {});
#ifndef EXACTQ_ENGINE_METRICS_SSIM_CUDA_SSIM_CUDA_PIPELINE_H_
#define EXACTQ_ENGINE_METRICS_SSIM_CUDA_SSIM_CUDA_PIPELINE_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "engine/exact/ordered_sum_algebra.h"

namespace exactq {
namespace ssim {
namespace gpu {

// One frame's device memory. The planes hold width*height luma samples each, packed rows:
// bytes at 8 bits, uint16 above (the wire layout of plane 0).
struct SsimDeviceFrame {
  const void* ref = nullptr;
  const void* dis = nullptr;
  int width = 0;
  int height = 0;
  int bit_depth = 8;
  double* terms = nullptr;    // SsimTermBytes(): the stored terms (for summaries and walk)
  void* workspace = nullptr;  // SsimWorkspaceBytes(): chunk sums, plan, summaries, result
};

// What the pipelines leave in the workspace: one struct, so one copy brings it back.
// The segment part mirrors exact::gpu::SegmentOutput, the walk part exact::gpu::WalkOutput
// (checked where all are visible).
struct SsimTermSumResult {
  // The segment pipeline.
  uint64_t segment_sum_bits;
  int32_t segment_status;  // 0: segment_sum_bits are the sum; 1, 2: run the event walk; -1: it ran
  int32_t segment_steps;
  int32_t segment_crossing_lanes;
  int32_t segment_refused_step;
  int32_t segment_terms_one_by_one;
  int32_t segment_tile_chunks;
  int32_t segment_replanned_chunks;  // 0: SSIM plans each frame afresh
  int32_t segment_pad;
  int64_t segment_cycles;
  // The event walk.
  uint64_t sum_bits;
  int64_t chunks_rejected;
  int64_t subchunks_rejected;
  int64_t terms_one_by_one;
  int64_t walk_windows;
};

// Sizes of the buffers for a frame of `pixels` luma samples.
int64_t SsimChunkCount(int64_t pixels);
size_t SsimTermBytes(int64_t pixels);
size_t SsimWorkspaceBytes(int64_t pixels);

// Where stage 4 writes its result (device memory inside f.workspace).
const SsimTermSumResult* SsimTermSumResultOnDevice(const SsimDeviceFrame& f);

// Test knobs; production uses the defaults.
struct SsimPipelineOptions {
  exact::PlanMode plan_mode = exact::PlanMode::kApproximatePrefix;
  int fixed_frame = 0;                   // for PlanMode::kFixedFrame
  bool force_general_summaries = false;  // never take the tie-free path
  bool fused = false;                    // event walk: terms, plan, summaries in one kernel (see above)
  bool segments = true;                  // the segment pipeline first (false: the event walk only)
};

// Events recorded after each stage (any may be null), for stage timings in benchmarks.
// In the fused pipeline terms_done, plan_done and summaries_done are all recorded after
// the fused kernel; with the segment pipeline all three after the terms, and walk_done
// after the segment pipeline.
struct SsimStageEvents {
  cudaEvent_t terms_done = nullptr;
  cudaEvent_t plan_done = nullptr;
  cudaEvent_t summaries_done = nullptr;
  cudaEvent_t walk_done = nullptr;
};

// Enqueues the pipeline for a frame of at least one pixel. Returns the first launch error
// (cudaGetLastError); errors during execution surface at the next synchronisation.
cudaError_t EnqueueSsimTermSum(const SsimDeviceFrame& f, const SsimPipelineOptions& options, cudaStream_t stream,
                               const SsimStageEvents* events);

// Whether the result copied back after EnqueueSsimTermSum still needs the event walk.
bool NeedsEventWalk(const SsimTermSumResult& r, const SsimPipelineOptions& options);
// The event-walk stages on terms EnqueueSsimTermSum stored (after a refusal).
cudaError_t EnqueueSsimEventWalk(const SsimDeviceFrame& f, const SsimPipelineOptions& options, cudaStream_t stream);
// The term sum from a complete result.
double SsimTermSum(const SsimTermSumResult& r, const SsimPipelineOptions& options);

// Test support: after EnqueueSsimTermSum has run on f, recomputes every chunk's summary
// from the stored terms under the same plan, once with the general path only and once
// with the tie-free path where it applies, and compares both the latter and the summary
// the pipeline itself made with the former, field by field. Synchronises `stream`.
// `mismatches`: chunks where any differs; `tie_free`: chunks the recomputation took the
// tie-free path for; `chunks`: all of them.
cudaError_t CompareSummaryPaths(const SsimDeviceFrame& f, cudaStream_t stream, int64_t* mismatches, int64_t* tie_free,
                                int64_t* chunks);

}  // namespace gpu
}  // namespace ssim
}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_SSIM_CUDA_SSIM_CUDA_PIPELINE_H_
