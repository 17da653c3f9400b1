#include "engine/exact/testing/ordered_sum_cuda_testing.h"

#include <algorithm>

#include <cuda_runtime.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/exact/device_batch.cuh"
#include "engine/exact/device_sum.cuh"

namespace exactq {
namespace exact {

static_assert(kBatchAccepted == gpu::kSegmentAccepted && kBatchRefused == gpu::kSegmentRefused &&
                  kBatchOverflow == gpu::kSegmentOverflow && kBatchUnstaged == gpu::kSegmentUnstaged,
              "BatchSumsOnDevice::status carries the segment pipeline's status");

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

struct StoredBatchMapOf {
  int k;
  __device__ double operator()(double x) const { return StoredBatchMap(k, x); }
};

// Sum 4's map fixed: a square is >= 0 whenever it is finite.
struct StoredBatchSquare {
  static constexpr bool kNonNegativeTerms = true;
  __device__ double operator()(double x) const { return StoredBatchMap(4, x); }
};
template <class F>
__device__ void VisitMap(const StoredBatchMapOf& map, F&& f) {
  if (map.k == 4) {
    f(StoredBatchSquare{});
  } else {
    f(map);
  }
}

// Term i of sum k, for the chunk sums.
struct GeneratedBatchTermOf {
  size_t n;
  __device__ double operator()(size_t i, int k) const { return GeneratedBatchTerm(i, n, k); }
};
struct StoredBatchTermOf {
  size_t n;
  __device__ double operator()(size_t i, int k) const { return StoredBatchTerm(i, n, k); }
};

template <int K>
struct ChunkSumOutputs {
  double* p[K];
};

// One thread per chunk and sum: the chunk's terms added in order (any order would do).
template <int K, class TermOf>
__global__ void ChunkSumsOf(size_t n, int64_t chunks, TermOf term, ChunkSumOutputs<K> out) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= chunks * K) return;
  const int k = static_cast<int>(t % K);
  const int64_t c = t / K;
  double s = 0.0;
  for (size_t i = static_cast<size_t>(c) * gpu::kChunkTerms; i < n && i < static_cast<size_t>(c + 1) * gpu::kChunkTerms;
       ++i) {
    s += term(i, k);
  }
  out.p[k][c] = s;
}

__global__ void StoreBatchArrays(size_t n, double* a, double* b) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  a[i] = StoredBatchValue(i, n, 0);
  b[i] = StoredBatchValue(i, n, 2);
}

// The chunk stage slab by slab, then the rest, leaving out slab `skipped` (none: -1).
template <class Source, int K>
cudaError_t EnqueueInSlabs(const gpu::SegmentBatch<Source, K>& batch, size_t n, int64_t slab_chunks,
                           int64_t skipped = -1) {
  const int64_t chunks = gpu::ChunkCount(n);
  cudaError_t err = cudaSuccess;
  for (int64_t first = 0, slab = 0; first < chunks && err == cudaSuccess; first += slab_chunks, ++slab) {
    if (slab == skipped) continue;
    err = gpu::EnqueueSegmentedSumsChunkStage(batch, n, first, std::min(chunks, first + slab_chunks),
                                              gpu::PlanOptions{}, nullptr);
  }
  if (err == cudaSuccess) err = gpu::EnqueueSegmentedSumsFinish(batch, n, gpu::PlanOptions{}, nullptr);
  return err;
}

// A batch whose sources are set: each sum's workspace carved from `regions` and zeroed,
// its chunk sums from ChunkSumsOf(term_of), the pipeline's launches (the chunk stage slab
// by slab when slab_chunks > 0), and each sum's output. skipped_slab >= 0: a complete run
// in slabs first (its records stay in the workspaces), then one without that slab.
template <class Source, int K, class TermOf>
cudaError_t RunBatch(size_t n, char* regions, gpu::SegmentBatch<Source, K>& batch, TermOf term_of,
                     BatchSumsOnDevice<K>& result, int64_t slab_chunks = 0, int64_t skipped_slab = -1) {
  const int64_t chunks = gpu::ChunkCount(n);
  const size_t region = gpu::SegmentWorkspaceBytes(chunks);
  ChunkSumOutputs<K> chunk_sums;
  cudaError_t err = cudaSuccess;
  for (int k = 0; k < K; ++k) {
    batch.workspaces.ws[k] = gpu::CarveSegmentWorkspace(regions + k * region, chunks);
    chunk_sums.p[k] = batch.workspaces.ws[k].chunk_sums;
    if (err == cudaSuccess) err = gpu::ZeroSegmentState(batch.workspaces.ws[k], nullptr);
  }
  if (err == cudaSuccess) {
    const int64_t threads = chunks * K;
    ChunkSumsOf<K><<<static_cast<unsigned>((threads + 255) / 256), 256>>>(n, chunks, term_of, chunk_sums);
    err = cudaGetLastError();
  }
  if (slab_chunks > 0) {
    if (err == cudaSuccess && skipped_slab >= 0) err = EnqueueInSlabs(batch, n, slab_chunks);
    if (err == cudaSuccess) err = EnqueueInSlabs(batch, n, slab_chunks, skipped_slab);
  } else if (err == cudaSuccess) {
    err = gpu::EnqueueSegmentedSumsFromChunkSums(batch, n, gpu::PlanOptions{}, nullptr);
  }
  for (int k = 0; k < K && err == cudaSuccess; ++k) {
    gpu::SegmentOutput out{};
    err = cudaMemcpy(&out, batch.workspaces.ws[k].output, sizeof out, cudaMemcpyDeviceToHost);
    result.sums[k] = DoubleOf(out.sum_bits);
    result.status[k] = out.status;
  }
  return err;
}

}  // namespace

absl::StatusOr<StoredBatchSums> SumStoredBatchOnDevice(size_t n, int64_t slab_chunks, int64_t skipped_slab) {
  if (slab_chunks < 0 || slab_chunks % 32 != 0) return absl::InvalidArgumentError("slab_chunks: a multiple of 32");
  if (skipped_slab >= 0 && slab_chunks == 0) return absl::InvalidArgumentError("skipped_slab needs slab_chunks");
  if (n == 0 || !gpu::SegmentPipelineFits(n))
    return absl::InvalidArgumentError("n out of the segment pipeline's range");
  const size_t arrays = (2 * n * sizeof(double) + 255) / 256 * 256;
  char* workspace = nullptr;
  if (cudaError_t err = cudaMalloc(&workspace, arrays + kStoredBatch * gpu::SegmentWorkspaceBytes(gpu::ChunkCount(n)));
      err != cudaSuccess) {
    return absl::InternalError(absl::StrCat("cudaMalloc: ", cudaGetErrorString(err)));
  }
  double* a = reinterpret_cast<double*>(workspace);
  double* b = a + n;
  using Stored = gpu::MappedArrayTerms<StoredBatchMapOf>;
  gpu::SegmentBatch<Stored, kStoredBatch> batch;
  for (int k = 0; k < kStoredBatch; ++k) batch.source[k] = Stored{k == 2 ? b : a, StoredBatchMapOf{k}};
  StoreBatchArrays<<<static_cast<unsigned>((n + 255) / 256), 256>>>(n, a, b);
  StoredBatchSums result{};
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) {
    err = RunBatch(n, workspace + arrays, batch, StoredBatchTermOf{n}, result, slab_chunks, skipped_slab);
  }
  cudaFree(workspace);
  if (err != cudaSuccess)
    return absl::InternalError(absl::StrCat("stored batch segment sums: ", cudaGetErrorString(err)));
  return result;
}

namespace {

// Term i of adversarial sum k from its array, the advice of sum kAdversarialWrongAdvice
// scaled by 2^30 (a power of two: the chunk sums stay exact multiples of the true ones).
struct AdversarialTermOf {
  const double* terms[kAdversarialBatch];
  __device__ double operator()(size_t i, int k) const {
    return k == kAdversarialWrongAdvice ? terms[k][i] * 0x1p30 : terms[k][i];
  }
};

// Sum k's terms at terms + k * n.
__global__ void StoreAdversarialArrays(size_t n, double* terms) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (int k = 0; k < kAdversarialBatch; ++k) terms[k * n + i] = AdversarialBatchTerm(i, n, k);
}

}  // namespace

absl::StatusOr<AdversarialBatchSums> SumAdversarialBatchOnDevice(size_t n, int64_t slab_chunks) {
  if (slab_chunks < 0 || slab_chunks % 32 != 0) return absl::InvalidArgumentError("slab_chunks: a multiple of 32");
  if (n == 0 || !gpu::SegmentPipelineFits(n))
    return absl::InvalidArgumentError("n out of the segment pipeline's range");
  const size_t arrays = (kAdversarialBatch * n * sizeof(double) + 255) / 256 * 256;
  char* workspace = nullptr;
  if (cudaError_t err =
          cudaMalloc(&workspace, arrays + kAdversarialBatch * gpu::SegmentWorkspaceBytes(gpu::ChunkCount(n)));
      err != cudaSuccess) {
    return absl::InternalError(absl::StrCat("cudaMalloc: ", cudaGetErrorString(err)));
  }
  AdversarialTermOf term_of{};
  gpu::SegmentBatch<gpu::DeviceArrayTerms, kAdversarialBatch> batch;
  for (int k = 0; k < kAdversarialBatch; ++k) {
    term_of.terms[k] = reinterpret_cast<double*>(workspace) + k * n;
    batch.source[k] = gpu::DeviceArrayTerms{term_of.terms[k]};
  }
  StoreAdversarialArrays<<<static_cast<unsigned>((n + 255) / 256), 256>>>(n, reinterpret_cast<double*>(workspace));
  AdversarialBatchSums result{};
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = RunBatch(n, workspace + arrays, batch, term_of, result, slab_chunks);
  cudaFree(workspace);
  if (err != cudaSuccess)
    return absl::InternalError(absl::StrCat("adversarial batch segment sums: ", cudaGetErrorString(err)));
  return result;
}

absl::StatusOr<GeneratedBatchSums> SumGeneratedBatchOnDevice(size_t n) {
  if (n == 0 || !gpu::SegmentPipelineFits(n))
    return absl::InvalidArgumentError("n out of the segment pipeline's range");
  char* workspace = nullptr;
  if (cudaError_t err = cudaMalloc(&workspace, kGeneratedBatch * gpu::SegmentWorkspaceBytes(gpu::ChunkCount(n)));
      err != cudaSuccess) {
    return absl::InternalError(absl::StrCat("cudaMalloc: ", cudaGetErrorString(err)));
  }
  gpu::SegmentBatch<GeneratedBatchTerms, kGeneratedBatch> batch;
  for (int k = 0; k < kGeneratedBatch; ++k) batch.source[k] = GeneratedBatchTerms{n, k};
  GeneratedBatchSums result{};
  const cudaError_t err = RunBatch(n, workspace, batch, GeneratedBatchTermOf{n}, result);
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
  if (err != cudaSuccess)
    return absl::InternalError(absl::StrCat("ordered sum of generated terms: ", cudaGetErrorString(err)));
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
