// A batch of segment sums (device_batch.cuh) with its chunk stage in slabs: the terms a
// slab's strided pass reads can then be formed just before it (ssimulacra2's terms
// kernel, slab by slab), so that with many frames in flight they are still in L2. The
// same records, steps and bits as the batch in one pass.
//
// The slabs must cover every chunk of the sum, in order, from a slab at chunk 0: each
// slab is counted on the device, and a sum whose slabs missed a chunk (whose records
// would partly be an earlier frame's) ends with status kSegmentUnstaged, never a sum.
//
//   for (first = 0; first < chunks; first += slab)  // in order, on one stream
//     EnqueueSegmentedSumsChunkStage(batch, n, first, min(first + slab, chunks), options, stream);
//   EnqueueSegmentedSumsFinish(batch, n, options, stream);  // the redo, the groups, the walk
#ifndef EXACTQ_ENGINE_EXACT_DEVICE_SLABS_CUH_
#define EXACTQ_ENGINE_EXACT_DEVICE_SLABS_CUH_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "engine/exact/device_sum.cuh"
#include "engine/exact/internal/segment_batch_kernels.cuh"

namespace exactq {
namespace exact {
namespace gpu {

// The chunk stage for chunks [first, end) of every sum of the batch: slab after slab in
// order on one stream, first a multiple of 32, each slab's chunk sums written before its
// call.
template <class TermSource, int K>
cudaError_t EnqueueSegmentedSumsChunkStage(const SegmentBatch<TermSource, K>& batch, size_t n, int64_t first,
                                           int64_t end, PlanOptions options, cudaStream_t stream) {
  EXACTQ_SET_DEVICE_MUTANT();
  const int64_t chunks = ChunkCount(n);
  if (SegmentGroupCount(chunks) > kSegmentMaxGroups || first < 0 || first % 32 != 0 || end <= first || end > chunks) {
    return cudaErrorInvalidValue;
  }
  const bool pdl = options.programmatic_launch;
  options.crossings_first = false;  // SegmentSuperPrefix forms no run order
  // The one-block stage sized to its runs: a 1,024-thread super-prefix holds half of an
  // SM's registers while it runs, and a frame's small scales have a few dozen chunks or
  // fewer (on the H200, ssimulacra2 at 270p with 16 frames in flight +1.3%; 1080p and 4K
  // the same). A slab takes the small block too.
  const bool whole = first == 0 && end == chunks;
  const bool small = !whole || chunks <= kSmallSumChunks;
  if (cudaError_t err =
          small ? LaunchAfterPrior(SegmentSuperPrefixBatch<K, kSmallSumChunks>, dim3(1, K), kSmallSumChunks, 0, stream,
                                   pdl, chunks, batch.workspaces, first, end)
                : LaunchAfterPrior(SegmentSuperPrefixBatch<K, kSuperPrefixThreads>, dim3(1, K), kSuperPrefixThreads, 0,
                                   stream, pdl, chunks, batch.workspaces, first, end);
      err != cudaSuccess) {
    return err;
  }
  return LaunchAfterPrior(SegmentStridedChunksBatch<TermSource, K>, WarpGrid(end - first, kStridedChunkWarps) * K,
                          kStridedChunkWarps * 32, 0, stream, pdl, batch, n, first, end, options);
}

// After the last slab: the redo of the chunks the strided passes refused, the groups and
// the walk.
template <class TermSource, int K>
cudaError_t EnqueueSegmentedSumsFinish(const SegmentBatch<TermSource, K>& batch, size_t n, PlanOptions options,
                                       cudaStream_t stream) {
  EXACTQ_SET_DEVICE_MUTANT();
  const int64_t chunks = ChunkCount(n);
  if (SegmentGroupCount(chunks) > kSegmentMaxGroups) return cudaErrorInvalidValue;
  if (cudaError_t err = AllowSegmentWalkBatchSharedMemory<K>(); err != cudaSuccess) return err;
  const bool pdl = options.programmatic_launch;
  options.crossings_first = false;
  if (cudaError_t err =
          LaunchAfterPrior(SegmentRedoChunksBatch<TermSource, K>, RedoGrid(chunks, kStridedRedoBlocks) * K,
                           kSegmentWarps * 32, 0, stream, pdl, batch, n, options);
      err != cudaSuccess) {
    return err;
  }
  // The groups sized to the sum, as the super-prefix (a 512-thread block holds half of an
  // SM's registers).
  const bool small = chunks <= kSmallSumChunks;
  const dim3 group_grid(static_cast<unsigned>(SegmentGroupCount(chunks)), K);
  const cudaError_t grouped = chunks <= 32 ? LaunchAfterPrior(SegmentGroupsBatch<K, 32>, group_grid, 32, 0, stream, pdl,
                                                              chunks, batch.workspaces)
                              : small      ? LaunchAfterPrior(SegmentGroupsBatch<K, kSmallSumChunks>, group_grid,
                                                              kSmallSumChunks, 0, stream, pdl, chunks, batch.workspaces)
                                           : LaunchAfterPrior(SegmentGroupsBatch<K, kSegmentGroupChunks>, group_grid,
                                                              kSegmentGroupChunks, 0, stream, pdl, chunks, batch.workspaces);
  if (grouped != cudaSuccess) return grouped;
  return LaunchAfterPrior(SegmentWalkBatch<K, kSegmentWalkThreads>, dim3(1, K), kSegmentWalkThreads,
                          sizeof(SegmentWalkSmem), stream, pdl, chunks, batch.workspaces);
}

}  // namespace gpu
}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_DEVICE_SLABS_CUH_
