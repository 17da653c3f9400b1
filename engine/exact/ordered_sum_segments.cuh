// The segment pipeline: the fast path of the exact ordered sum on the device.
//
// The running sum of a frame's terms changes binade (or sign) at a few places only: about
// one per binade its path crosses. The approximate prefix says where, sub-chunk by
// sub-chunk. A sub-chunk whose approximate path may leave its binade (a "crossing lane")
// is added term by term with real binary64 adds; everything between two crossing lanes
// is one segment under one frame, composed in parallel (within a chunk by a warp scan,
// across chunks by a block scan) and applied with ONE TryApplyRun check. So the serial
// walk takes one step per crossing, not per chunk or per refused chunk, and every step
// works on data already staged in shared memory.
//
// Every step is still the exact check against the exact sum. When a check refuses a
// segment (a prediction was wrong: a path within 2^-20 of a binade edge that the
// approximation missed, a wrong plan in a test), or a pool overflows (very many
// crossings), the output says so and the caller runs the event-walk pipeline of
// ordered_sum_kernels.cuh, which handles every case. Either way the bits are the loop's;
// a refusal costs time only.
//
// Four kernels on one stream (chunks of 1024 terms; lane k of a warp = sub-chunk k):
//   SegmentApproximateSums  one block per run of 32 chunks: the approximate sum of each
//                      chunk and of the run; the last block to finish forms the exclusive
//                      prefix of the run sums (in a fixed order, but any order would do:
//                      it is advice), and the order in which the chunk stage takes the
//                      runs: those whose path comes near a frame's edge first (crossings
//                      first). A metric's own kernel may write the chunk sums instead
//                      (EnqueueSegmentedSumFromChunkSums): then SegmentSuperPrefix, one
//                      block, forms the run sums and their prefix from them (index order);
//   SegmentChunkWarp   one warp per chunk: the approximate prefix before it (one 32-chunk
//                      prefix and at most 31 chunk sums); the chunk as ONE run from its
//                      tile's columns where that is possible (TryStridedChunk: nearly
//                      every chunk), else each lane's approximate path and frame, the
//                      crossing lanes, and the other lanes composed per segment (a
//                      segmented warp scan) into a ChunkRecord: head run, tail run, middle
//                      steps;
//   SegmentGroups      one block per group of 512 chunks, one thread per chunk: runs
//                      composed across chunks (a segmented scan) into the group's ordered
//                      list of walk steps;
//   SegmentWalk        one block: thread 0 applies the steps to the exact sum while warps
//                      1.. stage the next batch (steps and crossing-lane terms); it also
//                      leaves the pools empty for the next run (after allocating,
//                      ZeroSegmentState does it once).
// The ADVICE (which lanes cross) depends only on the approximate sums, never the result.
// For the next frame of a stream, EnqueueSegmentedSumReusingPlan (section 3') runs the
// chunk stage under the previous frame's plan first and then redoes only the chunks this
// frame's plan changes (the confirm stage: SegmentConfirmRuns lists them, a warp per run
// of 32 chunks; SegmentRedoChunks forms them): the same records, hence the same steps and
// bits. A batch of sums whose chunk sums a metric's kernel wrote
// (EnqueueSegmentedSumsFromChunkSums) takes the chunk stage in two passes:
// SegmentStridedChunks, the strided form straight from device memory with no tile, and
// SegmentRedoChunks, the tile path for the chunks it refused (the one-pass stage's tiles
// filled the SMs' shared memory while it ran). Such a batch may take its chunk stage in
// slabs (EnqueueSegmentedSumsChunkStage, then EnqueueSegmentedSumsFinish), each slab's
// terms formed just before its strided pass reads them.
//
//   exact::gpu::SegmentWorkspace ws = exact::gpu::CarveSegmentWorkspace(base, chunks);
//   exact::gpu::ZeroSegmentState(ws, stream);  // once, after allocating `base`
//   exact::gpu::EnqueueSegmentedSum(exact::gpu::DeviceArrayTerms{d_terms}, n, ws, plan, stream);
//   // ws.output->status == kSegmentAccepted: ws.output->sum_bits are the loop's bits;
//   // otherwise run EnqueueOrderedSum on the same terms.
#ifndef EXACTQ_ENGINE_EXACT_ORDERED_SUM_SEGMENTS_CUH_
#define EXACTQ_ENGINE_EXACT_ORDERED_SUM_SEGMENTS_CUH_

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <cuda_pipeline.h>

#include <cub/block/block_scan.cuh>

#include "engine/exact/ordered_sum_algebra.h"
#include "engine/exact/ordered_sum_fast.h"
#include "engine/exact/ordered_sum_kernels.cuh"

namespace exactq {
namespace exact {
namespace gpu {

inline constexpr int kSegmentWarps = 4;          // SegmentChunkWarp block
inline constexpr int kSegmentGroupChunks = 512;  // SegmentGroups block: one thread per chunk
// A sum of at most this many chunks (four runs of 32) takes its super-prefix and groups
// stages in blocks of as many threads (groups: 32 for 32 chunks or fewer), not 1,024 and
// kSegmentGroupChunks: EnqueueSegmentedSumsFromChunkSums.
inline constexpr int kSmallSumChunks = 128;
inline constexpr int kSegmentGroupSteps = 4096;  // steps one group may emit
inline constexpr int kSegmentWalkThreads = 64;
inline constexpr int kSegmentBatch = 64;            // steps staged per batch
inline constexpr int kSegmentMaxGroups = 2048;      // 2^30 terms; beyond, callers use the event walk
inline constexpr int32_t kNoRunFrame = 0x7fffffff;  // "no run here" (a chunk that starts or ends with a crossing lane)

// One step of the walk: a run of terms summarised under `frame` (lane_terms < 0), or the
// `frame` terms of a crossing lane to add one by one, at lane_terms * 32 in the lane pool.
struct SegmentStep {
  RunSummary run;
  int32_t frame;
  int32_t lane_terms;
};
static_assert(sizeof(SegmentStep) == 64, "SegmentStep is copied as 4 x 16 bytes");

// What SegmentChunkWarp leaves for SegmentGroups. A uniform chunk (no crossing lane, one
// frame) is one run: `head`. A mixed chunk: `head` runs from the chunk start to the first
// crossing lane or frame change (frame kNoRunFrame if there is none), `tail` from the last
// one to the chunk end, and middle_count steps in between at middle[middle_base].
struct ChunkRecord {
  SegmentStep head;
  SegmentStep tail;
  int32_t mixed;
  int32_t middle_base;
  int32_t middle_count;
  // Set by SegmentChunkUnderPreviousPlan only: 1 when `head` is the chunk's strided run
  // under the previous frame's plan, which the confirm stage (SegmentConfirmRun) keeps if
  // this frame's plan is the same; 0 when the chunk must be summarised again.
  int32_t planned;
};

// The ticket counter and the pools SegmentChunkWarp takes from; SegmentWalk zeroes them
// for the next run.
struct SegmentCounters {
  int middle_taken;
  int lanes_taken;
  int overflow;
  int supers_done;       // SegmentApproximateSums' blocks that have written their run's sum
  int tile_chunks;       // chunks the strided form refused (summarised lane by lane in the tile)
  int replanned_chunks;  // chunks listed in ws.redo: under a reused plan, those this frame's plan changed;
                         // in the batch's two-pass chunk stage, those the strided pass refused
};

inline constexpr int32_t kSegmentAccepted = 0;  // sum_bits are the loop's
inline constexpr int32_t kSegmentRefused = 1;   // a check refused a step: run the event walk
inline constexpr int32_t kSegmentOverflow = 2;  // a pool or a group's step list was full: run the event walk

struct SegmentOutput {
  uint64_t sum_bits;
  int32_t status;
  int32_t steps;             // steps applied
  int32_t crossing_lanes;    // of them, crossing lanes (32 terms added one by one each)
  int32_t refused_step;      // the global index of the refused step, or -1
  int32_t terms_one_by_one;  // terms the walk added with binary64 adds (in the crossing lanes)
  int32_t tile_chunks;       // chunks summarised lane by lane in the tile (the rest: strided)
  int32_t replanned_chunks;  // chunks the redo stage summarised (SegmentCounters::replanned_chunks)
  int32_t pad;
  int64_t cycles_total;  // the walk's thread from its first step to its result (clock64), for benchmarks
};

struct SegmentWorkspace {
  double* chunk_sums;         // [chunks]
  double* plan_before;        // [chunks]: the approximate prefix each chunk was planned from (for the next frame)
  double* super_sums;         // [supers]: sums of 32 chunks
  double* super_prefix;       // [supers]: the exclusive prefix of super_sums
  double* super_low;          // [supers]: the approximate path's extremes through each run of 32 chunks,
  double* super_high;         //   chunk by chunk, from the run's start (OrderRunsByCrossing)
  int* super_order;           // [supers]: the runs in the order the chunk stage takes them (crossings_first)
  unsigned* super_arrivals;   // [supers]: chunks of the run of 32 whose sums are in (SegmentChunkUnderPreviousPlan)
  ChunkRecord* records;       // [chunks]
  int* redo;                  // [chunks]: the chunks the confirm stage summarises again (replanned_chunks of them)
  SegmentStep* middle;        // [middle_capacity]
  double* lane_terms;         // [lane_capacity * 32]
  SegmentStep* steps;         // [groups * kSegmentGroupSteps]
  int* step_count;            // [groups]
  SegmentCounters* counters;  // [1]
  SegmentOutput* output;      // [1]
  int middle_capacity;
  int lane_capacity;
  int64_t chunk_capacity;  // the chunks the workspace was carved for (ZeroSegmentState)
};

// The counters as the next run must find them: empty pools, no overflow, no run sums
// counted. Whichever kernel reads them last in a run writes this (a single thread).
__device__ inline void EmptySegmentPools(const SegmentWorkspace& ws) {
  SegmentCounters& c = *ws.counters;
  c.middle_taken = 0;
  c.lanes_taken = 0;
  c.overflow = 0;
  c.supers_done = 0;
  c.tile_chunks = 0;
  c.replanned_chunks = 0;
}

__host__ __device__ inline int64_t SuperCount(int64_t chunks) { return (chunks + 31) / 32; }

__host__ __device__ inline int64_t SegmentGroupCount(int64_t chunks) {
  return (chunks + kSegmentGroupChunks - 1) / kSegmentGroupChunks;
}
// Room for a crossing lane per chunk on average: a real frame has tens.
inline int SegmentMiddleCapacity(int64_t chunks) { return static_cast<int>(chunks < 2048 ? 2048 : chunks); }
inline int SegmentLaneCapacity(int64_t chunks) { return static_cast<int>(chunks < 2048 ? 2048 : chunks); }

// The segment pipeline's workspace from `carver` (about 700 bytes per 1024 terms, 5.6 MB
// for a 4K plane).
inline SegmentWorkspace CarveSegmentWorkspace(WorkspaceCarver& carver, int64_t chunks) {
  const size_t c = static_cast<size_t>(chunks);
  const size_t g = static_cast<size_t>(SegmentGroupCount(chunks));
  SegmentWorkspace ws;
  ws.chunk_capacity = chunks;
  ws.middle_capacity = SegmentMiddleCapacity(chunks);
  ws.lane_capacity = SegmentLaneCapacity(chunks);
  ws.chunk_sums = carver.Take<double>(c);
  ws.plan_before = carver.Take<double>(c);
  ws.super_sums = carver.Take<double>(static_cast<size_t>(SuperCount(chunks)));
  ws.super_prefix = carver.Take<double>(static_cast<size_t>(SuperCount(chunks)));
  ws.super_low = carver.Take<double>(static_cast<size_t>(SuperCount(chunks)));
  ws.super_high = carver.Take<double>(static_cast<size_t>(SuperCount(chunks)));
  ws.super_order = carver.Take<int>(static_cast<size_t>(SuperCount(chunks)));
  ws.super_arrivals = carver.Take<unsigned>(static_cast<size_t>(SuperCount(chunks)));
  ws.records = carver.Take<ChunkRecord>(c);
  ws.redo = carver.Take<int>(c);
  ws.middle = carver.Take<SegmentStep>(ws.middle_capacity);
  ws.lane_terms = carver.Take<double>(static_cast<size_t>(ws.lane_capacity) * 32);
  ws.steps = carver.Take<SegmentStep>(g * kSegmentGroupSteps);
  ws.step_count = carver.Take<int>(g);
  ws.counters = carver.Take<SegmentCounters>(1);
  ws.output = carver.Take<SegmentOutput>(1);
  return ws;
}

inline SegmentWorkspace CarveSegmentWorkspace(void* base, int64_t chunks) {
  WorkspaceCarver carver(base);
  return CarveSegmentWorkspace(carver, chunks);
}

inline size_t SegmentWorkspaceBytes(int64_t chunks) {
  WorkspaceCarver carver(nullptr);
  CarveSegmentWorkspace(carver, chunks);
  return carver.bytes();
}

// The state SegmentWalk leaves for the next run (empty pools), for a freshly allocated
// workspace.
inline cudaError_t ZeroSegmentState(const SegmentWorkspace& ws, cudaStream_t stream) {
  if (cudaError_t err = cudaMemsetAsync(ws.counters, 0, sizeof(SegmentCounters), stream); err != cudaSuccess) {
    return err;
  }
  // A plan of zeros (SegmentChunkUnderPreviousPlan's records under it are confirmed or formed again).
  if (cudaError_t err =
          cudaMemsetAsync(ws.plan_before, 0, static_cast<size_t>(ws.chunk_capacity) * sizeof(double), stream);
      err != cudaSuccess) {
    return err;
  }
  // The arrival counts (each run leaves them at 0 for the next).
  return cudaMemsetAsync(ws.super_arrivals, 0, static_cast<size_t>(SuperCount(ws.chunk_capacity)) * sizeof(unsigned),
                         stream);
}

__device__ inline void CopyStep(SegmentStep* to, const SegmentStep* from) {
  const int4* src = reinterpret_cast<const int4*>(from);
  int4* dst = reinterpret_cast<int4*>(to);
#pragma unroll
  for (int i = 0; i < 4; ++i) dst[i] = src[i];
}

// Segmented inclusive scan step: (a, fa) then (b, fb) is (fb ? b : a.b, fa | fb).
__device__ inline void SegmentedScanStep(RunSummary& v, bool& head, const RunSummary& other, bool other_head,
                                         bool take) {
  if (!take) return;
  if (!head) v = Compose(other, v);
  head = head || other_head;
}

// The segmented inclusive scan of a warp (every lane must call it). Runs without ties have
// one path for both parities (ParityUniform), and so do their compositions: when every
// lane's run is such, the scan moves one path (3 values) instead of two.
__device__ inline void WarpSegmentedScan(RunSummary& v, bool& head) {
  const int lane = LaneId();
  if (__all_sync(kFullMask, ParityUniform(v))) {
    PathRun path{v.d[0], v.lo[0], v.hi[0], v.flags};
#pragma unroll 1
    for (unsigned d = 1; d < 32; d <<= 1) {
      PathRun other;
      other.d = __shfl_up_sync(kFullMask, static_cast<long long>(path.d), d);
      other.lo = __shfl_up_sync(kFullMask, static_cast<long long>(path.lo), d);
      other.hi = __shfl_up_sync(kFullMask, static_cast<long long>(path.hi), d);
      other.flags = __shfl_up_sync(kFullMask, path.flags, d);
      const bool other_head = __shfl_up_sync(kFullMask, head, d);
      if (lane >= static_cast<int>(d)) {
        if (!head) path = ComposePaths(other, path);
        head = head || other_head;
      }
    }
#pragma unroll
    for (int p = 0; p < 2; ++p) {
      v.d[p] = path.d;
      v.lo[p] = path.lo;
      v.hi[p] = path.hi;
    }
    v.flags = path.flags;
    return;
  }
#pragma unroll 1
  for (unsigned d = 1; d < 32; d <<= 1) {
    const RunSummary other = ShflUpRun(v, d);
    const bool other_head = __shfl_up_sync(kFullMask, head, d);
    SegmentedScanStep(v, head, other, other_head, lane >= static_cast<int>(d));
  }
}

// ---------------------------------------------------------------------------------
// 2. One block: the 32-chunk sums and their exclusive prefix (for ApproximatePrefix).
// Also starts the pools empty.

inline constexpr int kSuperPrefixThreads = 1024;

__device__ inline double WarpSumDouble(double v) {
#pragma unroll
  for (int d = 16; d >= 1; d >>= 1) v = __dadd_rn(v, __shfl_xor_sync(kFullMask, v, d));
  return v;
}

// The runs of 32 chunks a thread of a kThreads block takes in the one-block passes over
// them (SuperPrefixOfSums, OrderRunsByCrossing): consecutive, [begin, end).
struct RunRange {
  int64_t begin;
  int64_t end;
};
template <int kThreads>
__device__ inline RunRange RunRangeOfThread(int64_t supers) {
  const int64_t per = (supers + kThreads - 1) / kThreads;
  const int tid = static_cast<int>(threadIdx.x);
  const int64_t begin = tid * per < supers ? tid * per : supers;
  return {begin, begin + per < supers ? begin + per : supers};
}

// The exclusive prefix of the 32-chunk sums, by one block of kThreads (a fixed order: the
// same advice on every run).
// Runs first .. first + supers - 1 only, from `carry`, the prefix before run `first` (a
// slab of the chunk stage: EnqueueSegmentedSumsChunkStage).
template <int kThreads>
__device__ inline void SuperPrefixOfSums(int64_t supers, const SegmentWorkspace& ws, int64_t first = 0,
                                         double carry = 0.0) {
  using Scan = cub::BlockScan<double, kThreads, cub::BLOCK_SCAN_WARP_SCANS>;
  __shared__ typename Scan::TempStorage scan_temp;
  auto [begin, end] = RunRangeOfThread<kThreads>(supers);
  begin += first;
  end += first;
  double mine = 0.0;
  for (int64_t j = begin; j < end; ++j) mine = __dadd_rn(mine, __ldcg(ws.super_sums + j));
  double before = 0.0;
  Scan(scan_temp).ExclusiveScan(mine, before, 0.0, [](double a, double b) { return __dadd_rn(a, b); });
  if (first > 0) before = __dadd_rn(carry, before);
  for (int64_t j = begin; j < end; ++j) {
    ws.super_prefix[j] = before;
    before = __dadd_rn(before, __ldcg(ws.super_sums + j));
  }
}

// Crossings first (PlanOptions::crossings_first). The chunk stage's slowest chunks are the
// few where the sum crosses a binade or zero (summarised lane by lane, 10-20 us for one
// warp on the H200); taken in index order, the last of them start late and end the stage
// while most SMs are idle. So the stage takes first the runs of 32 chunks whose
// approximate path, chunk by chunk, comes near a frame's edge, then the others: the
// same records in another order (the bits and the steps do not depend on it).

// The extremes of the approximate path through run `super` at chunk ends, from its start
// (lane k holds chunk k's approximate sum, 0 past the end). Whole warp; lane 0 writes.
__device__ inline void WriteRunPathExtremes(int64_t super, double chunk_sum, const SegmentWorkspace& ws) {
  const int lane = LaneId();
  double incl = chunk_sum;
#pragma unroll
  for (unsigned d = 1; d < 32; d <<= 1) {
    const double other = __shfl_up_sync(kFullMask, incl, d);
    if (lane >= static_cast<int>(d)) incl = __dadd_rn(other, incl);
  }
  double low = fmin(0.0, incl);
  double high = fmax(0.0, incl);
#pragma unroll
  for (int d = 16; d >= 1; d >>= 1) {
    low = fmin(low, __shfl_xor_sync(kFullMask, low, d));
    high = fmax(high, __shfl_xor_sync(kFullMask, high, d));
  }
  if (lane == 0) {
    ws.super_low[super] = low;
    ws.super_high[super] = high;
  }
}

// ws.super_order: the runs whose path may leave the frame of the prefix before them
// (PredictCrossing), then the others, each in index order. One block of kThreads, after
// SuperPrefixOfSums (each thread reads the prefixes it wrote).
template <int kThreads>
__device__ inline void OrderRunsByCrossing(int64_t supers, const SegmentWorkspace& ws) {
  using Scan = cub::BlockScan<int, kThreads, cub::BLOCK_SCAN_WARP_SCANS>;
  __shared__ typename Scan::TempStorage scan_temp;
  const auto [begin, end] = RunRangeOfThread<kThreads>(supers);
  const auto crossing = [&](int64_t j) {
    return PredictCrossing(ws.super_prefix[j], __ldcg(ws.super_low + j), __ldcg(ws.super_high + j));
  };
  int mine = 0;
  for (int64_t j = begin; j < end; ++j) mine += crossing(j) ? 1 : 0;
  int first = 0;
  int total = 0;
  Scan(scan_temp).ExclusiveSum(mine, first, total);
  int64_t plain = total + (begin - first);  // the runs before `begin` that do not cross come after all that do
  int64_t crossed = first;
  for (int64_t j = begin; j < end; ++j) ws.super_order[crossing(j) ? crossed++ : plain++] = static_cast<int>(j);
}

// The chunk that the chunk stage's warp `slot` takes: slots cover SuperCount(chunks) runs
// of 32, taken in ws.super_order; a chunk >= chunks means none.
__device__ inline int64_t ChunkOfSlot(int64_t slot, const SegmentWorkspace& ws) {
  return (static_cast<int64_t>(__ldcg(ws.super_order + (slot >> 5))) << 5) + (slot & 31);
}
inline unsigned ChunkStageGrid(int64_t chunks) { return WarpGrid(SuperCount(chunks) * 32, kSegmentWarps); }

// Chunks [first_chunk, end_chunk) of `chunks` (first_chunk a multiple of 32): their runs'
// sums and prefix, after those of the slabs before ([0, chunks): the whole sum). The first
// slab starts the pools empty.
template <int kThreads = kSuperPrefixThreads>
__device__ inline void SegmentSuperPrefixBlock(int64_t chunks, const SegmentWorkspace& ws, int64_t first_chunk,
                                               int64_t end_chunk) {
  WaitForPriorKernel();
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = LaneId();
  const int64_t first_run = first_chunk >> 5;
  const int64_t end_run = SuperCount(end_chunk);
  if (tid == 0 && first_run == 0) EmptySegmentPools(ws);
  for (int64_t s = first_run + (tid >> 5); s < end_run; s += kThreads / 32) {
    const int64_t c = (s << 5) + lane;
    const double v = WarpSumDouble(c < chunks ? __ldcg(ws.chunk_sums + c) : 0.0);
    if (lane == 0) ws.super_sums[s] = v;
  }
  __syncthreads();  // the block's writes above are visible to the whole block
  const double carry =
      first_run > 0 ? __dadd_rn(__ldcg(ws.super_prefix + first_run - 1), __ldcg(ws.super_sums + first_run - 1)) : 0.0;
  SuperPrefixOfSums<kThreads>(end_run - first_run, ws, first_run, carry);
  // No run order here: with chunk sums from a metric's kernel (ssimulacra2, SSIM) the
  // order's extra work in this one block cost more than it saved (ssimulacra2 at 4K, 8
  // in flight: 422 against 447 fps; SSIM's segment sums 76 against 69 us on the H200).
}

template <int kThreads = kSuperPrefixThreads>
__global__ void __launch_bounds__(kThreads) SegmentSuperPrefix(int64_t chunks, SegmentWorkspace ws) {
  SegmentSuperPrefixBlock<kThreads>(chunks, ws, 0, chunks);
}

// 1 + 2 in one kernel, for terms the pipeline reads itself: one block per run of 32 chunks
// (kApproximateWarps warps, 32 / kApproximateWarps chunks each) writes each chunk's approximate sum
// (ChunkApproximateSum, as ChunkApproximateSumsWarp) and the run's sum (its 32 chunk sums
// by a butterfly: a fixed order); the last block to finish forms the prefix of the run
// sums and empties the pools. (As two kernels, the second, one block, took 8 us of a
// 4K plane's 115 on the H200: mostly waiting for its loads, one warp-iteration at a time.)
inline constexpr int kApproximateWarps = 16;
inline constexpr int kApproximateThreads = kApproximateWarps * 32;

template <class TermSource>
__global__ void __launch_bounds__(kApproximateThreads)
    SegmentApproximateSums(TermSource source, size_t n, int64_t chunks, SegmentWorkspace ws) {
  static_assert(32 % kApproximateWarps == 0, "a block's warps share its 32 chunks evenly");
  __shared__ double run_sums[32];
  __shared__ int is_last;
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const int lane = LaneId();
  const int64_t super = blockIdx.x;
#pragma unroll 1
  for (int k = warp; k < 32; k += kApproximateWarps) {
    const int64_t c = (super << 5) + k;
    double v = 0.0;
    if (c < chunks) {
      v = ChunkApproximateSum(source, n, c);
      if (lane == 0) ws.chunk_sums[c] = v;
    }
    if (lane == 0) run_sums[k] = v;
  }
  __syncthreads();
  if (warp == 0) {
    const double v = WarpSumDouble(run_sums[lane]);
    WriteRunPathExtremes(super, run_sums[lane], ws);
    if (lane == 0) {
      ws.super_sums[super] = v;
      __threadfence();  // the run's sum before the count that says it is there
      is_last = atomicAdd(&ws.counters->supers_done, 1) == static_cast<int>(gridDim.x) - 1;
    }
  }
  __syncthreads();
  if (!is_last) return;
  __threadfence();  // every block's run sum is visible here (their fences came before their counts)
  SuperPrefixOfSums<kApproximateThreads>(SuperCount(chunks), ws);
  OrderRunsByCrossing<kApproximateThreads>(SuperCount(chunks), ws);
  if (threadIdx.x == 0) EmptySegmentPools(ws);
}

// ---------------------------------------------------------------------------------
// 3. One warp per chunk: lanes, crossings, segments.

// The approximate sum of chunks 0..c-1: the prefix of the 32-chunk sums before c's run of
// 32, then the chunk sums in it before c (warp-wide, any order: it is advice). One load
// per lane: a loop over all the 32-chunk sums before c was this kernel's main stall.
// Also gives chunk c's own approximate sum (`own`), from the same loads.
__device__ inline double ApproximatePrefix(int64_t c, const SegmentWorkspace& ws, double* own = nullptr) {
  const int lane = LaneId();
  const int64_t super = c >> 5;
  const int64_t k = (super << 5) + lane;
  const double runs_before = __ldcg(ws.super_prefix + super);
  const double mine = k <= c ? __ldcg(ws.chunk_sums + k) : 0.0;
  if (own != nullptr) *own = __shfl_sync(kFullMask, mine, static_cast<int>(c & 31));
  const double in_run = WarpSumDouble(k < c ? mine : 0.0);
  return __dadd_rn(runs_before, in_run);
}

// A warp's tile: row k = sub-chunk k, 33 doubles apart (the pad keeps both the coalesced
// copies, lane l to column l, and each lane's walk along its own row free of bank
// conflicts). 16-byte copies into 34-double rows with pair reads were measured on the
// H200: no faster on the ordered sum, slower on ssimulacra2 (380 against 384 fps at 4K).
inline constexpr int kTileStride = kSubchunkTerms + 1;
using TileRows = double (*)[kTileStride];
using ConstTileRows = const double (*)[kTileStride];

// A chunk's terms into the warp's tile, row k = sub-chunk k (zeros past the end). From a
// TermSource: through registers. From an array in device memory: asynchronous copies
// (cp.async) straight into shared memory, which keeps 64 registers free (the kernel
// then fits 6 blocks per SM). A MappedArrayTerms tile holds the STORED values: each lane
// maps its row's values as it reads them (TileLine), so no pass over the tile maps them in
// place first (on the H200, with ssimulacra2's branch-free map: 384 against 370 fps at 4K).
template <class TermSource>
__device__ inline void StartChunkLoad(const TermSource& source, size_t base, int count, TileRows rows, int lane) {
  double x[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    const int k = i * 32 + lane;
    x[i] = k < count ? source(base + static_cast<size_t>(k)) : 0.0;
  }
#pragma unroll
  for (int i = 0; i < 32; ++i) rows[i][lane] = x[i];
}
template <class TermSource>
__device__ inline void FinishChunkLoad(const TermSource&) {}

__device__ inline void StartChunkLoad(const DeviceArrayTerms& source, size_t base, int count, TileRows rows, int lane) {
  if (count == kChunkTerms) {  // every chunk but a sum's last: no bounds, one base address
    const double* from = source.terms + base + static_cast<size_t>(lane);
#pragma unroll
    for (int i = 0; i < 32; ++i) __pipeline_memcpy_async(&rows[i][lane], from + i * 32, sizeof(double));
    __pipeline_commit();
    return;
  }
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    const int k = i * 32 + lane;
    if (k < count) {
      __pipeline_memcpy_async(&rows[i][lane], source.terms + base + static_cast<size_t>(k), sizeof(double));
    } else {
      rows[i][lane] = 0.0;
    }
  }
  __pipeline_commit();
}
__device__ inline void FinishChunkLoad(const DeviceArrayTerms&) { __pipeline_wait_prior(0); }

template <class Map>
__device__ inline void StartChunkLoad(const MappedArrayTerms<Map>& source, size_t base, int count, TileRows rows,
                                      int lane) {
  StartChunkLoad(DeviceArrayTerms{source.stored}, base, count, rows, lane);
}
template <class Map>
__device__ inline void FinishChunkLoad(const MappedArrayTerms<Map>&) {
  __pipeline_wait_prior(0);
}

// A lane's line of the tile as its sum's terms: its row (its sub-chunk, stride 1: the
// tile path) or its column (terms lane, lane+32, ..., stride kTileStride: the strided
// form); the stored values themselves, or for a MappedArrayTerms the map of each (only
// indices below the lane's length are read: the zeros past the end are never mapped).
struct NoMap {
  __device__ double operator()(double x) const { return x; }
};
template <int kStride, class Map>
struct TileLine {
  static constexpr bool kNonNegative = MapGivesNonNegativeTerms<Map>::value;
  const double* first;
  Map map;
  __device__ double operator[](int i) const { return map(first[i * kStride]); }
};
template <class TermSource>
__device__ inline TileLine<1, NoMap> RowOf(const TermSource&, const double* row) {
  return {row, NoMap{}};
}
template <class Map>
__device__ inline TileLine<1, Map> RowOf(const MappedArrayTerms<Map>& source, const double* row) {
  return {row, source.map};
}

// Calls f(column) with the lane's column as the sum's terms; for a MappedArrayTerms the
// map comes through VisitMap (fixed to the sum's kind, if the Map offers that).
template <class TermSource, class F>
__device__ inline void WithColumn(const TermSource&, ConstTileRows rows, int lane, F&& f) {
  f(TileLine<kTileStride, NoMap>{&rows[0][lane], NoMap{}});
}
// f(line) with the stored values from `first`, kStride apart, through `map` as VisitMap
// hands it (fixed to the sum's kind, if the Map offers that).
template <int kStride, class Map, class F>
__device__ inline void WithMappedLine(const Map& map, const double* first, F&& f) {
  VisitMap(map, [&](const auto& fixed) { f(TileLine<kStride, std::decay_t<decltype(fixed)>>{first, fixed}); });
}
template <class Map, class F>
__device__ inline void WithColumn(const MappedArrayTerms<Map>& source, ConstTileRows rows, int lane, F&& f) {
  WithMappedLine<kTileStride>(source.map, &rows[0][lane], f);
}

// Where the strided form reads a chunk's columns (lane l: terms l, l + 32, ...): the
// warp's tile (TileColumns), or the source itself (MemoryColumns: each step of the warp
// reads one row of 32 terms; for a MappedArrayTerms through VisitMap, as WithColumn).
template <class TermSource>
struct TileColumns {
  const TermSource& source;
  ConstTileRows rows;
  template <class F>
  __device__ void With(int lane, F&& f) const {
    WithColumn(source, rows, lane, f);
  }
};
template <class TermSource>
struct SourceColumn {
  static constexpr bool kNonNegative = false;
  const TermSource& source;
  size_t first;
  __device__ double operator[](int i) const { return source(first + static_cast<size_t>(i) * kSubchunkTerms); }
};
template <class TermSource>
struct MemoryColumns {
  const TermSource& source;
  size_t base;
  template <class F>
  __device__ void With(int lane, F&& f) const {
    f(SourceColumn<TermSource>{source, base + static_cast<size_t>(lane)});
  }
};
template <class Map>
struct MemoryColumns<MappedArrayTerms<Map>> {
  const MappedArrayTerms<Map>& source;
  size_t base;
  template <class F>
  __device__ void With(int lane, F&& f) const {
    WithMappedLine<kSubchunkTerms>(source.map, source.stored + base + static_cast<size_t>(lane), f);
  }
};

// A lane's strided sums over its column of a whole chunk; `first` is its first term's
// r (lane 0's is the chunk's first term).
template <class Column>
__device__ inline void StridedLaneSums(const Column& column, double scale, StridedSums& mine, double& first) {
  if constexpr (Column::kNonNegative) {
    first = AddNonNegativeStridedTerm(mine, column[0], scale);
#pragma unroll 4
    for (int i = 1; i < kSubchunks; ++i) AddNonNegativeStridedTerm(mine, column[i], scale);
    mine.magnitude = mine.sum;
  } else {
    first = AddStridedTerm(mine, column[0], scale);
#pragma unroll 4  // 8 or more: more registers (the strided batch pass is held to 40)
    for (int i = 1; i < kSubchunks; ++i) AddStridedTerm(mine, column[i], scale);
  }
}

// The second pass, for a chunk with a tie: its ties (warp-uniform result); false if some
// x/u is NaN or infinite, or the chunk has more than kMaxStridedTies ties (the tile
// path's lanes take a chunk of ties faster: on the H200 an all-tie plane's chunk stage
// took 0.25 ms this way, 0.07 through the tile). ssimulacra2's edge sums have ties in up
// to 70% of their chunks, a few each. The steps' masks come from independent ballots
// (lane i keeps step i's), each step is summarised on its own (SummarizeTieStep) and the
// summaries are applied in order by a warp scan (WarpApplyTieSteps): StridedTieStep's
// ties without its 32 dependent steps.
inline constexpr int kMaxStridedTies = 32;

// ApplyTieStep over the warp's 32 steps in order, lane i holding step i's summary; the
// result in every lane.
__device__ inline StridedTies WarpApplyTieSteps(const StridedTieStepSummary& step) {
  const int lane = LaneId();
  // The running parity after each step: the steps compose as p -> has_tie ? after : p ^
  // through (a reset or a flip), an associative scan from parity 0.
  bool reset = step.has_tie;
  uint32_t parity = step.has_tie ? step.parity_after : step.parity_through;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const bool reset_before = __shfl_up_sync(kFullMask, reset, d);
    const uint32_t parity_before = __shfl_up_sync(kFullMask, parity, d);
    if (lane >= d && !reset) {
      reset = reset_before;
      parity ^= parity_before;
    }
  }
  const uint32_t parity_below = __shfl_up_sync(kFullMask, parity, 1);  // every lane: a _sync call is whole-warp
  const uint32_t parity_in = lane == 0 ? 0u : parity_below;
  const uint32_t tie_steps = __ballot_sync(kFullMask, step.has_tie);
  StridedTies ties;
  ties.parity = __shfl_sync(kFullMask, parity, 31);
  if (tie_steps == 0) return ties;
  const int first = __ffs(tie_steps) - 1;
  const uint32_t before = (parity_in ^ step.first_before) & 1u;
  const int correction = step.correction + (step.has_tie && lane != first && before != 0 ? step.first_s : 0);
  ties.seen = true;
  ties.first_q = __shfl_sync(kFullMask, before, first);
  ties.first_s = __shfl_sync(kFullMask, step.first_s, first);
  ties.correction = WarpSum(correction);  // signed
  ties.count = static_cast<int>(WarpSum(static_cast<unsigned>(step.count)));
  return ties;
}

template <class Column>
__device__ inline bool StridedChunkTies(const Column& column, double scale, StridedTies& ties) {
  const int lane = LaneId();
  bool special = false;
  uint32_t tie = 0;  // lane i: step i's masks
  uint32_t odd = 0;
  uint32_t up = 0;
#pragma unroll 4
  for (int i = 0; i < kSubchunks; ++i) {
    const StridedTieTerm k = TieTermOf(column[i], scale);
    special = special | k.special;
    const uint32_t step_tie = __ballot_sync(kFullMask, k.tie);
    const uint32_t step_odd = __ballot_sync(kFullMask, k.odd);
    const uint32_t step_up = __ballot_sync(kFullMask, k.up);
    if (lane == i) {
      tie = step_tie;
      odd = step_odd;
      up = step_up;
    }
  }
  if (__any_sync(kFullMask, special)) return false;
  if (WarpSum(static_cast<unsigned>(__popc(tie))) > kMaxStridedTies) return false;
  ties = WarpApplyTieSteps(SummarizeTieStep(odd, tie, up));
  return true;
}

// A chunk that is one run under one frame.
__device__ inline void WriteUniformRecord(ChunkRecord& rec, const RunSummary& run, int frame) {
  rec.head.run = run;
  rec.head.frame = frame;
  rec.head.lane_terms = -1;
  rec.tail.frame = kNoRunFrame;
  rec.mixed = 0;
  rec.middle_base = 0;
  rec.middle_count = 0;
}

// TryStridedChunk's checks that depend on the plan's prefix `before` (the rest depend only
// on the chunk's terms and frame): the approximate path, from `before`, stays within
// PredictCrossing's margin of the frame's edges. First the chunk's approximate sum alone
// (cheap, before the run is formed); then the run's own extremes, within [lo u, hi u] of
// `before` (exact scalings: u is normal and |lo|, |hi| < 2^53; both parities have the same
// bounds), as the tile path predicts each lane's.
__device__ inline bool ApproximateSumStaysInFrame(double before, double approximate_sum) {
  return !PredictCrossing(before, fmin(0.0, approximate_sum), fmax(0.0, approximate_sum));
}
__device__ inline bool StridedRunStaysInFrame(double before, int64_t lo, int64_t hi, int frame) {
  const double u = Pow2(frame - 52);
  return !PredictCrossing(before, fmin(0.0, Int64ToDouble(lo) * u), fmax(0.0, Int64ToDouble(hi) * u));
}

// The chunk stage's first try (PlanOptions::strided_chunks): chunk c, its 1024 terms in
// the warp's tile (TryStridedChunk) or in device memory (TryStridedChunkFrom with
// MemoryColumns), as ONE run under the frame planned from `before`, each lane taking the
// chunk's column (terms l, l+32, ...: in a tile, the order the copies wrote them,
// conflict-free with the 33-double rows) and the chunk summarised by StridedChunkRun. True: the uniform
// record is written; a chunk with ties takes a second pass over the tile for them
// (StridedChunkTies). False, for the whole warp (a special term, a frame it does not
// take, a random plan, a short last chunk, or an approximate path within PredictCrossing's
// margin of the frame's edges: about one chunk per binade the sum crosses): the caller
// summarises the chunk lane by lane from the same tile, which finds the crossing lanes.
template <class Columns>
__device__ inline bool TryStridedChunkFrom(const Columns& columns, int count, int64_t c, double before,
                                           double approximate_sum, const PlanOptions& options,
                                           const SegmentWorkspace& ws) {
  const int frame = PlanFrame(before, options.mode, options.fixed_frame, static_cast<uint64_t>(c) * kSubchunks);
  // A random plan gives each sub-chunk its own frame: only the tile path follows it. The
  // last chunk of a sum, if short, too (one chunk: no loop with bounds for it; a bounded
  // copy of the loop, measured on the H200 in ssimulacra2's twin, made the whole
  // strided pass slower: 1080p 1,743 -> 1,674 fps with 16 in flight). A chunk
  // whose approximate sum already takes the path out of its frame goes to the tile at
  // once: those chunks (where the sum crosses a binade or zero) are the stage's slowest,
  // and one of them late in the grid ends the kernel after the others are done.
  if (!options.strided_chunks || options.mode == PlanMode::kRandom || !StridedFrame(frame) || count != kChunkTerms ||
      !ApproximateSumStaysInFrame(before, approximate_sum)) {
    return false;
  }
  const int lane = LaneId();
  const double scale = StridedScale(frame);
  StridedSums mine;
  double first = 0.0;
  columns.With(lane, [&](const auto& column) { StridedLaneSums(column, scale, mine, first); });
  StridedSums chunk;
  chunk.sum = WarpSumDouble(mine.sum);
  chunk.magnitude = WarpSumDouble(mine.magnitude);
  chunk.doubtful = __any_sync(kFullMask, mine.doubtful);
  chunk.nonzero = __any_sync(kFullMask, mine.nonzero);
  first = __shfl_sync(kFullMask, first, 0);
  StridedTies ties;
  if (chunk.doubtful) {
    bool fit = true;
    columns.With(lane, [&](const auto& column) { fit = StridedChunkTies(column, scale, ties); });
    if (!fit) return false;
  }
  RunSummary run;
  if (!StridedChunkRun(chunk, ties, first, run)) return false;
  if (!StridedRunStaysInFrame(before, run.lo[0], run.hi[0], frame)) return false;
  if (lane == 0) WriteUniformRecord(ws.records[c], run, frame);
  return true;
}
template <class TermSource>
__device__ inline bool TryStridedChunk(const TermSource& source, ConstTileRows rows, int count, int64_t c,
                                       double before, double approximate_sum, const PlanOptions& options,
                                       const SegmentWorkspace& ws) {
  return TryStridedChunkFrom(TileColumns<TermSource>{source, rows}, count, c, before, approximate_sum, options, ws);
}

// A sum's first chunk, its terms in the warp's tile: the exact sum before it is +0, so it
// needs no plan. The warp maps the terms in place (each lane its row: the map's arithmetic
// in parallel), then lane 0 adds the plain terms in order from +0, the loop's own adds, so
// its chain is the adds alone (adding through the map in lane 0 made the redo's launches
// longer on the H200: 270p median 19 -> 26 us). The record is one step of one term, that
// sum s: the walk's first add, +0 + s, gives s's own bits (a left fold from +0 never
// gives -0 in round to nearest). The lane-by-lane form crossed a binade in nearly every
// lane of this chunk (the sum rises from 0), and its crossing lanes' terms went through
// the groups and the walk one by one. The record is the form the lane-by-lane path gives
// a chunk whose every lane crosses: mixed, no head or tail run, its steps in the middle
// pool.
template <class TermSource>
__device__ inline void FirstChunkAsOneTerm(const TermSource& source, TileRows rows, int count,
                                           const SegmentWorkspace& ws) {
  const int lane = LaneId();
  const int nsub = (count + kSubchunkTerms - 1) / kSubchunkTerms;
  if (lane < nsub) {
    const auto row = RowOf(source, rows[lane]);
    const int len = ClampLen(count - lane * kSubchunkTerms);
#pragma unroll 4
    for (int t = 0; t < len; ++t) rows[lane][t] = row[t];
  }
  __syncwarp();
  if (lane != 0) return;
  double s = 0.0;
  for (int l = 0; l < nsub; ++l) {
    const double* row = rows[l];
    const int len = ClampLen(count - l * kSubchunkTerms);
#pragma unroll 8
    for (int t = 0; t < len; ++t) s = __dadd_rn(s, row[t]);
  }
  const int middle_base = atomicAdd(&ws.counters->middle_taken, 1);
  const int lane_base = atomicAdd(&ws.counters->lanes_taken, 1);
  const bool overflow = middle_base + 1 > ws.middle_capacity || lane_base + 1 > ws.lane_capacity;
  if (overflow) atomicExch(&ws.counters->overflow, 1);
  ChunkRecord& rec = ws.records[0];
  rec.mixed = 1;
  rec.middle_base = middle_base;
  rec.middle_count = overflow ? 0 : 1;
  rec.head.frame = kNoRunFrame;
  rec.tail.frame = kNoRunFrame;
  if (overflow) return;
  double* out = ws.lane_terms + static_cast<size_t>(lane_base) * 32;
  out[0] = s;
  for (int t = 1; t < 32; ++t) out[t] = 0.0;  // the walk stages all 32
  SegmentStep step;
  step.run = IdentityRun();
  step.frame = 1;  // a terms step: frame holds the count
  step.lane_terms = lane_base;
  ws.middle[middle_base] = step;
}

// Chunk c of one sum, its terms in the warp's tile (`rows`, loaded and visible to the
// whole warp): the approximate prefix `before`, each lane's approximate path and frame,
// the crossing lanes, and the other lanes composed per segment into ws.records[c]. The
// tile is the warp's own: a sum's first chunk (FirstChunkAsOneTerm) leaves its mapped
// terms there. Counted in ws.counters->tile_chunks.
template <class TermSource>
__device__ inline void SegmentChunkFromTile(const TermSource& source, TileRows rows, int count, int64_t c,
                                            double before, const PlanOptions& options, const SegmentWorkspace& ws) {
  const int lane = LaneId();
  if (lane == 0) atomicAdd(&ws.counters->tile_chunks, 1);
  if (c == 0) {
    FirstChunkAsOneTerm(source, rows, count, ws);
    return;
  }
  const uint32_t lanes_below = (1u << lane) - 1u;
  const auto row = RowOf(source, rows[lane]);
  const int len = ClampLen(count - lane * 32);
  const int nsub = (count + kSubchunkTerms - 1) / kSubchunkTerms;
  const bool in_chunk = lane < nsub;
  const uint32_t valid_mask = nsub >= 32 ? 0xffffffffu : ((1u << nsub) - 1u);

  // Each lane's sum and the extremes of its path, relative to its start: from the lane's
  // summary under the chunk's frame (its exact rounded path, in units of that frame)
  // where every lane has a usable one, the common case; else from plain adds.
  // A chunk planned from a prefix of 0 (after chunks that sum to about 0; a sum's first
  // chunk went to FirstChunkAsOneTerm) gets the frame of 0, the
  // tiny frame, where no term above 2^-1021 or so fits: its summary there would be formed
  // lane by lane (two loops over the row) only to be dropped, on a chunk that is always
  // formed here. Each lane's own frame below is summarised anew instead: the same function
  // of the same terms, so the same runs and records.
  // The summaries take a lane with a tie in binary64 too (SummarizeTermsBinary64WithTies,
  // not the integer fold): ties are common in ssimulacra2's edge sums, and the fold's
  // two-parity loop was the longest part of a listed chunk's chain.
  const int chunk_frame = PlanFrame(before, options.mode, options.fixed_frame, static_cast<uint64_t>(c) * kSubchunks);
  const bool chunk_frame_tried = before != 0.0;
  RunSummary chunk_run = IdentityRun();
  if (in_chunk && chunk_frame_tried) chunk_run = SummarizeTermsBinary64WithTies(row, len, chunk_frame);
  const bool usable = chunk_frame_tried && !(chunk_run.flags & (kSpecialTerms | kUnfitEven | kUnfitOdd));
  double s = 0.0;
  double low = 0.0;
  double high = 0.0;
  const bool from_summaries = FastFrame(chunk_frame) && __all_sync(kFullMask, usable);
  if (from_summaries) {
    if (chunk_run.flags & kNonZero) {
      const int shift = chunk_frame - 52;
      const int64_t lo = chunk_run.lo[0] < chunk_run.lo[1] ? chunk_run.lo[0] : chunk_run.lo[1];
      const int64_t hi = chunk_run.hi[0] > chunk_run.hi[1] ? chunk_run.hi[0] : chunk_run.hi[1];
      // x * 2^shift: one exact multiply unless the power is below the normal range.
      const auto scale = [shift](double x) { return shift >= -1022 ? x * Pow2(shift) : scalbn(x, shift); };
      s = scale(Int64ToDouble(chunk_run.d[0]));
      low = fmin(0.0, scale(Int64ToDouble(lo)));
      high = fmax(0.0, scale(Int64ToDouble(hi)));
    }
  } else {
#pragma unroll 4
    for (int t = 0; t < len; ++t) {
      s = __dadd_rn(s, row[t]);
      low = fmin(low, s);
      high = fmax(high, s);
    }
  }
  double incl = s;
#pragma unroll
  for (unsigned d = 1; d < 32; d <<= 1) {
    const double other = __shfl_up_sync(kFullMask, incl, d);
    if (lane >= static_cast<int>(d)) incl = __dadd_rn(other, incl);
  }
  const double excl = __shfl_up_sync(kFullMask, incl, 1);
  const double start = lane == 0 ? before : __dadd_rn(before, excl);
  const int frame = PlanFrame(start, options.mode, options.fixed_frame, static_cast<uint64_t>(c) * kSubchunks + lane);
  bool crossing = in_chunk && (PredictCrossing(start, low, high) || !isfinite(s));
  RunSummary run = IdentityRun();
  if (in_chunk && !crossing) {
    run = frame == chunk_frame && chunk_frame_tried ? chunk_run : SummarizeTermsBinary64WithTies(row, len, frame);
    // Special terms and unfit parts are refused by any check: add them one by one.
    if (run.flags & (kSpecialTerms | kUnfitEven | kUnfitOdd)) crossing = true;
  }
  const uint32_t cross_mask = __ballot_sync(kFullMask, crossing);
  const int prev_frame = __shfl_up_sync(kFullMask, frame, 1);
  const bool prev_crossing = lane > 0 && ((cross_mask >> (lane - 1)) & 1u) != 0;
  const bool starts_segment = lane == 0 || crossing || prev_crossing || frame != prev_frame;
  const uint32_t start_mask = __ballot_sync(kFullMask, in_chunk && starts_segment) & valid_mask;
  ChunkRecord& rec = ws.records[c];

  if (cross_mask == 0 && start_mask == 1u) {
    // Uniform: one run under one frame.
    const RunSummary total = WarpTotal(run);  // lanes past the end hold the identity
    if (lane == 0) WriteUniformRecord(rec, total, frame);
    return;
  }

  // Mixed: a segmented inclusive scan over the lanes (a segment starts at a set bit).
  RunSummary v = run;
  bool head_of_segment = !in_chunk || starts_segment;
  WarpSegmentedScan(v, head_of_segment);
  // Items, in lane order: every crossing lane, and every lane that ends a segment.
  const bool next_starts = lane + 1 >= nsub || ((start_mask >> (lane + 1)) & 1u) != 0;
  const bool ends_segment = in_chunk && !crossing && next_starts;
  const uint32_t item_mask = __ballot_sync(kFullMask, in_chunk && (crossing || ends_segment));
  const int items = __popc(item_mask);
  const int item = __popc(item_mask & lanes_below);
  const int has_head = (cross_mask & 1u) == 0 ? 1 : 0;
  const int has_tail = (((cross_mask >> (nsub - 1)) & 1u) == 0 && !(has_head && items == 1)) ? 1 : 0;
  const int middle_count = items - has_head - has_tail;
  const int crossing_lanes = __popc(cross_mask & valid_mask);
  int middle_base = 0;
  int lane_base = 0;
  bool overflow = false;
  if (lane == 0) {
    middle_base = middle_count > 0 ? atomicAdd(&ws.counters->middle_taken, middle_count) : 0;
    lane_base = atomicAdd(&ws.counters->lanes_taken, crossing_lanes);
    overflow = middle_base + middle_count > ws.middle_capacity || lane_base + crossing_lanes > ws.lane_capacity;
    if (overflow) atomicExch(&ws.counters->overflow, 1);
  }
  middle_base = __shfl_sync(kFullMask, middle_base, 0);
  lane_base = __shfl_sync(kFullMask, lane_base, 0);
  overflow = __shfl_sync(kFullMask, overflow, 0);
  if (lane == 0) {
    rec.mixed = 1;
    rec.middle_base = middle_base;
    rec.middle_count = overflow ? 0 : middle_count;
    if (!has_head) rec.head.frame = kNoRunFrame;
    if (!has_tail) rec.tail.frame = kNoRunFrame;
  }
  if (overflow || !in_chunk || !(crossing || ends_segment)) return;
  SegmentStep step;
  if (crossing) {
    const int index = lane_base + __popc(cross_mask & lanes_below);
    double* out = ws.lane_terms + static_cast<size_t>(index) * 32;
#pragma unroll 4
    for (int t = 0; t < 32; ++t) out[t] = t < len ? row[t] : 0.0;
    step.run = IdentityRun();
    step.frame = len;  // a terms step: frame holds the count
    step.lane_terms = index;
  } else {
    step.run = v;
    step.frame = frame;
    step.lane_terms = -1;
  }
  if (has_head && item == 0) {
    rec.head = step;
  } else if (has_tail && item == items - 1) {
    rec.tail = step;
  } else {
    ws.middle[middle_base + item - has_head] = step;
  }
}

// Chunk c's record from its terms in the warp's tile, planned from `before`: one strided
// run where TryStridedChunk takes it, else lane by lane.
template <class TermSource>
__device__ inline void SegmentChunkInTile(const TermSource& source, TileRows rows, int count, int64_t c, double before,
                                          double approximate_sum, const PlanOptions& options,
                                          const SegmentWorkspace& ws) {
  if (TryStridedChunk(source, rows, count, c, before, approximate_sum, options, ws)) return;
  SegmentChunkFromTile(source, rows, count, c, before, options, ws);
}

// Block `block` of `grid` (the kernels below pass their own index, or a batch's). One
// tile per warp and one chunk per warp in the launch of EnqueueSegmentedSum (the loop is
// for grids that are smaller). Measured on the H200 and not kept: two tiles per warp in
// a resident grid, the next chunk's copies in flight while a chunk is summarised (4K
// plane 38 against 33 us; ssimulacra2 at 4K 435 against 445 fps with 8 in flight): the
// summaries then ran beside the copies, three times slower per chunk.
// kCrossingsFirst: the chunks in ws.super_order's runs (a separate instantiation: the
// slot mapping in the batched kernel, even switched off, made it spill on sm_90 and cost
// ssimulacra2 6% at 4K).
template <bool kCrossingsFirst, class TermSource>
__device__ inline void SegmentChunkWarpBlock(const TermSource& source, size_t n, int64_t chunks,
                                             const PlanOptions& options, const SegmentWorkspace& ws, int64_t block,
                                             int64_t grid) {
  __shared__ double tile[kSegmentWarps][kSubchunks][kTileStride];
  WaitForPriorKernel();
  const int lane = LaneId();
  TileRows rows = tile[threadIdx.x >> 5];
  const int64_t stride = grid * kSegmentWarps;
  const int64_t slots = kCrossingsFirst ? SuperCount(chunks) * 32 : chunks;
  for (int64_t slot = block * kSegmentWarps + (threadIdx.x >> 5); slot < slots; slot += stride) {
    const int64_t c = kCrossingsFirst ? ChunkOfSlot(slot, ws) : slot;
    if (kCrossingsFirst && c >= chunks) continue;
    const size_t base = static_cast<size_t>(c) * kChunkTerms;
    const int count = TermsInChunk(n, base);
    // Coalesced reads (lane l: terms l, l+32, ...), transposed so that lane k holds sub-chunk k.
    __syncwarp();  // the previous chunk's readers are done with the tile
    StartChunkLoad(source, base, count, rows, lane);
    double approximate_sum;
    const double before = ApproximatePrefix(c, ws, &approximate_sum);  // its loads overlap the terms'
    if (lane == 0) ws.plan_before[c] = before;                         // the next frame's plan, where it is reused
    FinishChunkLoad(source);
    __syncwarp();
    SegmentChunkInTile(source, rows, count, c, before, approximate_sum, options, ws);
  }
}

template <bool kCrossingsFirst, class TermSource>
__global__ void __launch_bounds__(kSegmentWarps * 32, 6)  // 6 blocks: 24 warps per SM
    SegmentChunkWarp(TermSource source, size_t n, int64_t chunks, PlanOptions options, SegmentWorkspace ws) {
  SegmentChunkWarpBlock<kCrossingsFirst>(source, n, chunks, options, ws, blockIdx.x, gridDim.x);
}

// ---------------------------------------------------------------------------------
// 3'. A stream's next frame under the previous frame's plan (EnqueueSegmentedSumReusingPlan).
//
// The plan (each chunk's frame, from the approximate prefix before it) changes little from
// one frame of a video to the next: only chunks near a place where the running sum crosses
// a binade move to another frame. So the chunk stage runs first, under the plan the
// previous frame left in ws.plan_before, in the same pass over the terms that forms this
// frame's approximate chunk sums (one read of the terms instead of two). Then, once this
// frame's prefix is known (formed as the fresh pipeline forms it, bit for bit), each chunk
// whose record this frame's plan would not have given is summarised again. The kept
// records are bit for bit those of the fresh pipeline (the same frame, the same run from
// the same terms, the same checks passed), so the walk, its steps and its result are the
// fresh pipeline's; a stale plan costs the chunks it changed.
//
// Measured on the H200 and not kept: a single pass for every sum, each chunk waiting for
// the sums published by the chunks before it (deterministic prefix, no plan needed). Its
// chunk stage took 76 us on a 4K plane against 25 + 41 for the two passes: a warp could
// start its summary only once every earlier chunk was loaded, so the grid's loads and
// summaries no longer overlapped.

// Chunk c's approximate sum from its tile, in ChunkApproximateSum's order (the same bits as
// SegmentApproximateSums gives; the tile holds zeros past the end, as that reads them).
__device__ inline double TileApproximateSum(ConstTileRows rows, int lane) {
  double x[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) x[i] = rows[i][lane];
  return WarpTreeSum(x);
}

// Chunk c's approximate sum into ws.chunk_sums; the last chunk of its run of 32 to arrive
// writes the run's sum (the butterfly of its 32 chunk sums: SegmentApproximateSums' bits)
// and leaves the run's count at 0 for the next frame. Whole warp.
__device__ inline void WriteChunkSum(int64_t c, double approximate_sum, int64_t chunks, const SegmentWorkspace& ws) {
  const int lane = LaneId();
  const int64_t super = c >> 5;
  const int64_t first = super << 5;
  const unsigned in_run = static_cast<unsigned>(chunks - first < 32 ? chunks - first : 32);
  bool last = false;
  if (lane == 0) {
    ws.chunk_sums[c] = approximate_sum;
    __threadfence();  // the sum is visible before the count that says it is there
    last = atomicAdd(ws.super_arrivals + super, 1u) == in_run - 1;
  }
  if (!__shfl_sync(kFullMask, last, 0)) return;
  __threadfence();  // every chunk of the run counted after its sum was visible
  const int64_t k = first + lane;
  const double chunk_sum = k < first + in_run ? __ldcg(ws.chunk_sums + k) : 0.0;
  const double run_sum = WarpSumDouble(chunk_sum);
  WriteRunPathExtremes(super, chunk_sum, ws);
  if (lane == 0) {
    ws.super_sums[super] = run_sum;
    ws.super_arrivals[super] = 0;
  }
}

// One warp per chunk: this frame's approximate chunk sum, and the chunk as one strided run
// under the frame planned from the previous frame's prefix. The record is marked planned
// when that run was taken; otherwise the confirm stage summarises the chunk (nothing
// here goes lane by lane: those chunks are near a crossing, where the old plan is the least
// likely to hold).
template <class TermSource>
__global__ void __launch_bounds__(kSegmentWarps * 32, 6)
    SegmentChunkUnderPreviousPlan(TermSource source, size_t n, int64_t chunks, PlanOptions options,
                                  SegmentWorkspace ws) {
  static_assert(std::is_same<TermSource, DeviceArrayTerms>::value,
                "TileApproximateSum reads stored terms: a mapped source would map the padding");
  __shared__ double tile[kSegmentWarps][kSubchunks][kTileStride];
  WaitForPriorKernel();
  const int lane = LaneId();
  TileRows rows = tile[threadIdx.x >> 5];
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kSegmentWarps;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * kSegmentWarps + (threadIdx.x >> 5); c < chunks; c += stride) {
    const size_t base = static_cast<size_t>(c) * kChunkTerms;
    const int count = TermsInChunk(n, base);
    __syncwarp();  // the previous chunk's readers are done with the tile
    StartChunkLoad(source, base, count, rows, lane);
    const double previous_before = __ldcg(ws.plan_before + c);  // its load overlaps the terms'
    FinishChunkLoad(source);
    __syncwarp();
    const double approximate_sum = TileApproximateSum(rows, lane);
    WriteChunkSum(c, approximate_sum, chunks, ws);
    const bool planned = TryStridedChunk(source, rows, count, c, previous_before, approximate_sum, options, ws);
    if (lane == 0) ws.records[c].planned = planned ? 1 : 0;
  }
}

// Whether chunk c's planned record is the one this frame's plan gives: the same frame, and
// TryStridedChunk's prefix-dependent checks pass from this frame's prefix `before` (its
// other checks depend only on the terms and the frame, and they passed).
__device__ inline bool PlannedRecordHolds(const ChunkRecord& rec, int64_t c, double before, double approximate_sum,
                                          const PlanOptions& options) {
  if (__ldcg(&rec.planned) == 0) return false;
  const int frame = __ldcg(&rec.head.frame);
  return frame == PlanFrame(before, options.mode, options.fixed_frame, static_cast<uint64_t>(c) * kSubchunks) &&
         ApproximateSumStaysInFrame(before, approximate_sum) &&
         StridedRunStaysInFrame(before, __ldcg(&rec.head.run.lo[0]), __ldcg(&rec.head.run.hi[0]), frame);
}

// One block, between the two: the exclusive prefix of the run sums, as SegmentApproximateSums'
// last block forms it (the same block size, so the same bits).
template <int kThreads = kApproximateThreads>
__global__ void __launch_bounds__(kThreads) SegmentRunSumsPrefix(int64_t chunks, SegmentWorkspace ws) {
  WaitForPriorKernel();
  if (threadIdx.x == 0) EmptySegmentPools(ws);
  SuperPrefixOfSums<kThreads>(SuperCount(chunks), ws);
  OrderRunsByCrossing<kThreads>(SuperCount(chunks), ws);
}

// The confirm stage, after SegmentRunSumsPrefix (or, for a batch, SegmentSuperPrefix), in
// two kernels.
//   SegmentConfirmRuns: one warp per run of 32 chunks, lane l for chunk 32s + l: this
//     frame's prefix before the chunk (ApproximatePrefix's bits: for each lane, the
//     butterfly of the run's chunk sums before it), kept as the next frame's plan; a
//     planned record that still holds stays, every other chunk is listed in ws.redo
//     (counted in replanned_chunks).
//   SegmentRedoChunks: the warps of a grid of about one resident wave take the listed
//     chunks in turn, each summarised from its terms as the fresh chunk stage would.
// (Measured and not kept: a warp and a tile per chunk that checked and then summarised was
// bound by the latency of its loads at 24 warps per SM: on the H200 its blocks kept every
// SM busy for 40 us of a 4K channel's six sums, a third of the fresh chunk stage.)
__device__ inline void SegmentConfirmRun(int64_t super, int64_t chunks, const PlanOptions& options,
                                         const SegmentWorkspace& ws) {
  const int lane = LaneId();
  const int64_t c = (super << 5) + lane;
  const bool in_chunks = c < chunks;
  const double own = in_chunks ? __ldcg(ws.chunk_sums + c) : 0.0;
  double in_run = 0.0;  // lane 0: no chunk of the run before it (ApproximatePrefix's +0)
#pragma unroll 4
  for (int j = 1; j < 32; ++j) {
    const double before_j = WarpSumDouble(lane < j ? own : 0.0);
    if (lane == j) in_run = before_j;
  }
  const double before = __dadd_rn(__ldcg(ws.super_prefix + super), in_run);
  bool redo = false;
  if (in_chunks) {
    ws.plan_before[c] = before;
    redo = !PlannedRecordHolds(ws.records[c], c, before, own, options);
  }
  const uint32_t listed = __ballot_sync(kFullMask, redo);
  if (listed == 0) return;
  int first = 0;
  if (lane == 0) first = atomicAdd(&ws.counters->replanned_chunks, __popc(listed));
  first = __shfl_sync(kFullMask, first, 0);
  if (redo) ws.redo[first + __popc(listed & ((1u << lane) - 1u))] = static_cast<int>(c);
}

inline constexpr int kConfirmWarps = 4;
template <int kWarps = kConfirmWarps>
__global__ void __launch_bounds__(kWarps * 32)
    SegmentConfirmRuns(int64_t chunks, PlanOptions options, SegmentWorkspace ws) {
  const int64_t block = blockIdx.x;
  const int64_t grid = gridDim.x;
  WaitForPriorKernel();
  const int64_t supers = SuperCount(chunks);
  for (int64_t s = block * kWarps + (threadIdx.x >> 5); s < supers; s += grid * kWarps) {
    SegmentConfirmRun(s, chunks, options, ws);
  }
}

// The redo grid of one sum: a warp per chunk of the plane, at most `cap` blocks. After
// the confirm stage, about one resident wave of the H200 (132 SMs, 6 blocks each): a
// changed plan can list many chunks. (A warp per run of 32 chunks, fewer blocks, was
// measured on the H200: slower, 476 against 491 fps at 4K and 1,440 against 1,588 at
// 1080p with 8 in flight; the chunks to form again cluster where a crossing moved, and
// one warp took several in turn.)
inline constexpr unsigned kRedoBlocksPerWave = 132 * 6;
inline unsigned RedoGrid(int64_t chunks, unsigned cap) {
  const unsigned all = WarpGrid(chunks, kSegmentWarps);
  return all < cap ? all : cap;
}

// kStridedTried: the chunks were listed by SegmentStridedChunksBatch, whose strided try
// on the same terms, prefix and plan refused them, so the tile path starts at once (the
// try from the tile, the same arithmetic on the same values, would refuse them again:
// about a tenth of a listed chunk's instructions on the H200 profile). After the confirm
// stage the chunks have not been tried under this frame's plan.
template <bool kStridedTried, class TermSource>
__device__ inline void SegmentRedoChunksBlock(const TermSource& source, size_t n, const PlanOptions& options,
                                              const SegmentWorkspace& ws, int64_t block, int64_t grid) {
  __shared__ double tile[kSegmentWarps][kSubchunks][kTileStride];
  WaitForPriorKernel();
  const int lane = LaneId();
  TileRows rows = tile[threadIdx.x >> 5];
  const int64_t listed = __ldcg(&ws.counters->replanned_chunks);
  for (int64_t i = block * kSegmentWarps + (threadIdx.x >> 5); i < listed; i += grid * kSegmentWarps) {
    const int64_t c = __ldcg(ws.redo + i);
    const double before = __ldcg(ws.plan_before + c);  // the prefix SegmentConfirmRun or SegmentStridedChunksBlock kept
    const size_t base = static_cast<size_t>(c) * kChunkTerms;
    const int count = TermsInChunk(n, base);
    __syncwarp();  // the previous chunk's readers are done with the tile
    StartChunkLoad(source, base, count, rows, lane);
    FinishChunkLoad(source);
    __syncwarp();
    if constexpr (kStridedTried) {
      SegmentChunkFromTile(source, rows, count, c, before, options, ws);
    } else {
      SegmentChunkInTile(source, rows, count, c, before, __ldcg(ws.chunk_sums + c), options, ws);
    }
  }
}

template <class TermSource>
__global__ void __launch_bounds__(kSegmentWarps * 32, 6)
    SegmentRedoChunks(TermSource source, size_t n, PlanOptions options, SegmentWorkspace ws) {
  SegmentRedoChunksBlock</*kStridedTried=*/false>(source, n, options, ws, blockIdx.x, gridDim.x);
}

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
// 4. One block per group of chunks: segments across chunks, and the group's steps.

// (Templates, like every kernel here, so that the header can be included by several files.)
template <int kThreads = kSegmentGroupChunks>
__device__ inline void SegmentGroupsBlock(int64_t chunks, const SegmentWorkspace& ws, int64_t group) {
  WaitForPriorKernel();
  // Fewer threads than kSegmentGroupChunks only for a sum of one group of at most
  // kThreads chunks (EnqueueSegmentedSumsFromChunkSums): the same thread for each chunk.
  static_assert(kThreads <= kSegmentGroupChunks && kThreads % 32 == 0 && kThreads / 32 <= 32,
                "one thread per chunk of the group, at most 32 warps");
  constexpr int kWarps = kThreads / 32;
  using CountScan = cub::BlockScan<int, kThreads, cub::BLOCK_SCAN_WARP_SCANS>;
  __shared__ typename CountScan::TempStorage count_temp;
  __shared__ int32_t out_frames[kThreads];
  __shared__ RunSummary warp_total[kWarps];
  __shared__ int warp_total_head[kWarps];
  __shared__ RunSummary warp_carry[kWarps];  // the scan through the end of the warp before
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int64_t first = group * kSegmentGroupChunks;
  const int64_t c = first + tid;
  const bool valid = c < chunks;
  const int64_t last = (first + kSegmentGroupChunks < chunks ? first + kSegmentGroupChunks : chunks) - 1;

  int32_t mixed = 0;
  int32_t head_frame = kNoRunFrame;
  int32_t out_frame = kNoRunFrame;
  int32_t middle_base = 0;
  int32_t middle_count = 0;
  RunSummary out_run = IdentityRun();
  if (valid) {
    // Every field loaded at once (one round trip), then chosen.
    const ChunkRecord& rec = ws.records[c];
    mixed = rec.mixed;
    head_frame = rec.head.frame;
    const int32_t tail_frame = rec.tail.frame;
    const RunSummary head_run = rec.head.run;
    const RunSummary tail_run = rec.tail.run;
    const int32_t base = rec.middle_base;
    const int32_t count = rec.middle_count;
    out_frame = mixed ? tail_frame : head_frame;
    if (out_frame != kNoRunFrame) out_run = mixed ? tail_run : head_run;
    if (mixed) {
      middle_base = base;
      middle_count = count;
    }
  }
  // What the chunk hands on starts a segment unless it continues the previous chunk's run.
  out_frames[tid] = out_frame;
  __syncthreads();
  const int32_t prev_frame = tid > 0 ? out_frames[tid - 1] : kNoRunFrame;
  const bool starts = tid == 0 || mixed || out_frame != prev_frame;

  // Segmented scan: within each warp, then the warp totals in one warp, then one carry.
  RunSummary seg = out_run;
  bool head = starts;
  WarpSegmentedScan(seg, head);
  if (lane == 31) {
    warp_total[warp] = seg;
    warp_total_head[warp] = head ? 1 : 0;
  }
  __syncthreads();
  if (warp == 0) {
    RunSummary t = lane < kWarps ? warp_total[lane] : IdentityRun();
    bool t_head = lane < kWarps ? warp_total_head[lane] != 0 : true;
    WarpSegmentedScan(t, t_head);
    const RunSummary carry = ShflUpRun(t, 1);
    if (lane > 0 && lane < kWarps) warp_carry[lane] = carry;
  }
  __syncthreads();
  // A segment that began in an earlier warp continues into this one.
  if (!head && warp > 0) seg = Compose(warp_carry[warp], seg);
  // The segment through chunk c - 1, for closing it here.
  RunSummary prev_seg = ShflUpRun(seg, 1);
  if (lane == 0 && warp > 0) prev_seg = warp_carry[warp];

  const bool closing = valid && starts && tid > 0 && prev_frame != kNoRunFrame;
  const bool head_run = valid && mixed && head_frame != kNoRunFrame;
  const bool merge = closing && head_run && head_frame == prev_frame;
  const bool final_close = valid && c == last && out_frame != kNoRunFrame;
  const int mine =
      (closing ? 1 : 0) + (head_run && !merge ? 1 : 0) + (valid ? middle_count : 0) + (final_close ? 1 : 0);
  int at;
  int total;
  CountScan(count_temp).ExclusiveSum(mine, at, total);
  if (total > kSegmentGroupSteps) {
    if (tid == 0) {
      ws.step_count[group] = 0;
      atomicExch(&ws.counters->overflow, 1);
    }
    return;
  }
  if (tid == 0) ws.step_count[group] = total;
  if (mine == 0) return;
  SegmentStep* out = ws.steps + group * kSegmentGroupSteps + at;
  if (closing) {
    SegmentStep s;
    s.frame = prev_frame;
    s.lane_terms = -1;
    s.run = merge ? Compose(prev_seg, ws.records[c].head.run) : prev_seg;
    *out++ = s;
  }
  if (head_run && !merge) CopyStep(out++, &ws.records[c].head);
  for (int i = 0; i < middle_count; ++i) CopyStep(out++, ws.middle + middle_base + i);
  if (final_close) {
    SegmentStep s;
    s.frame = out_frame;
    s.lane_terms = -1;
    s.run = seg;
    *out = s;
  }
}

template <int kThreads = kSegmentGroupChunks>
__global__ void __launch_bounds__(kThreads) SegmentGroups(int64_t chunks, SegmentWorkspace ws) {
  SegmentGroupsBlock<kThreads>(chunks, ws, blockIdx.x);
}

// ---------------------------------------------------------------------------------
// 5. The walk: one block. Thread 0 applies batch b while warps 1.. stage batch b + 1.

struct SegmentWalkSmem {
  SegmentStep steps[2][kSegmentBatch];
  FloatRun runs[2][kSegmentBatch];  // a run step's values in binary64, for TryApplyFloatRun
  double terms[2][kSegmentBatch][32];
  int group_start[kSegmentMaxGroups + 1];
  int stop;
};

__device__ inline void StageSegmentBatch(SegmentWalkSmem& sm, const SegmentWorkspace& ws, int groups, int total,
                                         int batch, int buffer, int worker, int workers) {
  const int first = batch * kSegmentBatch;
  for (int k = worker; k < kSegmentBatch; k += workers) {
    const int j = first + k;
    if (j >= total) break;
    // The group holding global step j: the last group_start <= j.
    int lo = 0;
    int hi = groups - 1;
    while (lo < hi) {
      const int mid = (lo + hi + 1) >> 1;
      if (sm.group_start[mid] <= j) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    const SegmentStep* src = ws.steps + static_cast<int64_t>(lo) * kSegmentGroupSteps + (j - sm.group_start[lo]);
    CopyStep(&sm.steps[buffer][k], src);
    const int lane_terms = sm.steps[buffer][k].lane_terms;
    if (lane_terms < 0) sm.runs[buffer][k] = FloatRunOf(sm.steps[buffer][k].run, sm.steps[buffer][k].frame);
    if (lane_terms >= 0) {
      const double2* t = reinterpret_cast<const double2*>(ws.lane_terms + static_cast<size_t>(lane_terms) * 32);
      double2* to = reinterpret_cast<double2*>(sm.terms[buffer][k]);
#pragma unroll
      for (int i = 0; i < 16; ++i) to[i] = t[i];
    }
  }
}

// One step in the walking thread's registers: a crossing lane's terms, or a run's values
// in binary64 (the integer summary stays in shared memory for the rare fallback).
struct WalkStepRegs {
  int32_t lane_terms;  // >= 0: a crossing lane of `count` terms in x; else a run
  int32_t count;
  FloatRun run;
  double x[32];
};

__device__ inline void LoadWalkStep(const SegmentWalkSmem& sm, int buffer, int k, WalkStepRegs& r) {
  const SegmentStep& step = sm.steps[buffer][k];
  r.lane_terms = step.lane_terms;
  r.count = step.frame;
  if (r.lane_terms >= 0) {
    const double2* t2 = reinterpret_cast<const double2*>(sm.terms[buffer][k]);
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      const double2 v = t2[i];
      r.x[2 * i] = v.x;
      r.x[2 * i + 1] = v.y;
    }
  } else {
    r.run = sm.runs[buffer][k];
  }
}

// The step applied to the exact sum; false when a check refuses a run (sum untouched).
// A run goes by the binary64 check, one add on the chain, where it decides (nearly
// always), else by TryApplyRun on the integer summary.
__device__ inline bool ApplyWalkStep(double& sum, const WalkStepRegs& r, const SegmentStep& step) {
  if (r.lane_terms >= 0) {
#pragma unroll
    for (int i = 0; i < 32; ++i) {
      if (i < r.count) sum = __dadd_rn(sum, r.x[i]);
    }
    return true;
  }
  if (TryApplyFloatRun(sum, r.run)) return true;
  uint64_t bits = BitsOf(sum);
  if (!TryApplyRun(bits, step.run, step.frame)) return false;
  sum = DoubleOf(bits);
  return true;
}

__device__ inline void CountWalkStep(const WalkStepRegs& r, int& applied, int& crossing_lanes, int& terms_one_by_one) {
  ++applied;
  if (r.lane_terms >= 0) {
    ++crossing_lanes;
    terms_one_by_one += r.count;
  }
}

template <int kThreads = kSegmentWalkThreads>
__device__ inline void SegmentWalkBlock(int64_t chunks, const SegmentWorkspace& ws) {
  WaitForPriorKernel();
  extern __shared__ __align__(16) unsigned char smem_raw[];
  SegmentWalkSmem& sm = *reinterpret_cast<SegmentWalkSmem*>(smem_raw);
  constexpr int kGroupsPerThread = (kSegmentMaxGroups + kThreads - 1) / kThreads;
  using GroupScan = cub::BlockScan<int, kThreads, cub::BLOCK_SCAN_WARP_SCANS>;
  __shared__ typename GroupScan::TempStorage group_temp;
  __shared__ int overflow;
  __shared__ int tile_chunks;
  __shared__ int replanned_chunks;
  const int tid = static_cast<int>(threadIdx.x);
  const int groups = static_cast<int>(SegmentGroupCount(chunks));
  // Where each group's steps start in the global order.
  int counts[kGroupsPerThread];
#pragma unroll
  for (int i = 0; i < kGroupsPerThread; ++i) {
    const int g = tid * kGroupsPerThread + i;
    counts[i] = g < groups ? ws.step_count[g] : 0;
  }
  if (tid == 0) {
    overflow = ws.counters->overflow;
    tile_chunks = ws.counters->tile_chunks;
    replanned_chunks = ws.counters->replanned_chunks;
  }
  int starts[kGroupsPerThread];
  int total;
  GroupScan(group_temp).ExclusiveSum(counts, starts, total);
#pragma unroll
  for (int i = 0; i < kGroupsPerThread; ++i) {
    const int g = tid * kGroupsPerThread + i;
    if (g <= groups) sm.group_start[g] = starts[i];
  }
  if (tid == 0) sm.stop = 0;
  __syncthreads();  // also: every thread has read the counters and step counts
  // The state the next run starts from (SegmentChunkWarp and SegmentGroups are done).
  if (tid == 0) EmptySegmentPools(ws);
  if (overflow != 0) {
    if (tid == 0) {
      SegmentOutput out{};
      out.status = kSegmentOverflow;
      out.refused_step = -1;
      out.tile_chunks = tile_chunks;
      out.replanned_chunks = replanned_chunks;
      *ws.output = out;
    }
    return;
  }
  const int batches = (total + kSegmentBatch - 1) / kSegmentBatch;
  StageSegmentBatch(sm, ws, groups, total, 0, 0, tid, kThreads);
  __syncthreads();
  double sum = 0.0;  // the loop's start: +0
  int applied = 0;
  int crossing_lanes = 0;
  int terms_one_by_one = 0;
  int refused_step = -1;
  const long long clock_start = clock64();
  for (int b = 0; b < batches; ++b) {
    const int buffer = b & 1;
    if (tid >= 32) {
      if (b + 1 < batches) StageSegmentBatch(sm, ws, groups, total, b + 1, buffer ^ 1, tid - 32, kThreads - 32);
    } else if (tid == 0) {
      const int in_batch = total - b * kSegmentBatch < kSegmentBatch ? total - b * kSegmentBatch : kSegmentBatch;
      // Steps alternate between two register sets, each loaded a step before its use:
      // the shared-memory loads stay off the chain of dependent adds through `sum`, and
      // nothing is copied from one set to the other.
      WalkStepRegs even;
      WalkStepRegs odd;
      LoadWalkStep(sm, buffer, 0, even);
      for (int k = 0; k < in_batch; k += 2) {
        if (k + 1 < in_batch) LoadWalkStep(sm, buffer, k + 1, odd);
        if (!ApplyWalkStep(sum, even, sm.steps[buffer][k])) {
          refused_step = b * kSegmentBatch + k;
          break;
        }
        CountWalkStep(even, applied, crossing_lanes, terms_one_by_one);
        if (k + 1 >= in_batch) break;
        if (k + 2 < in_batch) LoadWalkStep(sm, buffer, k + 2, even);
        if (!ApplyWalkStep(sum, odd, sm.steps[buffer][k + 1])) {
          refused_step = b * kSegmentBatch + k + 1;
          break;
        }
        CountWalkStep(odd, applied, crossing_lanes, terms_one_by_one);
      }
      if (refused_step >= 0) sm.stop = 1;
    }
    __syncthreads();
    if (sm.stop) break;
  }
  if (tid == 0) {
    SegmentOutput out;
    out.sum_bits = BitsOf(sum);
    out.status = refused_step >= 0 ? kSegmentRefused : kSegmentAccepted;
    out.steps = applied;
    out.crossing_lanes = crossing_lanes;
    out.terms_one_by_one = terms_one_by_one;
    out.refused_step = refused_step;
    out.tile_chunks = tile_chunks;
    out.replanned_chunks = replanned_chunks;
    out.pad = 0;
    out.cycles_total = clock64() - clock_start;
    *ws.output = out;
  }
}

template <int kThreads = kSegmentWalkThreads>
__global__ void __launch_bounds__(kThreads) SegmentWalk(int64_t chunks, SegmentWorkspace ws) {
  SegmentWalkBlock<kThreads>(chunks, ws);
}

inline cudaError_t AllowSegmentWalkSharedMemory() {
  static std::atomic<uint64_t> done{0};
  return AllowSharedMemoryOnce(SegmentWalk<kSegmentWalkThreads>, static_cast<int>(sizeof(SegmentWalkSmem)), done);
}

// The pipelines' last two kernels, SegmentGroups and SegmentWalk, after the chunk stage;
// `stages` (if given) records after each, at after[first_stage] and after[first_stage + 1].
// (A template, so that only the files that launch the pipelines instantiate its kernels.)
template <int kGroupThreads = kSegmentGroupChunks>
cudaError_t EnqueueGroupsAndWalk(int64_t chunks, const SegmentWorkspace& ws, bool pdl, cudaStream_t stream,
                                 const StageEvents* stages, int first_stage) {
  const auto record = [&](int k) { return RecordStage(stages, k, stream); };
  if (cudaError_t err = LaunchAfterPrior(SegmentGroups<kGroupThreads>, static_cast<unsigned>(SegmentGroupCount(chunks)),
                                         kGroupThreads, 0, stream, pdl, chunks, ws);
      err != cudaSuccess) {
    return err;
  }
  if (cudaError_t err = record(first_stage); err != cudaSuccess) return err;
  if (cudaError_t err = LaunchAfterPrior(SegmentWalk<kSegmentWalkThreads>, 1, kSegmentWalkThreads,
                                         sizeof(SegmentWalkSmem), stream, pdl, chunks, ws);
      err != cudaSuccess) {
    return err;
  }
  if (cudaError_t err = record(first_stage + 1); err != cudaSuccess) return err;
  return cudaGetLastError();
}

// Enqueues the segment pipeline for 1 <= n terms (at most kSegmentMaxGroups groups:
// SegmentPipelineFits) on `stream`. ws.output holds the status and, when accepted, the
// loop's bits once the stream gets there. `stages`, if given, records after each of the
// four kernels (after[0..3]).
template <class TermSource>
cudaError_t EnqueueSegmentedSum(const TermSource& source, size_t n, const SegmentWorkspace& ws, PlanOptions options,
                                cudaStream_t stream, const StageEvents* stages = nullptr) {
  const int64_t chunks = ChunkCount(n);
  const int64_t groups = SegmentGroupCount(chunks);
  if (groups > kSegmentMaxGroups) return cudaErrorInvalidValue;
  if (cudaError_t err = AllowSegmentWalkSharedMemory(); err != cudaSuccess) return err;
  const auto record = [&](int k) { return RecordStage(stages, k, stream); };
  SegmentApproximateSums<TermSource>
      <<<static_cast<unsigned>(SuperCount(chunks)), kApproximateThreads, 0, stream>>>(source, n, chunks, ws);
  // Between stage events a kernel follows an event record, not a kernel: plain launches.
  const bool pdl = options.programmatic_launch && stages == nullptr;
  if (cudaError_t err = record(0); err != cudaSuccess) return err;
  const cudaError_t chunk_stage =
      options.crossings_first ? LaunchAfterPrior(SegmentChunkWarp<true, TermSource>, ChunkStageGrid(chunks),
                                                 kSegmentWarps * 32, 0, stream, pdl, source, n, chunks, options, ws)
                              : LaunchAfterPrior(SegmentChunkWarp<false, TermSource>, WarpGrid(chunks, kSegmentWarps),
                                                 kSegmentWarps * 32, 0, stream, pdl, source, n, chunks, options, ws);
  if (chunk_stage != cudaSuccess) return chunk_stage;
  if (cudaError_t err = record(1); err != cudaSuccess) return err;
  return EnqueueGroupsAndWalk(chunks, ws, pdl, stream, stages, 2);
}

// EnqueueSegmentedSum without its first kernel: ws.chunk_sums must hold each chunk's
// approximate sum (any order of adds) when the stream gets here. (The batch's two-pass
// chunk stage, EnqueueSegmentedSumsFromChunkSums, was measured here too, for SSIM's one
// sum per frame on the H200: its segment sums took 78 against 69 us, one more launch on
// the frame's path, and no more frames/s with 8 streams.)
template <class TermSource>
cudaError_t EnqueueSegmentedSumFromChunkSums(const TermSource& source, size_t n, const SegmentWorkspace& ws,
                                             PlanOptions options, cudaStream_t stream) {
  const int64_t chunks = ChunkCount(n);
  const int64_t groups = SegmentGroupCount(chunks);
  if (groups > kSegmentMaxGroups) return cudaErrorInvalidValue;
  if (cudaError_t err = AllowSegmentWalkSharedMemory(); err != cudaSuccess) return err;
  const bool pdl = options.programmatic_launch;
  options.crossings_first = false;  // SegmentSuperPrefix forms no run order
  if (cudaError_t err =
          LaunchAfterPrior(SegmentSuperPrefix<kSuperPrefixThreads>, 1, kSuperPrefixThreads, 0, stream, pdl, chunks, ws);
      err != cudaSuccess) {
    return err;
  }
  if (cudaError_t err = LaunchAfterPrior(SegmentChunkWarp<false, TermSource>, WarpGrid(chunks, kSegmentWarps),
                                         kSegmentWarps * 32, 0, stream, pdl, source, n, chunks, options, ws);
      err != cudaSuccess) {
    return err;
  }
  return EnqueueGroupsAndWalk(chunks, ws, pdl, stream, /*stages=*/nullptr, 0);
}

// The segment pipeline for the next frame of a stream: ws must hold the plan a previous
// run over n terms in this workspace left (ws.plan_before; every pipeline here leaves one),
// and options.mode must be kApproximatePrefix with strided chunks (the caller checks: see
// OrderedSumCuda). Six kernels: SegmentChunkUnderPreviousPlan, SegmentRunSumsPrefix,
// the confirm stage (SegmentConfirmRuns, SegmentRedoChunks), then SegmentGroups and
// SegmentWalk as EnqueueSegmentedSum. The output is the fresh pipeline's (same steps, same
// bits), with replanned_chunks counted. `stages`, if given, records after the first two
// kernels, the confirm stage, groups and walk (after[0..4]).
template <class TermSource>
cudaError_t EnqueueSegmentedSumReusingPlan(const TermSource& source, size_t n, const SegmentWorkspace& ws,
                                           PlanOptions options, cudaStream_t stream,
                                           const StageEvents* stages = nullptr) {
  const int64_t chunks = ChunkCount(n);
  const int64_t groups = SegmentGroupCount(chunks);
  if (groups > kSegmentMaxGroups) return cudaErrorInvalidValue;
  if (options.mode != PlanMode::kApproximatePrefix || !options.strided_chunks) return cudaErrorInvalidValue;
  if (cudaError_t err = AllowSegmentWalkSharedMemory(); err != cudaSuccess) return err;
  const auto record = [&](int k) { return RecordStage(stages, k, stream); };
  const bool pdl = options.programmatic_launch && stages == nullptr;
  const unsigned chunk_grid = WarpGrid(chunks, kSegmentWarps);
  SegmentChunkUnderPreviousPlan<TermSource>
      <<<chunk_grid, kSegmentWarps * 32, 0, stream>>>(source, n, chunks, options, ws);
  if (cudaError_t err = record(0); err != cudaSuccess) return err;
  if (cudaError_t err = LaunchAfterPrior(SegmentRunSumsPrefix<kApproximateThreads>, 1, kApproximateThreads, 0, stream,
                                         pdl, chunks, ws);
      err != cudaSuccess) {
    return err;
  }
  if (cudaError_t err = record(1); err != cudaSuccess) return err;
  if (cudaError_t err = LaunchAfterPrior(SegmentConfirmRuns<kConfirmWarps>, WarpGrid(SuperCount(chunks), kConfirmWarps),
                                         kConfirmWarps * 32, 0, stream, pdl, chunks, options, ws);
      err != cudaSuccess) {
    return err;
  }
  if (cudaError_t err = LaunchAfterPrior(SegmentRedoChunks<TermSource>, RedoGrid(chunks, kRedoBlocksPerWave),
                                         kSegmentWarps * 32, 0, stream, pdl, source, n, options, ws);
      err != cudaSuccess) {
    return err;
  }
  if (cudaError_t err = record(2); err != cudaSuccess) return err;
  return EnqueueGroupsAndWalk(chunks, ws, pdl, stream, stages, 3);
}

inline bool SegmentPipelineFits(size_t n) { return SegmentGroupCount(ChunkCount(n)) <= kSegmentMaxGroups; }

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
  SegmentSuperPrefixBlock<kThreads>(chunks, batch.ws[blockIdx.y], first_chunk, end_chunk);
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
  SegmentWalkBlock<kThreads>(chunks, batch.ws[blockIdx.y]);
}

template <int K>
cudaError_t AllowSegmentWalkBatchSharedMemory() {
  static std::atomic<uint64_t> done{0};
  return AllowSharedMemoryOnce(SegmentWalkBatch<K, kSegmentWalkThreads>, static_cast<int>(sizeof(SegmentWalkSmem)),
                               done);
}

// EnqueueSegmentedSumFromChunkSums for each of the batch's K sums, in five launches (the
// chunk stage in two passes: SegmentStridedChunks, then SegmentRedoChunks for the chunks
// it refused): batch.workspaces.ws[k].chunk_sums must hold sum k's approximate chunk
// sums, and ws[k].output receives sum k's status and bits.
//
// Or in slabs: EnqueueSegmentedSumsChunkStage for chunks [first, end) of every sum, slab
// after slab in order on one stream (first a multiple of 32; each slab's chunk sums
// written before its call), then EnqueueSegmentedSumsFinish (the redo, the groups and the
// walk). The same records, steps and bits as one pass; the terms a slab's strided pass
// reads can then be formed just before it (ssimulacra2's terms kernel, slab by slab), so
// that with many frames in flight they are still in L2.
template <class TermSource, int K>
cudaError_t EnqueueSegmentedSumsChunkStage(const SegmentBatch<TermSource, K>& batch, size_t n, int64_t first,
                                           int64_t end, PlanOptions options, cudaStream_t stream) {
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

template <class TermSource, int K>
cudaError_t EnqueueSegmentedSumsFinish(const SegmentBatch<TermSource, K>& batch, size_t n, PlanOptions options,
                                       cudaStream_t stream) {
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

#endif  // EXACTQ_ENGINE_EXACT_ORDERED_SUM_SEGMENTS_CUH_
