// The segment pipeline's layout: its constants, step and chunk records, output, workspace,
// and the segmented warp scan its stages share. The pipeline is the fast path of the
// exact ordered sum on the device.
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
// event_walk.cuh, which handles every case. Either way the bits are the loop's;
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
// For the next frame of a stream, EnqueueSegmentedSumReusingPlan (segment_plan_reuse.cuh) runs the
// chunk stage under the previous frame's plan first and then redoes only the chunks this
// frame's plan changes (the confirm stage: SegmentConfirmRuns lists them, a warp per run
// of 32 chunks; SegmentRedoChunks forms them): the same records, hence the same steps and
// bits. A batch of sums whose chunk sums a metric's kernel wrote
// (EnqueueSegmentedSumsFromChunkSums) takes the chunk stage in two passes:
// SegmentStridedChunks, the strided form straight from device memory with no tile, and
// SegmentRedoChunks, the tile path for the chunks it refused (the one-pass stage's tiles
// filled the SMs' shared memory while it ran). Such a batch may take its chunk stage in
// slabs (EnqueueSegmentedSumsChunkStage, then EnqueueSegmentedSumsFinish), each slab's
#ifndef EXACTQ_ENGINE_EXACT_INTERNAL_SEGMENT_LAYOUT_CUH_
#define EXACTQ_ENGINE_EXACT_INTERNAL_SEGMENT_LAYOUT_CUH_

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "engine/exact/internal/binary64_summaries.h"
#include "engine/exact/internal/event_walk_layout.cuh"
#include "engine/exact/internal/launch.cuh"
#include "engine/exact/internal/slab_staging.h"
#include "engine/exact/internal/warp_scans.cuh"
#include "engine/exact/ordered_sum_algebra.h"

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
  SlabStaging staging;   // the chunks a batch's slabs staged (SegmentSuperPrefixBatch); its walk checks them
};

inline constexpr int32_t kSegmentAccepted = 0;  // sum_bits are the loop's
inline constexpr int32_t kSegmentRefused = 1;   // a check refused a step: run the event walk
inline constexpr int32_t kSegmentOverflow = 2;  // a pool or a group's step list was full: run the event walk
// A batch's slabs did not stage every chunk in order (slab_staging.h): the records are
// not all this frame's. A caller's error, not the terms': its slabs must cover the sum.
inline constexpr int32_t kSegmentUnstaged = 3;

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
  c.staging = SlabStaging{0, 0};
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

}  // namespace gpu
}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_INTERNAL_SEGMENT_LAYOUT_CUH_
