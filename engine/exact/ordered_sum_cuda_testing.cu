#include "engine/exact/ordered_sum_cuda_testing.h"

#include <cuda_runtime.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/exact/ordered_sum_kernels.cuh"

namespace exactq {
namespace exact {
namespace {

struct GeneratedTerms {
  size_t n;
  __device__ double operator()(size_t i) const { return GeneratedTerm(i, n); }
};

}  // namespace

absl::StatusOr<double> SumGeneratedTermsOnDevice(size_t n, OrderedSumStats* stats) {
  if (n == 0) return 0.0;
  const int64_t chunks = gpu::ChunkCount(n);
  void* workspace = nullptr;
  if (cudaError_t err = cudaMalloc(&workspace, gpu::WorkspaceBytes(chunks)); err != cudaSuccess) {
    return absl::InternalError(absl::StrCat("cudaMalloc: ", cudaGetErrorString(err)));
  }
  const gpu::Workspace ws = gpu::CarveWorkspace(workspace, chunks);
  gpu::WalkOutput out{};
  cudaError_t err = gpu::EnqueueOrderedSum(GeneratedTerms{n}, n, ws, gpu::PlanOptions{}, nullptr);
  if (err == cudaSuccess) err = cudaMemcpy(&out, ws.output, sizeof out, cudaMemcpyDeviceToHost);
  cudaFree(workspace);
  if (err != cudaSuccess) return absl::InternalError(absl::StrCat("ordered sum of generated terms: ", cudaGetErrorString(err)));
  if (stats != nullptr) {
    *stats = OrderedSumStats{};
    stats->terms = static_cast<int64_t>(n);
    stats->chunks = chunks;
    stats->chunks_rejected = out.chunks_rejected;
    stats->subchunks_rejected = out.subchunks_rejected;
    stats->terms_one_by_one = out.terms_one_by_one;
    stats->walk_windows = out.walk_windows;
  }
  return DoubleOf(out.sum_bits);
}

}  // namespace exact
}  // namespace exactq
