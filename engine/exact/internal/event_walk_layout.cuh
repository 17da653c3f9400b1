// The event walk's layout: its constants, events, scan slots and workspace. The event walk
// is the device pipeline of the exact ordered sum that never refuses (the segment
// pipeline's fallback), templated on where the terms come from
// (a TermSource: `__device__ double operator()(size_t i) const`). OrderedSumCuda
// instantiates it for terms in device memory; a metric can instantiate it with a source
// that recomputes term i.
//
// Five kernels on one stream (chunks of 1024 terms, sub-chunks of 32, as everywhere):
//   ChunkApproximateSumsWarp  one warp per chunk: an approximate sum (any fixed order);
//   PlanAndPrefix             one block: the deterministic approximate prefix B_c before
//                             each chunk and the planned frame (binade) of B_c;
//   ChunkSummariesWarp        one warp per chunk, lane k = sub-chunk k: the chunk's
//                             RunSummary under its plan (binary64 increments, one integer
//                             path unless a tie occurs, see binary64_summaries.h) and a
//                             PREDICTION: will the walk accept this chunk? (exact relative
//                             path of the summary + approximate start B_c, with a margin).
//                             For a chunk predicted refused (a "transition": a binade
//                             crossing, a zero crossing, the first chunk, infinities...) it
//                             also predicts from an approximate path which sub-chunks will be
//                             refused and the frame the exact sum will have after each, and
//                             forms (from the terms it already holds) the sub-chunk scans the
//                             walk will need: for each predicted round start j and its
//                             predicted frame F, compose(sub_j..sub_k) under F for every k,
//                             in slots taken from a pool;
//   PrepareWalk               one block per group of 512 chunks: pieces (maximal runs of
//                             predicted-accepted chunks with one plan) composed by a
//                             segmented scan, and an ordered list of walk events (pieces and
//                             transitions);
//   OrderedEventWalk          one block; warp 0 walks the events with the exact sum in
//                             registers while the block stages the next batch of event data
//                             in shared memory. A piece is one TryApplyRun; a transition
//                             chunk is a few warp ballots over precomputed scans plus 32
//                             one-by-one adds per refused sub-chunk.
// Predictions are advice: every decision is the exact check against the exact sum, and
// whatever was not predicted (a refused piece, a round whose frame or start has no
// precomputed scan) is done on the spot (a 32-ary search over the piece's prefixes, warp
// scans of summaries formed from the terms). So a wrong prediction costs time, never a
// bit, and the counts do not depend on predictions: a chunk is refused exactly when its
// summary under its plan fails the check against the exact sum before it, and a sub-chunk
// of a refused chunk goes one by one exactly when its summary under the frame of the
// exact sum before it fails the check (the host model counts the same).
//
//   exact::gpu::Workspace ws = ...;  // WorkspaceBytes(ChunkCount(n)) of device memory
//   exact::gpu::EnqueueOrderedSum(exact::gpu::DeviceArrayTerms{d_terms}, n, ws, options, stream);
//   // ws.output->sum_bits holds the loop's bits once the stream reaches this point.
#ifndef EXACTQ_ENGINE_EXACT_INTERNAL_EVENT_WALK_LAYOUT_CUH_
#define EXACTQ_ENGINE_EXACT_INTERNAL_EVENT_WALK_LAYOUT_CUH_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "engine/exact/internal/binary64_summaries.h"
#include "engine/exact/internal/block_chunk.cuh"
#include "engine/exact/internal/plan_options.cuh"
#include "engine/exact/ordered_sum_algebra.h"

namespace exactq {
namespace exact {
namespace gpu {

inline constexpr int kSubchunks = kChunkTerms / kSubchunkTerms;  // 32: one per lane
static_assert(kSubchunks == 32 && kSubchunkTerms == 32, "the warp layout needs 32 sub-chunks of 32 terms");

inline constexpr int kGroupChunks = 512;     // PrepareWalk block; pieces never cross groups
inline constexpr int kGroupSlots = 64;       // precomputed sub-chunk scans per group
inline constexpr int kMaxSlotsPerChunk = 8;  // predicted round starts kept per chunk
inline constexpr int kSumWarps = 8;          // ChunkApproximateSumsWarp block = 8 warps
inline constexpr int kSummaryWarps = 4;      // ChunkSummariesWarp block = 4 warps
inline constexpr int kPrefixThreads = 512;   // PlanAndPrefix
inline constexpr int kPrefixItems = 8;
inline constexpr int kWalkThreads = 256;  // OrderedEventWalk
inline constexpr int kBatchEvents = 64;
inline constexpr int kBatchSlots = 80;
inline constexpr int kBatchSubchunks = 96;

// For a chunk predicted refused: which sub-chunks start a round (bit j: j == 0 or sub-chunk
// j-1 predicted refused), which are predicted refused, and the predicted frame of the
// exact sum at the start of each sub-chunk.
struct TransitionInfo {
  uint32_t starts;
  uint32_t crossing;
  int32_t slot_base;  // the chunk's precomputed scans: slots[slot_base .. slot_base + slot_count)
  int32_t slot_count;
  int16_t frame[kSubchunks];
};

// One step of the walk. kind 0: a piece, chunks [first, end) with plan `frame`, `total`
// their composed summary; kind 1: one chunk predicted refused, `total` its summary,
// slot_count scans at slot_base, `x_mask` the sub-chunks whose terms the walk stages.
struct WalkEvent {
  RunSummary total;
  int32_t kind;
  int32_t first;
  int32_t end;
  int32_t frame;
  int32_t slot_base;
  int32_t slot_count;
  uint32_t x_mask;
  int32_t pad[3];
};
static_assert(sizeof(WalkEvent) == 96, "WalkEvent is copied as 6 x 16 bytes");

// scan[k] = compose(sub_start .. sub_k) under `frame` for k >= start (identity below).
struct ScanSlot {
  int32_t frame;
  int32_t start;
  int32_t chunk;
  int32_t pad;
  RunSummary scan[kSubchunks];
};
static_assert(sizeof(ScanSlot) % 16 == 0, "ScanSlot is copied in 16-byte words");

// Device memory the pipeline needs for n terms, carved from one allocation. The first
// four fields are those the window walk (window_walk.cuh) also uses.
struct Workspace {
  double* chunk_sums;           // [chunks]
  int* plan;                    // [chunks]
  RunSummary* summaries;        // [chunks]
  WalkOutput* output;           // [1]
  double* approximate_prefix;   // [chunks]
  uint8_t* predicted_refused;   // [chunks]
  TransitionInfo* transitions;  // [chunks], written for predicted-refused chunks only
  RunSummary* piece_prefix;     // [chunks]: compose(piece start .. c)
  WalkEvent* events;            // [groups * kGroupChunks]
  int* event_count;             // [groups]
  int* plan_runs;               // [groups]
  ScanSlot* slots;              // [groups * kGroupSlots], a pool taken by ChunkSummariesWarp
  int* slot_pool;               // [1]: slots taken so far (reset by PlanAndPrefix)
};

__host__ __device__ inline int64_t GroupCount(int64_t chunks) { return (chunks + kGroupChunks - 1) / kGroupChunks; }

inline size_t AlignUp(size_t bytes) { return (bytes + 255) & ~size_t{255}; }

// Lays a workspace's arrays out one after another from `base`, each aligned by AlignUp;
// with base == nullptr it only measures, so that a workspace's size is its layout's end
// (WorkspaceBytes and CarveWorkspace cannot disagree).
class WorkspaceCarver {
 public:
  explicit WorkspaceCarver(void* base) : base_(static_cast<char*>(base)) {}
  template <class T>
  T* Take(size_t count) {
    T* at = base_ == nullptr ? nullptr : reinterpret_cast<T*>(base_ + offset_);
    offset_ += AlignUp(count * sizeof(T));
    return at;
  }
  size_t bytes() const { return offset_; }

 private:
  char* base_;
  size_t offset_ = 0;
};

// The event-walk workspace from `carver` (about 560 bytes per 1024 terms, 4.4 MB for a 4K
// plane: mostly the precomputed scans).
inline Workspace CarveWorkspace(WorkspaceCarver& carver, int64_t chunks) {
  const size_t c = static_cast<size_t>(chunks);
  const size_t g = static_cast<size_t>(GroupCount(chunks));
  Workspace ws;
  ws.chunk_sums = carver.Take<double>(c);
  ws.plan = carver.Take<int>(c);
  ws.summaries = carver.Take<RunSummary>(c);
  ws.output = carver.Take<WalkOutput>(1);
  ws.approximate_prefix = carver.Take<double>(c);
  ws.predicted_refused = carver.Take<uint8_t>(c);
  ws.transitions = carver.Take<TransitionInfo>(c);
  ws.piece_prefix = carver.Take<RunSummary>(c);
  ws.events = carver.Take<WalkEvent>(g * kGroupChunks);
  ws.event_count = carver.Take<int>(g);
  ws.plan_runs = carver.Take<int>(g);
  ws.slots = carver.Take<ScanSlot>(g * kGroupSlots);
  ws.slot_pool = carver.Take<int>(1);
  return ws;
}

inline Workspace CarveWorkspace(void* base, int64_t chunks) {
  WorkspaceCarver carver(base);
  return CarveWorkspace(carver, chunks);
}

inline size_t WorkspaceBytes(int64_t chunks) {
  WorkspaceCarver carver(nullptr);
  CarveWorkspace(carver, chunks);
  return carver.bytes();
}

inline unsigned WarpGrid(int64_t chunks, int warps_per_block) {
  const int64_t blocks = (chunks + warps_per_block - 1) / warps_per_block;
  const int64_t kMaxGrid = int64_t{1} << 30;
  return static_cast<unsigned>(blocks < kMaxGrid ? blocks : kMaxGrid);
}

}  // namespace gpu
}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_INTERNAL_EVENT_WALK_LAYOUT_CUH_
