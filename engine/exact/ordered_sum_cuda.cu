#include "engine/exact/ordered_sum_cuda.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "engine/exact/ordered_sum_kernels.cuh"

namespace exactq {
namespace exact {
namespace {

absl::Status CudaError(const char* what, cudaError_t err) {
  return absl::InternalError(absl::StrCat("OrderedSumCuda: ", what, ": ", cudaGetErrorName(err), " (",
                                          cudaGetErrorString(err), ")"));
}

}  // namespace

OrderedSumCuda::OrderedSumCuda(cudaStream_t stream, OrderedSumOptions options)
    : stream_(stream), options_(options) {}

OrderedSumCuda::~OrderedSumCuda() {
  // Errors here can only be reported by a log; the process may be tearing CUDA down.
  if (workspace_ != nullptr) cudaFree(workspace_);
  if (pinned_output_ != nullptr) cudaFreeHost(pinned_output_);
}

absl::Status OrderedSumCuda::Reserve(int64_t chunks) {
  if (pinned_output_ == nullptr) {
    if (cudaError_t err = cudaMallocHost(&pinned_output_, sizeof(gpu::WalkOutput)); err != cudaSuccess) {
      pinned_output_ = nullptr;
      return CudaError("cudaMallocHost", err);
    }
  }
  if (chunks <= workspace_chunks_) return absl::OkStatus();
  if (workspace_ != nullptr) {
    // The previous workspace may still be in use by work queued on the stream.
    if (cudaError_t err = cudaStreamSynchronize(stream_); err != cudaSuccess) return CudaError("cudaStreamSynchronize", err);
    cudaFree(workspace_);
    workspace_ = nullptr;
    workspace_chunks_ = 0;
  }
  // Grow geometrically so a stream of slightly larger frames does not reallocate each time.
  const int64_t want = chunks + chunks / 4;
  if (cudaError_t err = cudaMalloc(&workspace_, gpu::WorkspaceBytes(want)); err != cudaSuccess) {
    workspace_ = nullptr;
    if (err == cudaErrorMemoryAllocation) {
      return absl::ResourceExhaustedError(absl::StrCat("OrderedSumCuda: no device memory for ", want, " chunks"));
    }
    return CudaError("cudaMalloc", err);
  }
  workspace_chunks_ = want;
  return absl::OkStatus();
}

absl::StatusOr<double> OrderedSumCuda::Sum(const double* device_terms, size_t n, OrderedSumStats* stats) {
  if (options_.chunk_terms != gpu::kChunkTerms || options_.subchunk_terms != gpu::kSubchunkTerms) {
    return absl::InvalidArgumentError("OrderedSumCuda: the device layout fixes chunk_terms = 1024 and subchunk_terms = 32");
  }
  if (stats != nullptr) {
    *stats = OrderedSumStats{};
    stats->terms = static_cast<int64_t>(n);
    stats->chunks = gpu::ChunkCount(n);
  }
  if (n == 0) return 0.0;  // the loop's +0
  if (device_terms == nullptr) return absl::InvalidArgumentError("OrderedSumCuda: null terms");

  const int64_t chunks = gpu::ChunkCount(n);
  if (absl::Status s = Reserve(chunks); !s.ok()) return s;
  const gpu::Workspace ws = gpu::CarveWorkspace(workspace_, workspace_chunks_);
  gpu::PlanOptions plan;
  plan.mode = options_.plan_mode;
  plan.fixed_frame = options_.fixed_frame;
  if (cudaError_t err = gpu::EnqueueOrderedSum(gpu::DeviceArrayTerms{device_terms}, n, ws, plan, stream_);
      err != cudaSuccess) {
    return CudaError("kernel launch", err);
  }
  if (cudaError_t err = cudaMemcpyAsync(pinned_output_, ws.output, sizeof(gpu::WalkOutput), cudaMemcpyDeviceToHost, stream_);
      err != cudaSuccess) {
    return CudaError("cudaMemcpyAsync", err);
  }
  if (cudaError_t err = cudaStreamSynchronize(stream_); err != cudaSuccess) return CudaError("ordered sum", err);

  const gpu::WalkOutput& out = *static_cast<const gpu::WalkOutput*>(pinned_output_);
  if (stats != nullptr) {
    stats->chunks_rejected = out.chunks_rejected;
    stats->subchunks_rejected = out.subchunks_rejected;
    stats->terms_one_by_one = out.terms_one_by_one;
    stats->walk_windows = out.walk_windows;
  }
  return DoubleOf(out.sum_bits);
}

bool CudaDeviceAvailable(std::string* reason) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    if (reason != nullptr) *reason = absl::StrCat("cudaGetDeviceCount failed: ", cudaGetErrorName(err), " (", cudaGetErrorString(err), ")");
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
