// K segment sums of n terms each, every one with its own TermSource and workspace, in
// five launches instead of 4K (a metric's several sums over one image: ssimulacra2's six
// per channel), from chunk sums a metric's kernel wrote. Each sum's steps and bits are
// those of EnqueueSegmentedSumFromChunkSums (device_sum.cuh); sum k's status and bits are
// in batch.workspaces.ws[k].output.
#ifndef EXACTQ_ENGINE_EXACT_DEVICE_BATCH_CUH_
#define EXACTQ_ENGINE_EXACT_DEVICE_BATCH_CUH_

#include <cuda_runtime.h>

#include <cstddef>

#include "engine/exact/device_slabs.cuh"
#include "engine/exact/internal/segment_batch_kernels.cuh"

namespace exactq {
namespace exact {
namespace gpu {

// EnqueueSegmentedSumFromChunkSums for each of the batch's K sums: the chunk stage in two
// passes (SegmentStridedChunks, then SegmentRedoChunks for the chunks it refused);
// batch.workspaces.ws[k].chunk_sums must hold sum k's approximate chunk sums.
template <class TermSource, int K>
cudaError_t EnqueueSegmentedSumsFromChunkSums(const SegmentBatch<TermSource, K>& batch, size_t n, PlanOptions options,
                                              cudaStream_t stream) {
  if (cudaError_t err = EnqueueSegmentedSumsChunkStage(batch, n, 0, ChunkCount(n), options, stream);
      err != cudaSuccess) {
    return err;
  }
  return EnqueueSegmentedSumsFinish(batch, n, options, stream);
}

}  // namespace gpu
}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_DEVICE_BATCH_CUH_
