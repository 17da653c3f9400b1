// The exact ordered sum on the device, one sum at a time: the bits of
// `s = 0; for (i) s = s + x[i];` over n terms that a TermSource gives
// (`__device__ double operator()(size_t i) const`: DeviceArrayTerms for terms in device
// memory, MappedArrayTerms for a map of stored values, or a metric's own source that
// computes term i).
//
// Two pipelines. The segment pipeline (EnqueueSegmentedSum and its variants) takes one
// exact step per place where the running sum changes binade; it may refuse (a check
// failed, a pool was full: ws.output->status says so), and then the event walk
// (EnqueueOrderedSum), which never refuses, gives the bits. Either way the bits are the
// loop's; a refusal costs time only. OrderedSumCuda (ordered_sum_cuda.h) does this for
// terms in device memory; a metric that computes its terms on the device calls these.
//
//   exact::gpu::SegmentWorkspace ws = exact::gpu::CarveSegmentWorkspace(base, chunks);
//   exact::gpu::ZeroSegmentState(ws, stream);  // once, after allocating `base`
//   exact::gpu::EnqueueSegmentedSum(exact::gpu::DeviceArrayTerms{d_terms}, n, ws, plan, stream);
//   // ws.output->status == kSegmentAccepted: ws.output->sum_bits are the loop's bits;
//   // otherwise run EnqueueOrderedSum on the same terms (a Workspace of WorkspaceBytes).
//
// Batches of sums in one set of launches: device_batch.cuh; their chunk stage in slabs:
// device_slabs.cuh; the building blocks of a kernel that forms chunk summaries itself:
// device_chunk_summaries.cuh. The stages live in internal/ (README.md lists them).
#ifndef EXACTQ_ENGINE_EXACT_DEVICE_SUM_CUH_
#define EXACTQ_ENGINE_EXACT_DEVICE_SUM_CUH_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "engine/exact/internal/block_chunk.cuh"
#include "engine/exact/internal/event_walk.cuh"
#include "engine/exact/internal/plan_options.cuh"
#include "engine/exact/internal/segment_chunk_stage.cuh"
#include "engine/exact/internal/segment_groups.cuh"
#include "engine/exact/internal/segment_layout.cuh"
#include "engine/exact/internal/segment_plan_reuse.cuh"
#include "engine/exact/internal/segment_prefix.cuh"
#include "engine/exact/internal/segment_walk.cuh"
#include "engine/exact/ordered_sum_algebra.h"

namespace exactq {
namespace exact {
namespace gpu {

// Enqueues the whole pipeline for n >= 1 terms on `stream`. The result is in ws.output
// once the stream gets there; nothing is copied to the host.
template <class TermSource>
cudaError_t EnqueueOrderedSum(const TermSource& source, size_t n, const Workspace& ws, PlanOptions options,
                              cudaStream_t stream, const StageEvents* stages = nullptr) {
  EXACTQ_SET_DEVICE_MUTANT();
  const int64_t chunks = ChunkCount(n);
  const int64_t groups = GroupCount(chunks);
  if (cudaError_t err = AllowWalkSharedMemory<TermSource>(); err != cudaSuccess) return err;
  const auto record = [&](int k) { return RecordStage(stages, k, stream); };
  ChunkApproximateSumsWarp<TermSource>
      <<<WarpGrid(chunks, kSumWarps), kSumWarps * 32, 0, stream>>>(source, n, chunks, ws.chunk_sums);
  if (cudaError_t err = record(0); err != cudaSuccess) return err;
  PlanAndPrefix<kPrefixThreads>
      <<<1, kPrefixThreads, 0, stream>>>(ws.chunk_sums, chunks, options, ws.plan, ws.approximate_prefix, ws.slot_pool);
  if (cudaError_t err = record(1); err != cudaSuccess) return err;
  ChunkSummariesWarp<TermSource><<<WarpGrid(chunks, kSummaryWarps), kSummaryWarps * 32, 0, stream>>>(
      source, n, chunks, ws.plan, ws.approximate_prefix, ws.summaries, ws.predicted_refused, ws.transitions, ws.slots,
      ws.slot_pool, static_cast<int>(groups * kGroupSlots));
  if (cudaError_t err = record(2); err != cudaSuccess) return err;
  PrepareWalk<TermSource><<<static_cast<unsigned>(groups), kGroupChunks, 0, stream>>>(
      chunks, ws.plan, ws.predicted_refused, ws.summaries, ws.transitions, ws.piece_prefix, ws.events, ws.event_count,
      ws.plan_runs);
  if (cudaError_t err = record(3); err != cudaSuccess) return err;
  OrderedEventWalk<TermSource><<<1, kWalkThreads, sizeof(WalkSmem), stream>>>(
      source, n, chunks, ws.summaries, ws.piece_prefix, ws.events, ws.event_count, ws.plan_runs, ws.slots, ws.output);
  if (cudaError_t err = record(4); err != cudaSuccess) return err;
  return cudaGetLastError();
}

template <class TermSource>
cudaError_t EnqueueSegmentedSum(const TermSource& source, size_t n, const SegmentWorkspace& ws, PlanOptions options,
                                cudaStream_t stream, const StageEvents* stages = nullptr) {
  EXACTQ_SET_DEVICE_MUTANT();
  const int64_t chunks = ChunkCount(n);
  const int64_t groups = SegmentGroupCount(chunks);
  if (groups > kSegmentMaxGroups) return cudaErrorInvalidValue;
  if (cudaError_t err = AllowSegmentWalkSharedMemory(); err != cudaSuccess) return err;
  const auto record = [&](int k) { return RecordStage(stages, k, stream); };
  SegmentApproximateSums<TermSource>
      <<<static_cast<unsigned>(SuperCount(chunks)), kApproximateThreads, 0, stream>>>(source, n, chunks, ws);
  // Between stage events a kernel follows an event record, not a kernel: plain launches.
  const bool pdl = options.programmatic_launch && stages == nullptr;
  if (cudaError_t err = record(0); err != cudaSuccess) return err;
  const cudaError_t chunk_stage =
      options.crossings_first ? LaunchAfterPrior(SegmentChunkWarp<true, TermSource>, ChunkStageGrid(chunks),
                                                 kSegmentWarps * 32, 0, stream, pdl, source, n, chunks, options, ws)
                              : LaunchAfterPrior(SegmentChunkWarp<false, TermSource>, WarpGrid(chunks, kSegmentWarps),
                                                 kSegmentWarps * 32, 0, stream, pdl, source, n, chunks, options, ws);
  if (chunk_stage != cudaSuccess) return chunk_stage;
  if (cudaError_t err = record(1); err != cudaSuccess) return err;
  return EnqueueGroupsAndWalk(chunks, ws, pdl, stream, stages, 2);
}

// EnqueueSegmentedSum without its first kernel: ws.chunk_sums must hold each chunk's
// approximate sum (any order of adds) when the stream gets here. (The batch's two-pass
// chunk stage, EnqueueSegmentedSumsFromChunkSums, was measured here too, for SSIM's one
// sum per frame on the H200: its segment sums took 78 against 69 us, one more launch on
// the frame's path, and no more frames/s with 8 streams.)
template <class TermSource>
cudaError_t EnqueueSegmentedSumFromChunkSums(const TermSource& source, size_t n, const SegmentWorkspace& ws,
                                             PlanOptions options, cudaStream_t stream) {
  EXACTQ_SET_DEVICE_MUTANT();
  const int64_t chunks = ChunkCount(n);
  const int64_t groups = SegmentGroupCount(chunks);
  if (groups > kSegmentMaxGroups) return cudaErrorInvalidValue;
  if (cudaError_t err = AllowSegmentWalkSharedMemory(); err != cudaSuccess) return err;
  const bool pdl = options.programmatic_launch;
  options.crossings_first = false;  // SegmentSuperPrefix forms no run order
  if (cudaError_t err =
          LaunchAfterPrior(SegmentSuperPrefix<kSuperPrefixThreads>, 1, kSuperPrefixThreads, 0, stream, pdl, chunks, ws);
      err != cudaSuccess) {
    return err;
  }
  if (cudaError_t err = LaunchAfterPrior(SegmentChunkWarp<false, TermSource>, WarpGrid(chunks, kSegmentWarps),
                                         kSegmentWarps * 32, 0, stream, pdl, source, n, chunks, options, ws);
      err != cudaSuccess) {
    return err;
  }
  return EnqueueGroupsAndWalk(chunks, ws, pdl, stream, /*stages=*/nullptr, 0);
}

// The segment pipeline for the next frame of a stream: ws must hold the plan a previous
// run over n terms in this workspace left (ws.plan_before; every pipeline here leaves one),
// and options.mode must be kApproximatePrefix with strided chunks (the caller checks: see
// OrderedSumCuda). Six kernels: SegmentChunkUnderPreviousPlan, SegmentRunSumsPrefix,
// the confirm stage (SegmentConfirmRuns, SegmentRedoChunks), then SegmentGroups and
// SegmentWalk as EnqueueSegmentedSum. The output is the fresh pipeline's (same steps, same
// bits), with replanned_chunks counted. `stages`, if given, records after the first two
// kernels, the confirm stage, groups and walk (after[0..4]).
template <class TermSource>
cudaError_t EnqueueSegmentedSumReusingPlan(const TermSource& source, size_t n, const SegmentWorkspace& ws,
                                           PlanOptions options, cudaStream_t stream,
                                           const StageEvents* stages = nullptr) {
  EXACTQ_SET_DEVICE_MUTANT();
  const int64_t chunks = ChunkCount(n);
  const int64_t groups = SegmentGroupCount(chunks);
  if (groups > kSegmentMaxGroups) return cudaErrorInvalidValue;
  if (options.mode != PlanMode::kApproximatePrefix || !options.strided_chunks) return cudaErrorInvalidValue;
  if (cudaError_t err = AllowSegmentWalkSharedMemory(); err != cudaSuccess) return err;
  const auto record = [&](int k) { return RecordStage(stages, k, stream); };
  const bool pdl = options.programmatic_launch && stages == nullptr;
  const unsigned chunk_grid = WarpGrid(chunks, kSegmentWarps);
  SegmentChunkUnderPreviousPlan<TermSource>
      <<<chunk_grid, kSegmentWarps * 32, 0, stream>>>(source, n, chunks, options, ws);
  if (cudaError_t err = record(0); err != cudaSuccess) return err;
  if (cudaError_t err = LaunchAfterPrior(SegmentRunSumsPrefix<kApproximateThreads>, 1, kApproximateThreads, 0, stream,
                                         pdl, chunks, ws);
      err != cudaSuccess) {
    return err;
  }
  if (cudaError_t err = record(1); err != cudaSuccess) return err;
  if (cudaError_t err = LaunchAfterPrior(SegmentConfirmRuns<kConfirmWarps>, WarpGrid(SuperCount(chunks), kConfirmWarps),
                                         kConfirmWarps * 32, 0, stream, pdl, chunks, options, ws);
      err != cudaSuccess) {
    return err;
  }
  if (cudaError_t err = LaunchAfterPrior(SegmentRedoChunks<TermSource>, RedoGrid(chunks, kRedoBlocksPerWave),
                                         kSegmentWarps * 32, 0, stream, pdl, source, n, options, ws);
      err != cudaSuccess) {
    return err;
  }
  if (cudaError_t err = record(2); err != cudaSuccess) return err;
  return EnqueueGroupsAndWalk(chunks, ws, pdl, stream, stages, 3);
}

inline bool SegmentPipelineFits(size_t n) { return SegmentGroupCount(ChunkCount(n)) <= kSegmentMaxGroups; }

}  // namespace gpu
}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_DEVICE_SUM_CUH_
