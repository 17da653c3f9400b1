#include "bench/ssim/ssim_cuda_inexact.h"

#include <cuda_runtime.h>

#include <cstdint>

#include <cub/block/block_reduce.cuh>

#include "engine/exact/device_chunk_summaries.cuh"
#include "engine/metrics/ssim/cuda/ssim_cuda_terms.cuh"
#include "engine/metrics/ssim/ssim_math.h"

namespace exactq {
namespace bench {
namespace {

using ssim::gpu::BlockChunkTerms;
using ssim::gpu::kMinBlocksPerSm;
using ssim::gpu::LumaPlanes;

size_t CounterOffset(int64_t chunks) { return (static_cast<size_t>(chunks) * sizeof(double) + 255) & ~size_t{255}; }

template <class Sample, class VSum, class HSum>
__global__ void __launch_bounds__(exact::gpu::kBlockThreads, kMinBlocksPerSm<Sample>)
    SsimInexactKernel(LumaPlanes<Sample> planes, unsigned chunks, double* chunk_sums, unsigned* finished, double* out) {
  using Terms = BlockChunkTerms<Sample, VSum, HSum>;
  using Final = cub::BlockReduce<double, exact::gpu::kBlockThreads>;
  __shared__ union {
    typename Terms::TempStorage terms;
    exact::gpu::BlockOrderedChunk::TempStorage chunk;
    typename Final::TempStorage final;
  } temp;
  __shared__ bool last;
  double x[exact::gpu::kTermsPerThread];
  int valid;
  Terms::Compute(temp.terms, planes, blockIdx.x, x, valid);
  __syncthreads();  // the span arrays are done before the reduction reuses the storage
  const double sum = exact::gpu::BlockOrderedChunk::ApproximateSum(temp.chunk, x, valid);
  if (threadIdx.x == 0) {
    chunk_sums[blockIdx.x] = sum;
    __threadfence();  // the chunk sum is visible before the count says so
    last = atomicAdd(finished, 1u) == chunks - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  double acc = 0.0;
  for (unsigned c = threadIdx.x; c < chunks; c += exact::gpu::kBlockThreads)
    acc = __dadd_rn(acc, __ldcg(chunk_sums + c));
  const double total = Final(temp.final).Sum(acc);
  if (threadIdx.x == 0) {
    *out = total;
    *finished = 0;  // ready for the next frame on this scratch
  }
}

template <class Sample, class VSum, class HSum>
cudaError_t Launch(const ssim::gpu::SsimDeviceFrame& f, void* scratch, double* out, cudaStream_t stream) {
  const int64_t chunks = ssim::gpu::SsimChunkCount(static_cast<int64_t>(f.width) * f.height);
  LumaPlanes<Sample> planes;
  planes.ref = static_cast<const Sample*>(f.ref);
  planes.dis = static_cast<const Sample*>(f.dis);
  planes.width = f.width;
  planes.height = f.height;
  planes.st = ssim::StabilisersFor(f.bit_depth);
  double* chunk_sums = static_cast<double*>(scratch);
  unsigned* finished = reinterpret_cast<unsigned*>(static_cast<char*>(scratch) + CounterOffset(chunks));
  SsimInexactKernel<Sample, VSum, HSum><<<static_cast<unsigned>(chunks), exact::gpu::kBlockThreads, 0, stream>>>(
      planes, static_cast<unsigned>(chunks), chunk_sums, finished, out);
  return cudaGetLastError();
}

}  // namespace

size_t SsimInexactScratchBytes(int64_t pixels) { return CounterOffset(ssim::gpu::SsimChunkCount(pixels)) + 256; }

cudaError_t EnqueueSsimInexactSum(const ssim::gpu::SsimDeviceFrame& f, void* scratch, double* out,
                                  cudaStream_t stream) {
  if (static_cast<int64_t>(f.width) * f.height < 1 || scratch == nullptr || out == nullptr)
    return cudaErrorInvalidValue;
  // The same integer widths as the exact pipeline (ssim_cuda_terms.cuh).
  if (f.bit_depth <= 8) return Launch<uint8_t, uint32_t, uint32_t>(f, scratch, out, stream);
  if (f.bit_depth <= 12) return Launch<uint16_t, uint32_t, uint64_t>(f, scratch, out, stream);
  return Launch<uint16_t, uint64_t, uint64_t>(f, scratch, out, stream);
}

}  // namespace bench
}  // namespace exactq
