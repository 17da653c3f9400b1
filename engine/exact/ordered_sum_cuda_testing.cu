#include "engine/exact/ordered_sum_cuda_testing.h"

#include <cuda_runtime.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/exact/ordered_sum_kernels.cuh"
#include "engine/exact/ordered_sum_segments.cuh"

namespace exactq {
namespace exact {
namespace {

struct GeneratedTerms {
  size_t n;
  __device__ double operator()(size_t i) const { return GeneratedTerm(i, n); }
};

struct GeneratedBatchTerms {
  size_t n;
  int k;
  __device__ double operator()(size_t i) const { return GeneratedBatchTerm(i, n, k); }
};

struct ChunkSumOutputs {
  double* p[kGeneratedBatch];
};

// One thread per chunk and sum: the chunk's terms added in order (any order would do).
__global__ void GeneratedChunkSums(size_t n, int64_t chunks, ChunkSumOutputs out) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= chunks * kGeneratedBatch) return;
  const int k = static_cast<int>(t % kGeneratedBatch);
  const int64_t c = t / kGeneratedBatch;
  double s = 0.0;
  for (size_t i = static_cast<size_t>(c) * gpu::kChunkTerms; i < n && i < static_cast<size_t>(c + 1) * gpu::kChunkTerms;
       ++i) {
    s += GeneratedBatchTerm(i, n, k);
  }
  out.p[k][c] = s;
}

struct StoredBatchMapOf {
  int k;
  __device__ double operator()(double x) const { return StoredBatchMap(k, x); }
};

struct StoredChunkSumOutputs {
  double* p[kStoredBatch];
};

__global__ void StoreBatchArrays(size_t n, double* a, double* b) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  a[i] = StoredBatchValue(i, n, 0);
  b[i] = StoredBatchValue(i, n, 2);
}

// One thread per chunk and sum, as GeneratedChunkSums.
__global__ void StoredChunkSums(size_t n, int64_t chunks, const double* a, const double* b, StoredChunkSumOutputs out) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= chunks * kStoredBatch) return;
  const int k = static_cast<int>(t % kStoredBatch);
  const int64_t c = t / kStoredBatch;
  const double* stored = k == 2 ? b : a;
  double s = 0.0;
  for (size_t i = static_cast<size_t>(c) * gpu::kChunkTerms; i < n && i < static_cast<size_t>(c + 1) * gpu::kChunkTerms;
       ++i) {
    s += StoredBatchMap(k, stored[i]);
  }
  out.p[k][c] = s;
}

}  // namespace

absl::StatusOr<StoredBatchSums> SumStoredBatchOnDevice(size_t n) {
  if (n == 0 || !gpu::SegmentPipelineFits(n)) return absl::InvalidArgumentError("n out of the segment pipeline's range");
  const int64_t chunks = gpu::ChunkCount(n);
  const size_t region = gpu::SegmentWorkspaceBytes(chunks);
  const size_t arrays = (2 * n * sizeof(double) + 255) / 256 * 256;
  char* workspace = nullptr;
  if (cudaError_t err = cudaMalloc(&workspace, arrays + kStoredBatch * region); err != cudaSuccess) {
    return absl::InternalError(absl::StrCat("cudaMalloc: ", cudaGetErrorString(err)));
  }
  double* a = reinterpret_cast<double*>(workspace);
  double* b = a + n;
  char* regions = workspace + arrays;
  using Stored = gpu::MappedArrayTerms<StoredBatchMapOf>;
  gpu::SegmentBatch<Stored, kStoredBatch> batch;
  StoredChunkSumOutputs chunk_sums;
  cudaError_t err = cudaSuccess;
  for (int k = 0; k < kStoredBatch; ++k) {
    batch.source[k] = Stored{k == 2 ? b : a, StoredBatchMapOf{k}};
    batch.workspaces.ws[k] = gpu::CarveSegmentWorkspace(regions + k * region, chunks);
    chunk_sums.p[k] = batch.workspaces.ws[k].chunk_sums;
    if (err == cudaSuccess) err = gpu::ZeroSegmentState(batch.workspaces.ws[k], nullptr);
  }
  StoredBatchSums result{};
  if (err == cudaSuccess) {
    StoreBatchArrays<<<static_cast<unsigned>((n + 255) / 256), 256>>>(n, a, b);
    const int64_t threads = chunks * kStoredBatch;
    StoredChunkSums<<<static_cast<unsigned>((threads + 255) / 256), 256>>>(n, chunks, a, b, chunk_sums);
    err = cudaGetLastError();
  }
  if (err == cudaSuccess) err = gpu::EnqueueSegmentedSumsFromChunkSums(batch, n, gpu::PlanOptions{}, nullptr);
  for (int k = 0; k < kStoredBatch && err == cudaSuccess; ++k) {
    gpu::SegmentOutput out{};
    err = cudaMemcpy(&out, batch.workspaces.ws[k].output, sizeof out, cudaMemcpyDeviceToHost);
    result.sums[k] = DoubleOf(out.sum_bits);
    result.status[k] = out.status;
  }
  cudaFree(workspace);
  if (err != cudaSuccess) return absl::InternalError(absl::StrCat("stored batch segment sums: ", cudaGetErrorString(err)));
  return result;
}

absl::StatusOr<GeneratedBatchSums> SumGeneratedBatchOnDevice(size_t n) {
  if (n == 0 || !gpu::SegmentPipelineFits(n)) return absl::InvalidArgumentError("n out of the segment pipeline's range");
  const int64_t chunks = gpu::ChunkCount(n);
  const size_t region = gpu::SegmentWorkspaceBytes(chunks);
  char* workspace = nullptr;
  if (cudaError_t err = cudaMalloc(&workspace, kGeneratedBatch * region); err != cudaSuccess) {
    return absl::InternalError(absl::StrCat("cudaMalloc: ", cudaGetErrorString(err)));
  }
  gpu::SegmentBatch<GeneratedBatchTerms, kGeneratedBatch> batch;
  ChunkSumOutputs chunk_sums;
  cudaError_t err = cudaSuccess;
  for (int k = 0; k < kGeneratedBatch; ++k) {
    batch.source[k] = GeneratedBatchTerms{n, k};
    batch.workspaces.ws[k] = gpu::CarveSegmentWorkspace(workspace + k * region, chunks);
    chunk_sums.p[k] = batch.workspaces.ws[k].chunk_sums;
    if (err == cudaSuccess) err = gpu::ZeroSegmentState(batch.workspaces.ws[k], nullptr);
  }
  const int64_t threads = chunks * kGeneratedBatch;
  if (err == cudaSuccess) {
    GeneratedChunkSums<<<static_cast<unsigned>((threads + 255) / 256), 256>>>(n, chunks, chunk_sums);
    err = cudaGetLastError();
  }
  if (err == cudaSuccess) err = gpu::EnqueueSegmentedSumsFromChunkSums(batch, n, gpu::PlanOptions{}, nullptr);
  GeneratedBatchSums result{};
  for (int k = 0; k < kGeneratedBatch && err == cudaSuccess; ++k) {
    gpu::SegmentOutput out{};
    err = cudaMemcpy(&out, batch.workspaces.ws[k].output, sizeof out, cudaMemcpyDeviceToHost);
    result.sums[k] = DoubleOf(out.sum_bits);
    result.status[k] = out.status;
  }
  cudaFree(workspace);
  if (err != cudaSuccess) return absl::InternalError(absl::StrCat("batched segment sums: ", cudaGetErrorString(err)));
  return result;
}

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
