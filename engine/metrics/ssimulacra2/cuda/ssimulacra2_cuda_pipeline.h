// The device pipeline of the `ssimulacra2` CUDA twin (ssimulacra2_cuda.h): every step of
// ssimulacra2_reference.cc on the device, in its operations and order, for one frame pair
// whose raw planes are already in device memory.
//
// Plain C++ (no device code), so the host class compiled by g++ can include it. The
// kernels (ssimulacra2_cuda_pipeline.cu, nvcc --fmad=false) run the bodies of
// ssimulacra2_cuda_kernels.h, which call the shared functions of ssimulacra2_math.h.
// On the main stream:
//   YuvToLinear   one thread per pixel of scale 0 and image: nearest chroma straight from
//                 the raw planes, YuvToLinearRgb (B.2-B.3) with the uploaded EOTF table,
//                 and the pixel's XYB (B.4), into lin[0] and xyb[0];
//   per scale s (ScaleCount of the frame, at most 6; planes of parity s % 2):
//     Downsample  (s > 0) one thread per output pixel and image: the three channels'
//                 2x2 means (B.5) into lin[s % 2] and their XYB into xyb[s % 2] (after
//                 scale s - 2's terms, the last readers of the same parity's planes);
//     BlurRowsTiled  one warp per 32 rows of one (channel, kind): the horizontal
//                 recursive Gaussian of mu1, mu2, s11, s22, s12 (kinds 0..4; the products
//                 rounded once on load, as the reference's Multiply), each lane walking
//                 its row in the reference's order (B.6) through 32x32 tiles that the
//                 warp loads and stores coalesced (BlurTileLoad/Walk/Store);
//     BlurColumns one thread per (column, channel, kind): the vertical pass down the
//                 column (row-major planes: a warp's loads are coalesced) into blurred;
//     then a fork (event record + cudaStreamWaitEvent) onto the scale's sum stream
//     (PipelineShape: one per scale, or one per scale parity), which runs
//     TermsChunkSums (one block per chunk of 1024 pixels and channel: the fp64 SSIM dissimilarity d and edge difference
//     of B.7 into the channel's two base planes of this scale, and the chunk sums of the six terms of B.8: for the
//     segment pipeline its advice, in binary32 by default) and then the scale's 18 sums as one batch of engine/exact's
//     segment pipeline, each reading its terms as an exact function of one base plane (TermFromBase: d, d^4, the edge's
//     artifact and detail parts and their fourth powers). (With channels_per_batch 1, each channel forks onto a stream
//     of its own: three terms launches and three batches of six.) The main stream goes on to the next scale meanwhile,
//     and waits only for scale s's terms (not its sums) before it writes scale s + 2 into the same parity's planes; so
//     the sums of consecutive scales run side by side, and the image work never waits for a sum;
//   join: the main stream waits for the sum streams' last sums, then
//   Gather        one thread per sum: the 108 results and their statuses into SumResults.
// Inside a stream capture the fork and join become parallel branches of the graph.
// Nothing is copied to the host here; the caller copies the SumResults once.
#ifndef EXACTQ_ENGINE_METRICS_SSIMULACRA2_CUDA_SSIMULACRA2_CUDA_PIPELINE_H_
#define EXACTQ_ENGINE_METRICS_SSIMULACRA2_CUDA_SSIMULACRA2_CUDA_PIPELINE_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "engine/metrics/ssimulacra2/cuda/ssimulacra2_cuda_kernels.h"

namespace exactq {
namespace ssimulacra2 {
namespace gpu {

// How each of the 108 sums is formed.
enum class SumPath {
  // Exact: engine/exact's segment pipeline, a scale's 18 sums (or a channel's six)
  // batched (EnqueueSegmentedSumsFromChunkSums, five launches: its chunk stage takes the strided
  // form from device memory, then the refused chunks through a tile). A sum it refuses
  // has a nonzero status in SumResults; the caller then runs the frame again with
  // kEventWalk (same bits where both finish).
  kSegments,
  // Exact: engine/exact's event-walk pipeline (EnqueueOrderedSum, five kernels), the
  // sums one after the other; never refuses.
  kEventWalk,
  // NOT EXACT: a tree of adds (the chunk sums of TermsChunkSums, then a tree over them:
  // other bits), fused as the exact path is. For the cost comparison only; never used by
  // the service.
  kInexactTree,
};

// SumResults::status values (engine/exact's kSegmentAccepted, kSegmentRefused,
// kSegmentOverflow, kSegmentUnstaged): accepted, a check refused a step, a pool or step
// list was full, the slabs of the chunk stage missed a chunk (a defect here, not the
// frame's: the frame fails).
inline constexpr int32_t kSumAccepted = 0;
inline constexpr int32_t kSumRefused = 1;
inline constexpr int32_t kSumOverflow = 2;
inline constexpr int32_t kSumUnstaged = 3;

// Which sum stream each scale's terms and sums go to. The bits are the same in every
// shape.
struct PipelineShape {
  // 1 or kImageChannels: how many channels' terms share one terms launch and whose sums
  // form one batch (6 or 18 sums a batch); with 1, each channel has streams of its own.
  int channels_per_batch = kImageChannels;
  // One sum stream per scale: a scale's terms wait only for its blur. Otherwise one per
  // scale parity: scale s + 2's terms wait in stream order for scale s's sums (and the
  // main stream's scale s + 4 for those terms).
  bool stream_per_scale = true;
};

// The sum stream lane of scale s.
inline int SumStreamLane(const PipelineShape& shape, int s) { return shape.stream_per_scale ? s : s % 2; }

// The streams and events of the fork/join. The caller creates them once
// (CreatePipelineStreams: the main stream is the caller's; the sum streams the shape
// uses, non-blocking, and the events are made here, events without timing) and destroys
// them with DestroyPipelineStreams after the last frame.
struct PipelineStreams {
  PipelineShape shape;
  cudaStream_t main = nullptr;
  cudaStream_t sums[kImageChannels][kMaxScales] = {};  // [first channel of a batch][SumStreamLane]
  cudaEvent_t blurred[kMaxScales] = {};
  cudaEvent_t termed[kMaxScales][kImageChannels] = {};  // scale s's terms read its planes no more
  cudaEvent_t summed[kMaxScales][kImageChannels] = {};
};
// sum_stream_rank: the sum streams' priority as a rank above the device's least stream
// priority (0: the least, the default; each rank one step higher, up to the greatest).
// The main stream's is the caller's. With several frames in flight a higher rank starts
// a frame's sums before other frames' waiting kernels. INVALID_VALUE for a bad shape.
cudaError_t CreatePipelineStreams(cudaStream_t main, const PipelineShape& shape, PipelineStreams* streams,
                                  int sum_stream_rank = 0);
void DestroyPipelineStreams(PipelineStreams* streams);

// Device scratch for a frame of this size: the linear-RGB pyramid (ping-pong), XYB and
// blurred planes for both scale parities, the horizontal pass's planes, and per sum one
// workspace region big enough for the segment pipeline, the event walk and the tree sum
// (a frame uses one of them per sum). About 340 bytes per pixel for the planes (the
// terms are stored as two base planes of doubles per channel and scale), plus the
// workspaces (249 MB at 3840x2160, at least about 0.9 MB per sum).
size_t ScratchBytes(int width, int height);

// Once after allocating `scratch` (and after any kEventWalk run in it, which overwrites
// the segment workspaces): leaves every segment workspace in the state the segment
// pipeline starts from (ZeroSegmentState). Enqueued on `stream`.
cudaError_t PrepareScratch(void* scratch, int width, int height, cudaStream_t stream);

// What must be done once per process and device before the pipeline can be captured in
// a CUDA graph (the walks' shared-memory attributes). Idempotent.
cudaError_t PreparePipeline();

// The precision of the segment pipeline's advice, the approximate chunk sums that the
// terms kernel writes (AdviceTermFromBase). Same bits either way; binary32 is cheaper.
enum class AdvicePrecision {
  kBinary32,
  kBinary64,  // TermFromBase's own values, as the inexact tree sums them
};

// How the segment pipeline's sums are launched (SumPath::kSegments only). Same bits with
// any of them.
struct SumOptions {
  AdvicePrecision advice = AdvicePrecision::kBinary32;
  // A scale of more chunks (of 1024 pixels) than this takes its terms kernel and the
  // segment pipeline's chunk stage slab by slab, this many chunks each (a multiple of 32;
  // 0: the whole scale at once): the strided pass reads a slab's bases soon after they
  // are stored, while they are still in L2 (Ssimulacra2CudaOptions::sum_slab_chunks).
  int64_t slab_chunks = 0;
  // The terms kernel stores the bases under an L2 policy of evict_last (binary32 advice).
  bool bases_evict_last = false;
  // Tests only: the engine/exact PlanMode of the segment pipeline: 0 the real plan; 1 (one
  // binade high) makes it refuse every sum that is not zero.
  int segment_plan_mode = 0;
};

// Enqueues the whole frame: starts on streams.main, forks onto the sum streams (in
// streams.shape) and joins back; f.results holds the 108 sums (and statuses) when
// streams.main gets there. Returns the first launch error (cudaErrorInvalidValue for a
// slab_chunks that is not a multiple of 32).
cudaError_t EnqueuePipeline(const DeviceFrame& f, SumPath path, const PipelineStreams& streams,
                            const SumOptions& options = {});

}  // namespace gpu
}  // namespace ssimulacra2
}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_SSIMULACRA2_CUDA_SSIMULACRA2_CUDA_PIPELINE_H_
