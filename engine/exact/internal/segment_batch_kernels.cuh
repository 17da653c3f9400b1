// The kernels of a batch of segment sums: the two-pass chunk stage (strided from memory,
// then the tile for the refused chunks), and each stage over K workspaces.
#ifndef EXACTQ_ENGINE_EXACT_INTERNAL_SEGMENT_BATCH_KERNELS_CUH_
#define EXACTQ_ENGINE_EXACT_INTERNAL_SEGMENT_BATCH_KERNELS_CUH_

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "engine/exact/internal/segment_groups.cuh"
#include "engine/exact/internal/segment_layout.cuh"
#include "engine/exact/internal/segment_plan_reuse.cuh"
#include "engine/exact/internal/segment_prefix.cuh"
#include "engine/exact/internal/segment_walk.cuh"

namespace exactq {
namespace exact {
namespace gpu {

// The fresh chunk stage in two passes, for a batch whose chunk sums a metric's kernel
// wrote (EnqueueSegmentedSumsFromChunkSums): SegmentStridedChunks, a warp per chunk and
// no tile, tries the strided form straight from device memory and lists the chunks it
// refuses in ws.redo (counted in replanned_chunks: a few per binade the sum crosses, a
// sum's first chunk and its short last chunk); SegmentRedoChunks then forms those through
// the tile, lane by lane. The same records as the one-pass stage (SegmentChunkWarp), which holds a tile per
// warp for every chunk: 8.4 KB, 6 blocks of 4 warps taking 203 KB of an H200 SM's 228,
// so that while it ran little else of other frames fitted beside it.
inline constexpr int kStridedChunkWarps = 4;
template <class TermSource>
__device__ inline void SegmentStridedChunksBlock(const TermSource& source, size_t n, int64_t first_chunk,
                                                 int64_t end_chunk, const PlanOptions& options,
                                                 const SegmentWorkspace& ws, int64_t block, int64_t grid) {
  WaitForPriorKernel();
  const int lane = LaneId();
  const int64_t stride = grid * kStridedChunkWarps;
  for (int64_t c = first_chunk + block * kStridedChunkWarps + (threadIdx.x >> 5); c < end_chunk; c += stride) {
    double approximate_sum;
    const double before = ApproximatePrefix(c, ws, &approximate_sum);
    if (lane == 0) ws.plan_before[c] = before;  // the next frame's plan, where it is reused; the redo's prefix
    const size_t base = static_cast<size_t>(c) * kChunkTerms;
    const int count = TermsInChunk(n, base);
    if (TryStridedChunkFrom(MemoryColumns<TermSource>{source, base}, count, c, before, approximate_sum, options, ws)) {
      continue;
    }
    if (lane == 0) ws.redo[atomicAdd(&ws.counters->replanned_chunks, 1)] = static_cast<int>(c);
  }
}

// The redo grid's cap after SegmentStridedChunks, per sum: the chunks it refuses are a
// few in a hundred on a large plane (every chunk of a plane of a few chunks), so 32
// blocks of 4 warps (the tile path's 33.8 KB each) take them in one round; a resident
// wave launched mostly empty blocks at every sum.
inline constexpr unsigned kStridedRedoBlocks = 32;

// ---------------------------------------------------------------------------------
// Batches: K sums of n terms each, every one with its own TermSource and workspace, in
// four launches instead of 4K (a metric's several sums over one image: ssimulacra2's
// six per channel). Each sum's steps are exactly those of EnqueueSegmentedSumFromChunkSums.
// In the chunk stage, block b of sum k is launch block b * K + k: the K blocks that read
// the same chunk are dispatched together, so sums over one stored array (ssimulacra2's d
// and d^4) or over shared inputs read them from DRAM about once. (A warp taking all the
// sums of a stored array, one tile load for several records, was measured on the H200:
// slower, 267 against 239 us for a 4K channel's six sums; the loads were not the cost.)
template <int K>
struct SegmentWorkspaces {
  SegmentWorkspace ws[K];
};

template <class TermSource, int K>
struct SegmentBatch {
  TermSource source[K];
  SegmentWorkspaces<K> workspaces;
};

// The batch kernels take the batch as a __grid_constant__ parameter and sum k's source
// and workspace by reference into it (k from the block index): each field a block uses
// is one constant load. (Copying sum k's items out of the parameter with a select per
// field and item was a tenth of SegmentStridedChunksBatch's instructions on ssimulacra2's
// 1080p planes: each of its warps takes one chunk.)
template <int K, int kThreads = kSuperPrefixThreads>
__global__ void __launch_bounds__(kThreads)
    SegmentSuperPrefixBatch(int64_t chunks, const __grid_constant__ SegmentWorkspaces<K> batch, int64_t first_chunk,
                            int64_t end_chunk) {
  const SegmentWorkspace& ws = batch.ws[blockIdx.y];
  SegmentSuperPrefixBlock<kThreads>(chunks, ws, first_chunk, end_chunk);
  // The same thread that emptied the pools at slab 0, after it did.
  if (threadIdx.x == 0) ws.counters->staging = AfterSlab(ws.counters->staging, first_chunk, end_chunk);
}

// 12 blocks of 4 warps per SM: 40 registers. (Without the bound ptxas also took 40, with
// more spilled; at 62 registers, 8 blocks, ssimulacra2's exact frames were 1-3% slower on
// the H200 with 8 in flight: the pass waits on its loads, and more warps hide them. Nor
// do more loads in flight per lane pay for their registers: 8 or 16 steps at a time, 64
// registers and 8 blocks, were the same and 1% slower with 16 in flight.)
// Turing (sm_75, in release builds) holds 1,024 threads per SM, later GPUs 2,048.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
inline constexpr int kStridedBlocksPerSm = 8;
#else
inline constexpr int kStridedBlocksPerSm = 12;
#endif

template <class TermSource, int K>
__global__ void __launch_bounds__(kStridedChunkWarps * 32, kStridedBlocksPerSm)
    SegmentStridedChunksBatch(const __grid_constant__ SegmentBatch<TermSource, K> batch, size_t n, int64_t first_chunk,
                              int64_t end_chunk, PlanOptions options) {
  const unsigned k = blockIdx.x % K;
  SegmentStridedChunksBlock(batch.source[k], n, first_chunk, end_chunk, options, batch.workspaces.ws[k], blockIdx.x / K,
                            gridDim.x / K);
}

template <class TermSource, int K>
__global__ void __launch_bounds__(kSegmentWarps * 32, 6)
    SegmentRedoChunksBatch(const __grid_constant__ SegmentBatch<TermSource, K> batch, size_t n, PlanOptions options) {
  const unsigned k = blockIdx.x % K;
  SegmentRedoChunksBlock</*kStridedTried=*/true>(batch.source[k], n, options, batch.workspaces.ws[k], blockIdx.x / K,
                                                 gridDim.x / K);
}

template <int K, int kThreads = kSegmentGroupChunks>
__global__ void __launch_bounds__(kThreads)
    SegmentGroupsBatch(int64_t chunks, const __grid_constant__ SegmentWorkspaces<K> batch) {
  SegmentGroupsBlock<kThreads>(chunks, batch.ws[blockIdx.y], blockIdx.x);
}

template <int K, int kThreads = kSegmentWalkThreads>
__global__ void __launch_bounds__(kThreads)
    SegmentWalkBatch(int64_t chunks, const __grid_constant__ SegmentWorkspaces<K> batch) {
  SegmentWalkBlock<kThreads, /*kStagedInSlabs=*/true>(chunks, batch.ws[blockIdx.y]);
}

template <int K>
cudaError_t AllowSegmentWalkBatchSharedMemory() {
  static std::atomic<uint64_t> done{0};
  return AllowSharedMemoryOnce(SegmentWalkBatch<K, kSegmentWalkThreads>, static_cast<int>(sizeof(SegmentWalkSmem)),
                               done);
}

}  // namespace gpu
}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_INTERNAL_SEGMENT_BATCH_KERNELS_CUH_
