#include "engine/metrics/ssim/cuda/ssim_cuda_pipeline.h"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include <cub/block/block_scan.cuh>

#include "engine/exact/device_chunk_summaries.cuh"
#include "engine/exact/device_sum.cuh"
#include "engine/exact/ordered_sum_algebra.h"
#include "engine/metrics/ssim/cuda/ssim_cuda_summaries.cuh"
#include "engine/metrics/ssim/cuda/ssim_cuda_terms.cuh"
#include "engine/metrics/ssim/ssim_math.h"

namespace exactq {
namespace ssim {
namespace gpu {

using exact::gpu::ExclusivePrefix;
using exact::gpu::LookbackState;
using exact::gpu::PublishAggregate;
using exact::gpu::PublishInclusive;
using exact::gpu::TakeTicket;

// SsimTermSumResult = [segment part: SegmentOutput][walk part: WalkOutput].
constexpr size_t kWalkPart = offsetof(SsimTermSumResult, sum_bits);
static_assert(kWalkPart == sizeof(exact::gpu::SegmentOutput) &&
                  sizeof(SsimTermSumResult) == kWalkPart + sizeof(exact::gpu::WalkOutput),
              "SsimTermSumResult is a SegmentOutput followed by a WalkOutput");
static_assert(
    offsetof(SsimTermSumResult, segment_sum_bits) == offsetof(exact::gpu::SegmentOutput, sum_bits) &&
        offsetof(SsimTermSumResult, segment_status) == offsetof(exact::gpu::SegmentOutput, status) &&
        offsetof(SsimTermSumResult, segment_steps) == offsetof(exact::gpu::SegmentOutput, steps) &&
        offsetof(SsimTermSumResult, segment_crossing_lanes) == offsetof(exact::gpu::SegmentOutput, crossing_lanes) &&
        offsetof(SsimTermSumResult, segment_refused_step) == offsetof(exact::gpu::SegmentOutput, refused_step) &&
        offsetof(SsimTermSumResult, segment_terms_one_by_one) ==
            offsetof(exact::gpu::SegmentOutput, terms_one_by_one) &&
        offsetof(SsimTermSumResult, segment_tile_chunks) == offsetof(exact::gpu::SegmentOutput, tile_chunks) &&
        offsetof(SsimTermSumResult, segment_replanned_chunks) ==
            offsetof(exact::gpu::SegmentOutput, replanned_chunks) &&
        offsetof(SsimTermSumResult, segment_cycles) == offsetof(exact::gpu::SegmentOutput, cycles_total),
    "the segment part mirrors exact::gpu::SegmentOutput");
static_assert(offsetof(SsimTermSumResult, sum_bits) - kWalkPart == offsetof(exact::gpu::WalkOutput, sum_bits) &&
                  offsetof(SsimTermSumResult, chunks_rejected) - kWalkPart ==
                      offsetof(exact::gpu::WalkOutput, chunks_rejected) &&
                  offsetof(SsimTermSumResult, subchunks_rejected) - kWalkPart ==
                      offsetof(exact::gpu::WalkOutput, subchunks_rejected) &&
                  offsetof(SsimTermSumResult, terms_one_by_one) - kWalkPart ==
                      offsetof(exact::gpu::WalkOutput, terms_one_by_one) &&
                  offsetof(SsimTermSumResult, walk_windows) - kWalkPart ==
                      offsetof(exact::gpu::WalkOutput, walk_windows),
              "the walk part mirrors exact::gpu::WalkOutput");

namespace {

// ---------------------------------------------------------------------------------
// Shared by both forms.

template <class Sample>
LumaPlanes<Sample> PlanesOf(const SsimDeviceFrame& f) {
  LumaPlanes<Sample> planes;
  planes.ref = static_cast<const Sample*>(f.ref);
  planes.dis = static_cast<const Sample*>(f.dis);
  planes.width = f.width;
  planes.height = f.height;
  planes.st = StabilisersFor(f.bit_depth);
  return planes;
}

// Stores a lane's terms at their raster positions.
__device__ inline void StoreLaneTerms(double* terms, int64_t chunk, const double (&x)[kTermsPerThread], int valid) {
  const int64_t first = chunk * kChunkTerms + threadIdx.x * kTermsPerThread;
  if (valid == kTermsPerThread) {
    // 32 consecutive bytes per lane, 32-byte aligned (cudaMalloc'd base, first % 4 == 0).
    double2* out = reinterpret_cast<double2*>(terms + first);
    out[0] = make_double2(x[0], x[1]);
    out[1] = make_double2(x[2], x[3]);
  } else {
    // Unrolled with constant indices: a run-time index would move x[] to local memory.
#pragma unroll
    for (int j = 0; j < kTermsPerThread; ++j) {
      if (j < valid) terms[first + j] = x[j];
    }
  }
}

// ---------------------------------------------------------------------------------
// The fused form of stages 1-3 (an option): terms, plan and summary of each chunk in one
// block.

template <class Sample, class VSum, class HSum>
__global__ void __launch_bounds__(kBlockThreads, kMinBlocksPerSm<Sample>)
    SsimFusedKernel(LumaPlanes<Sample> planes, double* terms, LookbackState lookback, exact::gpu::PlanOptions options,
                    bool force_general, int* plan, exact::RunSummary* summaries) {
  using Terms = BlockChunkTerms<Sample, VSum, HSum>;
  __shared__ union {
    typename Terms::TempStorage terms;
    exact::gpu::BlockOrderedChunk::TempStorage chunk;
    BlockChunkSummary::TempStorage summary;
  } temp;
  __shared__ int64_t chunk_shared;
  __shared__ int frame_shared;
  if (threadIdx.x == 0)
    chunk_shared = TakeTicket(lookback);  // chunks in order (engine/exact/internal/chunk_lookback.cuh)
  __syncthreads();
  const int64_t chunk = chunk_shared;
  double x[kTermsPerThread];
  int valid;
  Terms::Compute(temp.terms, planes, chunk, x, valid);
  StoreLaneTerms(terms, chunk, x, valid);
  __syncthreads();  // the span arrays are done before the reduction reuses the storage
  const double sum = exact::gpu::BlockOrderedChunk::ApproximateSum(temp.chunk, x, valid);  // thread 0
  if (threadIdx.x < 32) {
    if (threadIdx.x == 0) PublishAggregate(lookback, chunk, sum);
    const double before = ExclusivePrefix(lookback, chunk);
    if (threadIdx.x == 0) {
      PublishInclusive(lookback, chunk, before + sum);
      const int frame = exact::PlanFrame(before, options.mode, options.fixed_frame, static_cast<uint64_t>(chunk));
      plan[chunk] = frame;
      frame_shared = frame;
    }
  }
  __syncthreads();  // frame_shared written; the reduction is done with the storage
  const exact::RunSummary run = BlockChunkSummary::Summarize(temp.summary, x, valid, frame_shared, force_general);
  if (threadIdx.x == 0) summaries[chunk] = run;
}

template <class Sample, class VSum, class HSum>
cudaError_t LaunchFused(const SsimDeviceFrame& f, int64_t chunks, const exact::gpu::Workspace& ws,
                        const LookbackState& lb, const SsimPipelineOptions& options, cudaStream_t stream) {
  exact::gpu::PlanOptions plan;
  plan.mode = options.plan_mode;
  plan.fixed_frame = options.fixed_frame;
  SsimFusedKernel<Sample, VSum, HSum><<<static_cast<unsigned>(chunks), kBlockThreads, 0, stream>>>(
      PlanesOf<Sample>(f), f.terms, lb, plan, options.force_general_summaries, ws.plan, ws.summaries);
  return cudaGetLastError();
}

cudaError_t LaunchFusedForDepth(const SsimDeviceFrame& f, int64_t chunks, const exact::gpu::Workspace& ws,
                                const LookbackState& lb, const SsimPipelineOptions& options, cudaStream_t stream) {
  if (f.bit_depth <= 8) return LaunchFused<uint8_t, uint32_t, uint32_t>(f, chunks, ws, lb, options, stream);
  if (f.bit_depth <= 12) return LaunchFused<uint16_t, uint32_t, uint64_t>(f, chunks, ws, lb, options, stream);
  return LaunchFused<uint16_t, uint64_t, uint64_t>(f, chunks, ws, lb, options, stream);
}

// ---------------------------------------------------------------------------------
// Stage 1: terms, stored, and an approximate sum per chunk.

template <class Sample, class VSum, class HSum>
__global__ void __launch_bounds__(kBlockThreads, kMinBlocksPerSm<Sample>)
    SsimTermsKernel(LumaPlanes<Sample> planes, double* terms, double* chunk_sums) {
  using Terms = BlockChunkTerms<Sample, VSum, HSum>;
  __shared__ union {
    typename Terms::TempStorage terms;
    exact::gpu::BlockOrderedChunk::TempStorage chunk;
  } temp;
  const int64_t chunk = blockIdx.x;
  double x[kTermsPerThread];
  int valid;
  Terms::Compute(temp.terms, planes, chunk, x, valid);

  StoreLaneTerms(terms, chunk, x, valid);
  __syncthreads();  // the span arrays are done before the reduction reuses the storage
  const double sum = exact::gpu::BlockOrderedChunk::ApproximateSum(temp.chunk, x, valid);
  if (threadIdx.x == 0) chunk_sums[chunk] = sum;
}

template <class Sample, class VSum, class HSum>
cudaError_t LaunchTerms(const SsimDeviceFrame& f, int64_t chunks, const exact::gpu::Workspace& ws,
                        cudaStream_t stream) {
  SsimTermsKernel<Sample, VSum, HSum>
      <<<static_cast<unsigned>(chunks), kBlockThreads, 0, stream>>>(PlanesOf<Sample>(f), f.terms, ws.chunk_sums);
  return cudaGetLastError();
}

// The integer widths of ssim_cuda_terms.cuh by depth.
cudaError_t LaunchTermsForDepth(const SsimDeviceFrame& f, int64_t chunks, const exact::gpu::Workspace& ws,
                                cudaStream_t stream) {
  if (f.bit_depth <= 8) return LaunchTerms<uint8_t, uint32_t, uint32_t>(f, chunks, ws, stream);
  if (f.bit_depth <= 12) return LaunchTerms<uint16_t, uint32_t, uint64_t>(f, chunks, ws, stream);
  return LaunchTerms<uint16_t, uint64_t, uint64_t>(f, chunks, ws, stream);
}

// ---------------------------------------------------------------------------------
// Stage 2: the plan. One block of 1024 threads; thread t takes a contiguous run of
// chunks, adds it up, and an exclusive block scan gives each run's approximate prefix.
// The association is fixed (same plan every run), and it is one pass where a tile loop
// would take one scan per 512 chunks. Only the binade of these prefixes matters, and
// only for speed.

inline constexpr int kPlanThreads = 1024;

__global__ void __launch_bounds__(kPlanThreads)
    SsimPlanKernel(const double* chunk_sums, int64_t chunks, exact::gpu::PlanOptions options, int* plan) {
  using Scan = cub::BlockScan<double, kPlanThreads>;
  __shared__ typename Scan::TempStorage temp;
  const int64_t per = (chunks + kPlanThreads - 1) / kPlanThreads;
  const int64_t begin_raw = static_cast<int64_t>(threadIdx.x) * per;
  const int64_t begin = begin_raw < chunks ? begin_raw : chunks;
  const int64_t end = begin + per < chunks ? begin + per : chunks;
  double run = 0.0;
  for (int64_t c = begin; c < end; ++c) run = __dadd_rn(run, chunk_sums[c]);
  double before;
  Scan(temp).ExclusiveSum(run, before);  // thread 0 gets 0: the loop's start
  for (int64_t c = begin; c < end; ++c) {
    plan[c] = exact::PlanFrame(before, options.mode, options.fixed_frame, static_cast<uint64_t>(c));
    before = __dadd_rn(before, chunk_sums[c]);
  }
}

// ---------------------------------------------------------------------------------
// Stage 3: summaries from the stored terms (also CompareSummaryPaths).

__device__ inline void LoadChunkTerms(const double* terms, int64_t n, int64_t chunk, double (&x)[kTermsPerThread],
                                      int& valid) {
  const int64_t first = chunk * kChunkTerms + threadIdx.x * kTermsPerThread;
  if (first + kTermsPerThread <= n) {
    const double2* in = reinterpret_cast<const double2*>(terms + first);
    const double2 a = in[0];
    const double2 b = in[1];
    x[0] = a.x;
    x[1] = a.y;
    x[2] = b.x;
    x[3] = b.y;
    valid = kTermsPerThread;
    return;
  }
  valid = 0;
#pragma unroll
  for (int j = 0; j < kTermsPerThread; ++j) {
    x[j] = 0.0;
    if (first + j < n) {
      x[j] = terms[first + j];
      valid = j + 1;
    }
  }
}

__global__ void __launch_bounds__(kBlockThreads)
    SsimSummariesKernel(const double* terms, int64_t n, const int* plan, bool force_general,
                        exact::RunSummary* summaries, unsigned long long* tie_free_count) {
  __shared__ BlockChunkSummary::TempStorage temp;
  const int64_t chunk = blockIdx.x;
  double x[kTermsPerThread];
  int valid;
  LoadChunkTerms(terms, n, chunk, x, valid);
  bool tie_free = false;
  const exact::RunSummary run = BlockChunkSummary::Summarize(temp, x, valid, plan[chunk], force_general, &tie_free);
  if (threadIdx.x == 0) {
    summaries[chunk] = run;
    if (tie_free_count != nullptr && tie_free) atomicAdd(tie_free_count, 1ull);
  }
}

cudaError_t LaunchSummaries(const SsimDeviceFrame& f, int64_t n, int64_t chunks, const int* plan, bool force_general,
                            exact::RunSummary* out, unsigned long long* tie_free_count, cudaStream_t stream) {
  SsimSummariesKernel<<<static_cast<unsigned>(chunks), kBlockThreads, 0, stream>>>(f.terms, n, plan, force_general, out,
                                                                                   tie_free_count);
  return cudaGetLastError();
}

cudaError_t Record(cudaEvent_t event, cudaStream_t stream) {
  return event == nullptr ? cudaSuccess : cudaEventRecord(event, stream);
}

int64_t Pixels(const SsimDeviceFrame& f) { return static_cast<int64_t>(f.width) * f.height; }

// The workspace: engine/exact's event-walk workspace (chunk sums, plan, summaries, its
// own output unused), the look-back state of the fused stage (flags and ticket, then the
// two value arrays), the result, then engine/exact's segment workspace (whose chunk sums
// are the event-walk workspace's: the terms stage writes them once for both).
size_t LookbackBytes(int64_t chunks) {
  const size_t c = static_cast<size_t>(chunks);
  return exact::gpu::AlignUp((c + 1) * sizeof(unsigned)) + 2 * exact::gpu::AlignUp(c * sizeof(double));
}

LookbackState CarveLookback(void* workspace, int64_t chunks) {
  const size_t c = static_cast<size_t>(chunks);
  char* p = static_cast<char*>(workspace) + exact::gpu::WorkspaceBytes(chunks);
  LookbackState lb;
  lb.flags = reinterpret_cast<unsigned*>(p);
  p += exact::gpu::AlignUp((c + 1) * sizeof(unsigned));
  lb.aggregate = reinterpret_cast<double*>(p);
  p += exact::gpu::AlignUp(c * sizeof(double));
  lb.inclusive = reinterpret_cast<double*>(p);
  lb.chunks = chunks;
  return lb;
}

SsimTermSumResult* ResultIn(void* workspace, int64_t chunks) {
  return reinterpret_cast<SsimTermSumResult*>(static_cast<char*>(workspace) + exact::gpu::WorkspaceBytes(chunks) +
                                              LookbackBytes(chunks));
}

struct Workspaces {
  exact::gpu::Workspace walk;
  exact::gpu::SegmentWorkspace segments;
};

Workspaces CarveWorkspaces(void* workspace, int64_t chunks) {
  Workspaces w;
  w.walk = exact::gpu::CarveWorkspace(workspace, chunks);
  SsimTermSumResult* result = ResultIn(workspace, chunks);
  char* result_bytes = reinterpret_cast<char*>(result);
  w.walk.output = reinterpret_cast<exact::gpu::WalkOutput*>(result_bytes + kWalkPart);
  w.segments = exact::gpu::CarveSegmentWorkspace(result_bytes + exact::gpu::AlignUp(sizeof(SsimTermSumResult)), chunks);
  w.segments.chunk_sums = w.walk.chunk_sums;
  w.segments.output = reinterpret_cast<exact::gpu::SegmentOutput*>(result_bytes);
  return w;
}

exact::gpu::PlanOptions PlanOf(const SsimPipelineOptions& options) {
  exact::gpu::PlanOptions plan;
  plan.mode = options.plan_mode;
  plan.fixed_frame = options.fixed_frame;
  return plan;
}

// Plan, summaries and walk over the stored terms and chunk sums.
cudaError_t EnqueueEventWalkStages(const SsimDeviceFrame& f, const SsimPipelineOptions& options, const Workspaces& w,
                                   cudaStream_t stream, const SsimStageEvents& ev) {
  const int64_t n = Pixels(f);
  const int64_t chunks = SsimChunkCount(n);
  SsimPlanKernel<<<1, kPlanThreads, 0, stream>>>(w.walk.chunk_sums, chunks, PlanOf(options), w.walk.plan);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = Record(ev.plan_done, stream);
  if (err == cudaSuccess) {
    err =
        LaunchSummaries(f, n, chunks, w.walk.plan, options.force_general_summaries, w.walk.summaries, nullptr, stream);
  }
  if (err == cudaSuccess) err = Record(ev.summaries_done, stream);
  if (err == cudaSuccess) {
    exact::gpu::OrderedWalk<exact::gpu::DeviceArrayTerms>
        <<<1, kBlockThreads, 0, stream>>>(exact::gpu::DeviceArrayTerms{f.terms}, static_cast<size_t>(n), chunks,
                                          w.walk.plan, w.walk.summaries, w.walk.output);
    err = cudaGetLastError();
  }
  return err;
}

}  // namespace

int64_t SsimChunkCount(int64_t pixels) { return exact::gpu::ChunkCount(static_cast<size_t>(pixels)); }

size_t SsimTermBytes(int64_t pixels) { return static_cast<size_t>(pixels) * sizeof(double); }

size_t SsimWorkspaceBytes(int64_t pixels) {
  const int64_t chunks = SsimChunkCount(pixels);
  return exact::gpu::WorkspaceBytes(chunks) + LookbackBytes(chunks) + exact::gpu::AlignUp(sizeof(SsimTermSumResult)) +
         exact::gpu::SegmentWorkspaceBytes(chunks);
}

const SsimTermSumResult* SsimTermSumResultOnDevice(const SsimDeviceFrame& f) {
  return ResultIn(f.workspace, SsimChunkCount(Pixels(f)));
}

bool NeedsEventWalk(const SsimTermSumResult& r, const SsimPipelineOptions& options) {
  // -1: the frame was too large for the segment pipeline and the event walk already ran.
  return options.segments && !options.fused && r.segment_status > exact::gpu::kSegmentAccepted;
}

double SsimTermSum(const SsimTermSumResult& r, const SsimPipelineOptions& options) {
  const bool segments = options.segments && !options.fused && r.segment_status == exact::gpu::kSegmentAccepted;
  return exact::DoubleOf(segments ? r.segment_sum_bits : r.sum_bits);
}

cudaError_t EnqueueSsimEventWalk(const SsimDeviceFrame& f, const SsimPipelineOptions& options, cudaStream_t stream) {
  const int64_t n = Pixels(f);
  if (n < 1 || f.terms == nullptr || f.workspace == nullptr) return cudaErrorInvalidValue;
  return EnqueueEventWalkStages(f, options, CarveWorkspaces(f.workspace, SsimChunkCount(n)), stream, SsimStageEvents{});
}

cudaError_t EnqueueSsimTermSum(const SsimDeviceFrame& f, const SsimPipelineOptions& options, cudaStream_t stream,
                               const SsimStageEvents* events) {
  const int64_t n = Pixels(f);
  if (n < 1 || f.ref == nullptr || f.dis == nullptr || f.terms == nullptr || f.workspace == nullptr) {
    return cudaErrorInvalidValue;
  }
  const int64_t chunks = SsimChunkCount(n);
  const Workspaces w = CarveWorkspaces(f.workspace, chunks);
  const SsimStageEvents no_events;
  const SsimStageEvents& ev = events != nullptr ? *events : no_events;
  cudaError_t err = cudaSuccess;
  if (options.fused) {
    const LookbackState lb = CarveLookback(f.workspace, chunks);
    // Flags and ticket start at zero for every frame (engine/exact/internal/chunk_lookback.cuh).
    err = cudaMemsetAsync(lb.flags, 0, static_cast<size_t>(chunks + 1) * sizeof(unsigned), stream);
    if (err == cudaSuccess) err = LaunchFusedForDepth(f, chunks, w.walk, lb, options, stream);
    for (cudaEvent_t e : {ev.terms_done, ev.plan_done, ev.summaries_done}) {
      if (err == cudaSuccess) err = Record(e, stream);
    }
    if (err == cudaSuccess) {
      exact::gpu::OrderedWalk<exact::gpu::DeviceArrayTerms>
          <<<1, kBlockThreads, 0, stream>>>(exact::gpu::DeviceArrayTerms{f.terms}, static_cast<size_t>(n), chunks,
                                            w.walk.plan, w.walk.summaries, w.walk.output);
      err = cudaGetLastError();
    }
  } else {
    err = LaunchTermsForDepth(f, chunks, w.walk, stream);
    if (err == cudaSuccess) err = Record(ev.terms_done, stream);
    if (err == cudaSuccess) {
      if (options.segments && exact::gpu::SegmentPipelineFits(static_cast<size_t>(n))) {
        // No plan or summaries stages here: their events mark the end of the terms.
        for (cudaEvent_t e : {ev.plan_done, ev.summaries_done}) {
          if (err == cudaSuccess) err = Record(e, stream);
        }
        if (err == cudaSuccess)
          err = exact::gpu::EnqueueSegmentedSumFromChunkSums(
              exact::gpu::DeviceArrayTerms{f.terms}, static_cast<size_t>(n), w.segments, PlanOf(options), stream);
      } else {
        // A segment status that is not "accepted" sends callers to the event walk's result.
        if (options.segments) {
          err = cudaMemsetAsync(&w.segments.output->status, 0xff, sizeof(int32_t), stream);
        }
        if (err == cudaSuccess) err = EnqueueEventWalkStages(f, options, w, stream, ev);
      }
    }
  }
  if (err == cudaSuccess) err = Record(ev.walk_done, stream);
  return err;
}

cudaError_t CompareSummaryPaths(const SsimDeviceFrame& f, cudaStream_t stream, int64_t* mismatches, int64_t* tie_free,
                                int64_t* chunks_out) {
  const int64_t n = Pixels(f);
  const int64_t chunks = SsimChunkCount(n);
  const exact::gpu::Workspace ws = exact::gpu::CarveWorkspace(f.workspace, chunks);
  const size_t bytes = static_cast<size_t>(chunks) * sizeof(exact::RunSummary);
  exact::RunSummary* general = nullptr;
  exact::RunSummary* mixed = nullptr;
  unsigned long long* count = nullptr;
  cudaError_t err = cudaMalloc(&general, bytes);
  if (err == cudaSuccess) err = cudaMalloc(&mixed, bytes);
  if (err == cudaSuccess) err = cudaMalloc(&count, sizeof *count);
  if (err == cudaSuccess) err = cudaMemsetAsync(count, 0, sizeof *count, stream);
  if (err == cudaSuccess) err = LaunchSummaries(f, n, chunks, ws.plan, true, general, nullptr, stream);
  if (err == cudaSuccess) err = LaunchSummaries(f, n, chunks, ws.plan, false, mixed, count, stream);
  // general: the general path only; mixed: the tie-free path where it applies; pipeline:
  // what the pipeline itself made (in the fused kernel, or the same kernel as mixed).
  std::vector<exact::RunSummary> want(static_cast<size_t>(chunks));
  std::vector<exact::RunSummary> got_mixed(static_cast<size_t>(chunks));
  std::vector<exact::RunSummary> got_pipeline(static_cast<size_t>(chunks));
  unsigned long long tie_free_chunks = 0;
  if (err == cudaSuccess) err = cudaMemcpyAsync(want.data(), general, bytes, cudaMemcpyDeviceToHost, stream);
  if (err == cudaSuccess) err = cudaMemcpyAsync(got_mixed.data(), mixed, bytes, cudaMemcpyDeviceToHost, stream);
  if (err == cudaSuccess) {
    err = cudaMemcpyAsync(got_pipeline.data(), ws.summaries, bytes, cudaMemcpyDeviceToHost, stream);
  }
  if (err == cudaSuccess) {
    err = cudaMemcpyAsync(&tie_free_chunks, count, sizeof tie_free_chunks, cudaMemcpyDeviceToHost, stream);
  }
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  cudaFree(general);
  cudaFree(mixed);
  cudaFree(count);
  if (err != cudaSuccess) return err;
  // Field by field: the struct's padding bytes are not part of the value.
  const auto same = [](const exact::RunSummary& a, const exact::RunSummary& b) {
    bool equal = a.flags == b.flags;
    for (int p = 0; p < 2; ++p) equal = equal && a.d[p] == b.d[p] && a.lo[p] == b.lo[p] && a.hi[p] == b.hi[p];
    return equal;
  };
  int64_t differ = 0;
  for (size_t c = 0; c < want.size(); ++c) {
    if (!same(want[c], got_mixed[c]) || !same(want[c], got_pipeline[c])) ++differ;
  }
  *mismatches = differ;
  *tie_free = static_cast<int64_t>(tie_free_chunks);
  *chunks_out = chunks;
  return cudaSuccess;
}

}  // namespace gpu
}  // namespace ssim
}  // namespace exactq
