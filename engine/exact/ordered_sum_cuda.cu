#include "engine/exact/ordered_sum_cuda.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "engine/exact/device_sum.cuh"

namespace exactq {
namespace exact {
namespace {

absl::Status CudaError(const char* what, cudaError_t err) {
  return absl::InternalError(
      absl::StrCat("OrderedSumCuda: ", what, ": ", cudaGetErrorName(err), " (", cudaGetErrorString(err), ")"));
}

// What comes back to the host: one of the two outputs.
union PinnedOutput {
  gpu::WalkOutput walk;
  gpu::SegmentOutput segments;
};

}  // namespace

OrderedSumCuda::OrderedSumCuda(cudaStream_t stream, OrderedSumOptions options) : stream_(stream), options_(options) {}

OrderedSumCuda::~OrderedSumCuda() {
  // Errors here can only be reported by a log; the process may be tearing CUDA down.
  if (event_walk_.data != nullptr) cudaFree(event_walk_.data);
  if (segments_.data != nullptr) cudaFree(segments_.data);
  if (pinned_output_ != nullptr) cudaFreeHost(pinned_output_);
}

absl::Status OrderedSumCuda::Reserve(DeviceBuffer& buffer, int64_t chunks, size_t (*bytes_for)(int64_t)) {
  if (pinned_output_ == nullptr) {
    if (cudaError_t err = cudaMallocHost(&pinned_output_, sizeof(PinnedOutput)); err != cudaSuccess) {
      pinned_output_ = nullptr;
      return CudaError("cudaMallocHost", err);
    }
  }
  if (chunks <= buffer.chunks) return absl::OkStatus();
  if (buffer.data != nullptr) {
    // The previous workspace may still be in use by work queued on the stream.
    if (cudaError_t err = cudaStreamSynchronize(stream_); err != cudaSuccess)
      return CudaError("cudaStreamSynchronize", err);
    cudaFree(buffer.data);
    buffer = DeviceBuffer{};
  }
  // Grow geometrically so a stream of slightly larger frames does not reallocate each time.
  const int64_t want = chunks + chunks / 4;
  if (cudaError_t err = cudaMalloc(&buffer.data, bytes_for(want)); err != cudaSuccess) {
    buffer = DeviceBuffer{};
    if (err == cudaErrorMemoryAllocation) {
      return absl::ResourceExhaustedError(absl::StrCat("OrderedSumCuda: no device memory for ", want, " chunks"));
    }
    return CudaError("cudaMalloc", err);
  }
  buffer.chunks = want;
  return absl::OkStatus();
}

absl::StatusOr<double> OrderedSumCuda::EventWalkSum(const double* device_terms, size_t n, OrderedSumStats* stats) {
  const int64_t chunks = gpu::ChunkCount(n);
  if (absl::Status s = Reserve(event_walk_, chunks, &gpu::WorkspaceBytes); !s.ok()) return s;
  const gpu::Workspace ws = gpu::CarveWorkspace(event_walk_.data, event_walk_.chunks);
  gpu::PlanOptions plan;
  plan.mode = options_.plan_mode;
  plan.fixed_frame = options_.fixed_frame;
  if (cudaError_t err = gpu::EnqueueOrderedSum(gpu::DeviceArrayTerms{device_terms}, n, ws, plan, stream_);
      err != cudaSuccess) {
    return CudaError("kernel launch", err);
  }
  if (cudaError_t err =
          cudaMemcpyAsync(pinned_output_, ws.output, sizeof(gpu::WalkOutput), cudaMemcpyDeviceToHost, stream_);
      err != cudaSuccess) {
    return CudaError("cudaMemcpyAsync", err);
  }
  if (cudaError_t err = cudaStreamSynchronize(stream_); err != cudaSuccess) return CudaError("ordered sum", err);
  const gpu::WalkOutput& out = static_cast<const PinnedOutput*>(pinned_output_)->walk;
  if (stats != nullptr) {
    stats->chunks_rejected = out.chunks_rejected;
    stats->subchunks_rejected = out.subchunks_rejected;
    stats->terms_one_by_one = out.terms_one_by_one;
    stats->walk_windows = out.walk_windows;
  }
  return DoubleOf(out.sum_bits);
}

absl::StatusOr<double> OrderedSumCuda::Sum(const double* device_terms, size_t n, OrderedSumStats* stats) {
  if (options_.chunk_terms != gpu::kChunkTerms || options_.subchunk_terms != gpu::kSubchunkTerms) {
    return absl::InvalidArgumentError(
        "OrderedSumCuda: the device layout fixes chunk_terms = 1024 and subchunk_terms = 32");
  }
  if (stats != nullptr) {
    *stats = OrderedSumStats{};
    stats->terms = static_cast<int64_t>(n);
    stats->chunks = gpu::ChunkCount(n);
  }
  if (n == 0) return 0.0;  // the loop's +0
  if (device_terms == nullptr) return absl::InvalidArgumentError("OrderedSumCuda: null terms");

  using Pipeline = OrderedSumOptions::DevicePipeline;
  const bool try_segments = options_.device_pipeline != Pipeline::kEventWalkOnly && gpu::SegmentPipelineFits(n);
  if (!try_segments) {
    if (options_.device_pipeline == Pipeline::kSegmentsOnly) {
      return absl::InvalidArgumentError("OrderedSumCuda: too many terms for the segment pipeline");
    }
    return EventWalkSum(device_terms, n, stats);
  }
  const int64_t chunks = gpu::ChunkCount(n);
  const void* before = segments_.data;
  const bool plan_kept = planned_terms_ == n;
  planned_terms_ = 0;  // until this call's pipeline has completed
  if (absl::Status s = Reserve(segments_, chunks, &gpu::SegmentWorkspaceBytes); !s.ok()) return s;
  const gpu::SegmentWorkspace ws = gpu::CarveSegmentWorkspace(segments_.data, segments_.chunks);
  if (segments_.data != before) {
    // A new workspace: the state each run leaves for the next one (zero) must be there first.
    if (cudaError_t err = gpu::ZeroSegmentState(ws, stream_); err != cudaSuccess) {
      return CudaError("cudaMemsetAsync", err);
    }
  }
  gpu::PlanOptions plan;
  plan.mode = options_.plan_mode;
  plan.fixed_frame = options_.fixed_frame;
  plan.programmatic_launch = options_.programmatic_launch;
  plan.strided_chunks = options_.strided_chunks;
  plan.crossings_first = options_.crossings_first;
  // The previous call's plan is in this workspace when it was over as many terms and the
  // workspace was not reallocated since.
  const bool reuse = options_.reuse_plan && plan_kept && segments_.data == before &&
                     options_.plan_mode == PlanMode::kApproximatePrefix && options_.strided_chunks;
  const gpu::DeviceArrayTerms source{device_terms};
  if (cudaError_t err = reuse ? gpu::EnqueueSegmentedSumReusingPlan(source, n, ws, plan, stream_)
                              : gpu::EnqueueSegmentedSum(source, n, ws, plan, stream_);
      err != cudaSuccess) {
    return CudaError("kernel launch", err);
  }
  if (cudaError_t err =
          cudaMemcpyAsync(pinned_output_, ws.output, sizeof(gpu::SegmentOutput), cudaMemcpyDeviceToHost, stream_);
      err != cudaSuccess) {
    return CudaError("cudaMemcpyAsync", err);
  }
  if (cudaError_t err = cudaStreamSynchronize(stream_); err != cudaSuccess) return CudaError("ordered sum", err);
  planned_terms_ = n;
  const gpu::SegmentOutput out = static_cast<const PinnedOutput*>(pinned_output_)->segments;
  if (stats != nullptr) {
    stats->segment_plan_reused = reuse ? 1 : 0;
    stats->segment_replanned_chunks = out.replanned_chunks;
    stats->segment_accepted = out.status == gpu::kSegmentAccepted ? 1 : 0;
    stats->segment_steps = out.steps;
    stats->segment_crossing_lanes = out.crossing_lanes;
    stats->segment_tile_chunks = out.tile_chunks;
  }
  if (out.status == gpu::kSegmentAccepted) return DoubleOf(out.sum_bits);
  if (options_.device_pipeline == Pipeline::kSegmentsOnly) {
    return absl::FailedPreconditionError(absl::StrCat(
        "OrderedSumCuda: the segment pipeline ", out.status == gpu::kSegmentRefused ? "refused step " : "overflowed",
        out.status == gpu::kSegmentRefused ? absl::StrCat(out.refused_step) : ""));
  }
  return EventWalkSum(device_terms, n, stats);
}

bool CudaDeviceAvailable(std::string* reason) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    if (reason != nullptr)
      *reason = absl::StrCat("cudaGetDeviceCount failed: ", cudaGetErrorName(err), " (", cudaGetErrorString(err), ")");
    return false;
  }
  if (count == 0) {
    if (reason != nullptr) *reason = "no CUDA device";
    return false;
  }
  return true;
}

}  // namespace exact
}  // namespace exactq
