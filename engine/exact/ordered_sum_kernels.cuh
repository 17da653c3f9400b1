// The device pipeline of the exact ordered sum, templated on where the terms come from
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
//                             path unless a tie occurs, see ordered_sum_fast.h) and a
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
//
// The v1 kernels (block-per-chunk summaries and the window walk) stay available from
// ordered_sum_walk_v1.cuh for callers that form summaries themselves.
#ifndef EXACTQ_ENGINE_EXACT_ORDERED_SUM_KERNELS_CUH_
#define EXACTQ_ENGINE_EXACT_ORDERED_SUM_KERNELS_CUH_

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

#include <cub/block/block_scan.cuh>

#include "engine/exact/ordered_sum_algebra.h"
#include "engine/exact/ordered_sum_block.cuh"
#include "engine/exact/ordered_sum_fast.h"
#include "engine/exact/ordered_sum_walk_v1.cuh"

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
// four fields keep their v1 meaning (chunk_sums, plan, summaries, output).
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

// ---------------------------------------------------------------------------------
// Warp helpers. Every lane of the warp must call them (full-mask shuffles).

inline constexpr unsigned kFullMask = 0xffffffffu;

__device__ inline int LaneId() { return static_cast<int>(threadIdx.x & 31); }

// The sum over the warp of every lane's v, modulo 2^32 (the bits of the int overload's
// two's-complement sum too). Integer addition is exact in any order, so the hardware
// reduction (sm_80 and newer) and the shuffle tree (sm_75, in --config=cuda_release)
// give the same bits.
__device__ inline unsigned WarpSum(unsigned v) {
#if __CUDA_ARCH__ >= 800
  return __reduce_add_sync(kFullMask, v);
#else
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(kFullMask, v, offset);
  return v;
#endif
}
__device__ inline int WarpSum(int v) {
#if __CUDA_ARCH__ >= 800
  return __reduce_add_sync(kFullMask, v);
#else
  return static_cast<int>(WarpSum(static_cast<unsigned>(v)));
#endif
}

// Programmatic dependent launch (sm_90+; a no-op elsewhere and in kernels launched
// without it). A kernel launched with LaunchAfterPrior's attribute must call
// WaitForPriorKernel before it reads or writes memory that earlier kernels of the stream
// touch: it returns once the kernel before it has completed and its writes are visible.
// (No kernel triggers its dependents early: on the H200 an early trigger in every stage
// made the segment pipeline 10 us slower, the waiting blocks taking the SMs' room, and
// one in the small stages only (prefix, chunk, groups) still 3 us slower than without
// PDL, with ssimulacra2's 4K throughput down from 358-363 to 344 fps.)
__device__ inline void WaitForPriorKernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Whether the current device has programmatic dependent launch (compute capability 9+),
// asked once per device.
inline bool ProgrammaticLaunchAvailable() {
  static std::atomic<uint64_t> known{0};
  static std::atomic<uint64_t> available{0};
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= 64) return false;
  const uint64_t bit = uint64_t{1} << device;
  if ((known.load(std::memory_order_acquire) & bit) == 0) {
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) return false;
    if (major >= 9) available.fetch_or(bit, std::memory_order_relaxed);
    known.fetch_or(bit, std::memory_order_release);
  }
  return (available.load(std::memory_order_relaxed) & bit) != 0;
}

// kernel<<<grid, block, smem, stream>>>(args...), with programmatic dependent launch
// when `programmatic` and the device has it.
template <class... Params, class... Args>
cudaError_t LaunchAfterPrior(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                             bool programmatic, Args&&... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attribute;
  config.numAttrs = programmatic && ProgrammaticLaunchAvailable() ? 1 : 0;
  return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

__device__ inline RunSummary ShflRun(const RunSummary& r, int src) {
  RunSummary o;
#pragma unroll
  for (int p = 0; p < 2; ++p) {
    o.d[p] = __shfl_sync(kFullMask, static_cast<long long>(r.d[p]), src);
    o.lo[p] = __shfl_sync(kFullMask, static_cast<long long>(r.lo[p]), src);
    o.hi[p] = __shfl_sync(kFullMask, static_cast<long long>(r.hi[p]), src);
  }
  o.flags = __shfl_sync(kFullMask, r.flags, src);
  return o;
}

__device__ inline RunSummary ShflUpRun(const RunSummary& r, unsigned delta) {
  RunSummary o;
#pragma unroll
  for (int p = 0; p < 2; ++p) {
    o.d[p] = __shfl_up_sync(kFullMask, static_cast<long long>(r.d[p]), delta);
    o.lo[p] = __shfl_up_sync(kFullMask, static_cast<long long>(r.lo[p]), delta);
    o.hi[p] = __shfl_up_sync(kFullMask, static_cast<long long>(r.hi[p]), delta);
  }
  o.flags = __shfl_up_sync(kFullMask, r.flags, delta);
  return o;
}

// Lane k gets compose(v_0 .. v_k), in lane order.
__device__ inline RunSummary WarpInclusiveScan(RunSummary v) {
  const int lane = LaneId();
#pragma unroll
  for (unsigned d = 1; d < 32; d <<= 1) {
    const RunSummary other = ShflUpRun(v, d);
    if (lane >= static_cast<int>(d)) v = Compose(other, v);
  }
  return v;
}

// A summary whose two parities are equal (no tie in its terms): one path.
struct PathRun {
  int64_t d;
  int64_t lo;
  int64_t hi;
  uint32_t flags;  // term flags, and both unfit bits or neither
};

__device__ inline bool ParityUniform(const RunSummary& r) {
  return r.d[0] == r.d[1] && r.lo[0] == r.lo[1] && r.hi[0] == r.hi[1] &&
         ((r.flags & kUnfitEven) != 0) == ((r.flags & kUnfitOdd) != 0);
}

// Compose restricted to parity-uniform runs (both parities of the result are equal too).
__device__ inline PathRun ComposePaths(const PathRun& a, const PathRun& b) {
  PathRun r;
  r.flags = a.flags | b.flags;
  r.d = 0;
  r.lo = kEmptyLo;
  r.hi = kEmptyHi;
  if (r.flags & kUnfitEven) return r;
  const int64_t b_lo = a.d + b.lo;
  const int64_t b_hi = a.d + b.hi;
  const int64_t lo = a.lo < b_lo ? a.lo : b_lo;
  const int64_t hi = a.hi > b_hi ? a.hi : b_hi;
  if (lo < -kLimit || hi > kLimit) {
    r.flags |= kUnfitEven | kUnfitOdd;
    return r;
  }
  r.d = a.d + b.d;
  r.lo = lo;
  r.hi = hi;
  return r;
}

// The chunk total (compose of the 32 lanes in order), in every lane.
__device__ inline RunSummary WarpTotal(const RunSummary& mine) {
  const int lane = LaneId();
  if (__all_sync(kFullMask, ParityUniform(mine))) {
    PathRun v{mine.d[0], mine.lo[0], mine.hi[0], mine.flags};
#pragma unroll
    for (unsigned d = 1; d < 32; d <<= 1) {
      PathRun other;
      other.d = __shfl_up_sync(kFullMask, static_cast<long long>(v.d), d);
      other.lo = __shfl_up_sync(kFullMask, static_cast<long long>(v.lo), d);
      other.hi = __shfl_up_sync(kFullMask, static_cast<long long>(v.hi), d);
      other.flags = __shfl_up_sync(kFullMask, v.flags, d);
      if (lane >= static_cast<int>(d)) v = ComposePaths(other, v);
    }
    RunSummary r;
    r.flags = __shfl_sync(kFullMask, v.flags, 31);
    const int64_t d = __shfl_sync(kFullMask, static_cast<long long>(v.d), 31);
    const int64_t lo = __shfl_sync(kFullMask, static_cast<long long>(v.lo), 31);
    const int64_t hi = __shfl_sync(kFullMask, static_cast<long long>(v.hi), 31);
#pragma unroll
    for (int p = 0; p < 2; ++p) {
      r.d[p] = d;
      r.lo[p] = lo;
      r.hi[p] = hi;
    }
    return r;
  }
  return ShflRun(WarpInclusiveScan(mine), 31);
}

// The same scan as a loop (one Compose in the machine code instead of five): for code that
// runs once per kernel on a few SMs, where fetching cold instructions costs more than the
// loop.
__device__ inline RunSummary WarpInclusiveScanCompact(RunSummary v) {
  const int lane = LaneId();
#pragma unroll 1
  for (unsigned d = 1; d < 32; d <<= 1) {
    const RunSummary other = ShflUpRun(v, d);
    if (lane >= static_cast<int>(d)) v = Compose(other, v);
  }
  return v;
}

__device__ inline int WarpInclusiveSumInt(int v) {
  const int lane = LaneId();
#pragma unroll
  for (unsigned d = 1; d < 32; d <<= 1) {
    const int other = __shfl_up_sync(kFullMask, v, d);
    if (lane >= static_cast<int>(d)) v += other;
  }
  return v;
}

// Terms of lane k's sub-chunk, read from a TermSource (len <= 32 of them).
template <class TermSource>
__device__ inline RunSummary SubchunkSummaryFromSource(const TermSource& source, size_t first, int len, int frame) {
  double x[kSubchunkTerms];
#pragma unroll
  for (int t = 0; t < kSubchunkTerms; ++t) x[t] = t < len ? source(first + static_cast<size_t>(t)) : 0.0;
  return SummarizeTermsFast(x, len, frame);  // x goes to (L1-cached) local memory
}

__device__ inline int ClampLen(int64_t v) { return v < 0 ? 0 : (v > 32 ? 32 : static_cast<int>(v)); }

// ---------------------------------------------------------------------------------
// 1. Approximate chunk sums: one warp per chunk, lane l adds terms l, l+32, ... (a fixed
// order: the plan is the same on every run), then a butterfly over the lanes.

// A chunk's approximate sum from the 32 terms each lane holds (lane l: terms l, l+32, ...,
// zeros past the end): pairwise within the lane, then a butterfly across lanes. One fixed
// order, so every kernel that forms a chunk's sum this way gets the same bits (the plan
// from a previous frame is confirmed against sums formed by another kernel).
__device__ inline double WarpTreeSum(double (&x)[32]) {
#pragma unroll
  for (int step = 1; step < 32; step <<= 1) {
#pragma unroll
    for (int i = 0; i < 32; i += 2 * step) x[i] = __dadd_rn(x[i], x[i + step]);
  }
  double s = x[0];
#pragma unroll
  for (int d = 16; d >= 1; d >>= 1) s = __dadd_rn(s, __shfl_xor_sync(kFullMask, s, d));
  return s;
}

// Chunk c's approximate sum, in every lane of the warp.
template <class TermSource>
__device__ inline double ChunkApproximateSum(const TermSource& source, size_t n, int64_t c) {
  const int lane = LaneId();
  const size_t base = static_cast<size_t>(c) * kChunkTerms;
  double x[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    const size_t idx = base + static_cast<size_t>(i * 32 + lane);
    x[i] = idx < n ? source(idx) : 0.0;
  }
  return WarpTreeSum(x);
}

template <class TermSource>
__global__ void __launch_bounds__(kSumWarps * 32)
    ChunkApproximateSumsWarp(TermSource source, size_t n, int64_t chunks, double* chunk_sums) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kSumWarps;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * kSumWarps + (threadIdx.x >> 5); c < chunks; c += stride) {
    const double s = ChunkApproximateSum(source, n, c);
    if (LaneId() == 0) chunk_sums[c] = s;
  }
}

// ---------------------------------------------------------------------------------
// 2. The approximate prefix before each chunk and its frame, tile by tile with a carry, in
// one block (a fixed association: the same plan on every run).

template <int kThreads = kPrefixThreads>
__global__ void __launch_bounds__(kThreads)
    PlanAndPrefix(const double* chunk_sums, int64_t chunks, PlanOptions options, int* plan, double* approximate_prefix,
                  int* counters, int counter_count = 1) {
  // Pools the next kernel takes from (slots, steps, lanes) start empty on every run.
  if (counters != nullptr && static_cast<int>(threadIdx.x) < counter_count) counters[threadIdx.x] = 0;
  using Scan = cub::BlockScan<double, kThreads>;
  constexpr int kTile = kThreads * kPrefixItems;
  __shared__ typename Scan::TempStorage temp;
  __shared__ double buf[kTile];  // global reads and writes stay coalesced; threads work on consecutive items
  const int tid = static_cast<int>(threadIdx.x);
  double carry = 0.0;
  for (int64_t tile = 0; tile < chunks; tile += kTile) {
#pragma unroll
    for (int i = 0; i < kPrefixItems; ++i) {
      const int64_t c = tile + i * kThreads + tid;
      buf[i * kThreads + tid] = c < chunks ? chunk_sums[c] : 0.0;
    }
    __syncthreads();
    double x[kPrefixItems];
    double mine = 0.0;
#pragma unroll
    for (int i = 0; i < kPrefixItems; ++i) {
      x[i] = buf[tid * kPrefixItems + i];
      mine = __dadd_rn(mine, x[i]);
    }
    double before;
    double tile_total;
    Scan(temp).ExclusiveSum(mine, before, tile_total);
    __syncthreads();  // every thread has read buf
    double run = __dadd_rn(carry, before);
#pragma unroll
    for (int i = 0; i < kPrefixItems; ++i) {
      buf[tid * kPrefixItems + i] = run;
      run = __dadd_rn(run, x[i]);
    }
    __syncthreads();
#pragma unroll 1
    for (int i = 0; i < kPrefixItems; ++i) {
      const int64_t c = tile + i * kThreads + tid;
      if (c < chunks) {
        const double b = buf[i * kThreads + tid];
        approximate_prefix[c] = b;
        plan[c] = PlanFrame(b, options.mode, options.fixed_frame, static_cast<uint64_t>(c));
      }
    }
    carry = __dadd_rn(carry, tile_total);
    __syncthreads();  // buf and temp are reused by the next tile
  }
}

// ---------------------------------------------------------------------------------
// 3. Summaries and predictions: one warp per chunk. The warp reads the chunk coalesced
// (lane l: terms l, l+32, ...) and transposes it through shared memory so that lane k
// holds sub-chunk k (terms 32k..32k+31, in order); the chunk summary is the ordered
// composition of the 32 lane summaries.

template <class TermSource>
__global__ void __launch_bounds__(kSummaryWarps * 32)
    ChunkSummariesWarp(TermSource source, size_t n, int64_t chunks, const int* plan, const double* approximate_prefix,
                       RunSummary* summaries, uint8_t* predicted_refused, TransitionInfo* transitions, ScanSlot* slots,
                       int* slot_pool, int slot_capacity) {
  __shared__ double tile[kSummaryWarps][kSubchunks][kSubchunkTerms + 1];  // +1: no bank conflicts
  const int lane = LaneId();
  double(*rows)[kSubchunkTerms + 1] = tile[threadIdx.x >> 5];
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kSummaryWarps;
  for (int64_t w = static_cast<int64_t>(blockIdx.x) * kSummaryWarps + (threadIdx.x >> 5); w < chunks; w += stride) {
    // The last chunks first: the approximate pass read them last, so they may still be in L2.
    const int64_t c = chunks - 1 - w;
    const size_t base = static_cast<size_t>(c) * kChunkTerms;
    const int count = TermsInChunk(n, base);
    double x[32];
#pragma unroll
    for (int i = 0; i < 32; ++i) {
      const int k = i * 32 + lane;
      x[i] = k < count ? source(base + static_cast<size_t>(k)) : 0.0;
    }
    __syncwarp();  // the previous chunk's readers are done with the tile
#pragma unroll
    for (int i = 0; i < 32; ++i) rows[i][lane] = x[i];
    __syncwarp();
    const int frame = plan[c];
    const int len = ClampLen(count - lane * 32);
    const double* row = rows[lane];
    const RunSummary mine = SummarizeTermsFast(row, len, frame);
    const RunSummary total = WarpTotal(mine);
    const double before = approximate_prefix[c];
    const bool accepted = PredictAccepted(total, frame, before);  // the same in every lane
    if (lane == 0) {
      summaries[c] = total;
      predicted_refused[c] = accepted ? 0 : 1;
    }
    if (!accepted) {
      // The approximate path through the sub-chunks: where it may leave its binade.
      double s = 0.0;
      double low = 0.0;
      double high = 0.0;
#pragma unroll
      for (int t = 0; t < kSubchunkTerms; ++t) {
        if (t < len) {
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
      double excl = __shfl_up_sync(kFullMask, incl, 1);
      const double start = lane == 0 ? before : __dadd_rn(before, excl);
      const int nsub = (count + kSubchunkTerms - 1) / kSubchunkTerms;
      const bool in_chunk = lane < nsub;
      const bool crossing = in_chunk && (PredictCrossing(start, low, high) || !isfinite(s));
      const uint32_t crossing_mask = __ballot_sync(kFullMask, crossing);
      const uint32_t valid_mask = nsub >= 32 ? 0xffffffffu : ((1u << nsub) - 1u);
      TransitionInfo& info = transitions[c];
      const int16_t my_frame = static_cast<int16_t>(FrameOfBits(BitsOf(start)));
      info.frame[lane] = my_frame;
      const uint32_t starts = (1u | (crossing_mask << 1)) & valid_mask;
      // The sub-chunk scans the walk will need, from the terms already in shared memory:
      // for the first kMaxSlotsPerChunk predicted round starts j (frame F_j predicted at
      // sub-chunk j), scan[k] = compose(sub_j .. sub_k) under F_j. Slots come from a pool;
      // where it is exhausted the chunk gets none (the walk then forms them itself).
      int slot_count = __popc(starts);
      if (slot_count > kMaxSlotsPerChunk) slot_count = kMaxSlotsPerChunk;
      int slot_base = 0;
      if (lane == 0) {
        slot_base = atomicAdd(slot_pool, slot_count);
        if (slot_base + slot_count > slot_capacity) slot_count = 0;
      }
      slot_base = __shfl_sync(kFullMask, slot_base, 0);
      slot_count = __shfl_sync(kFullMask, slot_count, 0);
      if (lane == 0) {
        info.starts = starts;
        info.crossing = crossing_mask;
        info.slot_base = slot_base;
        info.slot_count = slot_count;
      }
      uint32_t remaining = starts;
#pragma unroll 1
      for (int t = 0; t < slot_count; ++t) {
        const int j = __ffs(remaining) - 1;
        remaining &= remaining - 1;
        const int slot_frame = __shfl_sync(kFullMask, static_cast<int>(my_frame), j);
        RunSummary part = IdentityRun();
        if (lane >= j && in_chunk) part = SummarizeTermsFast(row, len, slot_frame);
        const RunSummary scan = WarpInclusiveScanCompact(part);
        ScanSlot& out = slots[slot_base + t];
        out.scan[lane] = scan;
        if (lane == 0) {
          out.frame = slot_frame;
          out.start = j;
          out.chunk = static_cast<int32_t>(c);
          out.pad = 0;
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------
// 4. Pieces and events: one block per group of kGroupChunks chunks, one thread per chunk.
// (The sub-chunk scans of the transitions are already in their slots: ChunkSummariesWarp
// formed them, spread over the whole GPU.) The scans below are loops, not unrolled: this
// code runs once on a few SMs, so fetching cold instructions is what it mostly waits for.

template <class TermSource>
__global__ void __launch_bounds__(kGroupChunks)
    PrepareWalk(int64_t chunks, const int* plan, const uint8_t* predicted_refused, const RunSummary* summaries,
                const TransitionInfo* transitions, RunSummary* piece_prefix, WalkEvent* events, int* event_count,
                int* plan_runs) {
  constexpr int kWarps = kGroupChunks / 32;
  __shared__ RunSummary warp_total[kWarps];
  __shared__ RunSummary warp_carry[kWarps];
  __shared__ int warp_has_head[kWarps];
  __shared__ int warp_heads[kWarps];
  __shared__ uint8_t head_at[kGroupChunks + 1];

  const int tid = static_cast<int>(threadIdx.x);
  const int lane = LaneId();
  const int warp = tid >> 5;
  const int64_t g = blockIdx.x;
  const int64_t c = g * kGroupChunks + tid;
  const bool valid = c < chunks;

  RunSummary v = IdentityRun();
  int frame = 0;
  bool refused = false;
  bool starts_plan_run = false;
  bool head = true;  // past the end: isolated
  if (valid) {
    v = summaries[c];
    frame = plan[c];
    refused = predicted_refused[c] != 0;
    const int frame_before = c > 0 ? plan[c - 1] : frame;
    const bool refused_before = c > 0 && predicted_refused[c - 1] != 0;
    starts_plan_run = c == 0 || frame_before != frame;
    head = tid == 0 || refused || refused_before || frame_before != frame;
  }
  head_at[tid] = head ? 1 : 0;
  if (tid == 0) head_at[kGroupChunks] = 1;
  const int runs = __syncthreads_count(starts_plan_run ? 1 : 0);

  // Segmented inclusive scan: s = compose(last head at or before c .. c).
  RunSummary s = v;
  bool f = head;
#pragma unroll 1
  for (unsigned d = 1; d < 32; d <<= 1) {
    const RunSummary other = ShflUpRun(s, d);
    const bool other_f = __shfl_up_sync(kFullMask, f ? 1 : 0, d) != 0;
    if (lane >= static_cast<int>(d)) {
      if (!f) s = Compose(other, s);
      f = f || other_f;
    }
  }
  // Events: one per head, numbered in chunk order.
  const unsigned head_mask = __ballot_sync(kFullMask, valid && head);
  if (lane == 31) {
    warp_total[warp] = s;
    warp_has_head[warp] = f ? 1 : 0;
    warp_heads[warp] = __popc(head_mask);
  }
  __syncthreads();
  if (tid == 0) {
    RunSummary running = IdentityRun();
    int heads = 0;
#pragma unroll 1
    for (int w = 0; w < kWarps; ++w) {
      warp_carry[w] = running;
      running = warp_has_head[w] ? warp_total[w] : Compose(running, warp_total[w]);
      const int h = warp_heads[w];
      warp_heads[w] = heads;  // exclusive
      heads += h;
    }
    event_count[g] = heads;
    plan_runs[g] = runs;
  }
  __syncthreads();
  if (!f) s = Compose(warp_carry[warp], s);
  if (valid) piece_prefix[c] = s;

  const int my_event = warp_heads[warp] + __popc(head_mask & ((2u << lane) - 1u)) - 1;
  WalkEvent* group_events = events + g * kGroupChunks;
  if (valid && head) {
    WalkEvent& e = group_events[my_event];
    e.kind = refused ? 1 : 0;
    e.first = static_cast<int32_t>(c);
    e.frame = frame;
    e.slot_base = 0;
    e.slot_count = 0;
    e.x_mask = 0u;
    if (refused) {
      const TransitionInfo& info = transitions[c];
      e.slot_base = info.slot_base;
      e.slot_count = info.slot_count;
      e.x_mask = info.crossing;
    }
  }
  if (valid && (refused || head_at[tid + 1])) {
    WalkEvent& e = group_events[my_event];
    e.end = static_cast<int32_t>(c + 1);
    e.total = refused ? v : s;
  }
}

// ---------------------------------------------------------------------------------
// 5. The walk.

struct WalkSmem {
  alignas(16) WalkEvent ev[kBatchEvents];
  alignas(16) ScanSlot slot[kBatchSlots];
  alignas(16) double xterm[kBatchSubchunks][kSubchunkTerms];
  int ev_src[kBatchEvents];   // global event index
  int ev_soff[kBatchEvents];  // first slot in `slot`
  int ev_xoff[kBatchEvents];  // first staged sub-chunk in `xterm`
  int slot_src[kBatchSlots];
  long long x_src[kBatchSubchunks];  // index of the first term
  int nb;
  int ns;
  int nx;
  int cur_group;
  int cur_event;
  int plan_runs;
};

// The exact sum and the counts, identical in every lane of warp 0.
struct WalkState {
  uint64_t s;
  int64_t chunks_rejected;
  int64_t subchunks_rejected;
  int64_t terms_one_by_one;
};

// A refused chunk, sub-chunk by sub-chunk: rounds that take the longest accepted prefix of
// the remaining sub-chunks under the frame of the exact sum (precomputed scans where a slot
// matches the round's start and frame, else formed here from the terms), then add the first
// refused sub-chunk one by one (staged terms where present).
template <class TermSource>
__device__ __forceinline__ void ReplanChunk(WalkState& st, const TermSource& source, size_t n, int64_t c,
                                            const ScanSlot* slots, int nslots, uint32_t x_mask,
                                            const double (*xterms)[kSubchunkTerms]) {
  const int lane = LaneId();
  const size_t base = static_cast<size_t>(c) * kChunkTerms;
  const int count = TermsInChunk(n, base);
  const int nsub = (count + kSubchunkTerms - 1) / kSubchunkTerms;
  const bool in_chunk = lane < nsub;
  int j = 0;
  while (j < nsub) {
    const int frame = FrameOfBits(st.s);
    const bool match = lane < nslots && slots[lane].start == j && slots[lane].frame == frame;
    const unsigned matches = __ballot_sync(kFullMask, match);
    RunSummary prefix;
    if (matches != 0) {
      prefix = slots[__ffs(matches) - 1].scan[lane];
    } else {
      RunSummary mine = IdentityRun();
      if (lane >= j && in_chunk) {
        mine = SubchunkSummaryFromSource(source, base + static_cast<size_t>(lane) * kSubchunkTerms,
                                         ClampLen(count - lane * 32), frame);
      }
      prefix = WarpInclusiveScan(mine);
    }
    uint64_t trial = st.s;
    const bool in_round = lane >= j && in_chunk;
    const bool ok = !in_round || TryApplyRun(trial, prefix, frame);
    const unsigned refused = __ballot_sync(kFullMask, !ok);
    const int r = refused != 0 ? __ffs(refused) - 1 : nsub;
    const uint64_t accepted = __shfl_sync(kFullMask, static_cast<unsigned long long>(trial), r > j ? r - 1 : 0);
    if (r > j) st.s = accepted;
    if (r < nsub) {
      const int len = ClampLen(count - r * 32);
      double v = 0.0;
      if ((x_mask >> r) & 1u) {
        v = xterms[__popc(x_mask & ((1u << r) - 1u))][lane];
      } else if (lane < len) {
        v = source(base + static_cast<size_t>(r) * kSubchunkTerms + static_cast<size_t>(lane));
      }
      double acc = DoubleOf(st.s);
#pragma unroll
      for (int t = 0; t < kSubchunkTerms; ++t) {
        const double term = __shfl_sync(kFullMask, v, t);
        if (t < len) acc = __dadd_rn(acc, term);
      }
      st.s = BitsOf(acc);
      st.subchunks_rejected += 1;
      st.terms_one_by_one += len;
    }
    j = r + 1;
  }
}

// Chunks [c, end) with one plan, from their summaries, 32 at a time (warp scan, check,
// longest accepted prefix); a refused chunk is re-planned.
template <class TermSource>
__device__ __forceinline__ void WalkChunkWindows(WalkState& st, const TermSource& source, size_t n, int64_t c,
                                                 int64_t end, int frame, const RunSummary* summaries) {
  const int lane = LaneId();
  while (c < end) {
    const int w = end - c < 32 ? static_cast<int>(end - c) : 32;
    const RunSummary mine = lane < w ? summaries[c + lane] : IdentityRun();
    const RunSummary prefix = WarpInclusiveScan(mine);
    uint64_t trial = st.s;
    const bool ok = lane >= w || TryApplyRun(trial, prefix, frame);
    const unsigned refused = __ballot_sync(kFullMask, !ok);
    const int q = refused != 0 ? __ffs(refused) - 1 : w;
    const uint64_t accepted = __shfl_sync(kFullMask, static_cast<unsigned long long>(trial), q > 0 ? q - 1 : 0);
    if (q > 0) st.s = accepted;
    if (q < w) {
      st.chunks_rejected += 1;
      ReplanChunk(st, source, n, c + q, nullptr, 0, 0u, nullptr);
      c += q + 1;
    } else {
      c += w;
    }
  }
}

// A piece [first, end) whose total was refused: find its first refused chunk by a 32-ary
// search over the piece prefixes (acceptance of a prefix is monotone in its length), apply
// the prefix before it, re-plan it, and walk the rest window by window.
//
// Rare (a piece is refused only when its prediction was wrong), so it stays out of line; the
// state goes in and out by value, so the walk's state never lives in local memory.
template <class TermSource>
__device__ __noinline__ WalkState WalkRefusedPiece(WalkState st, const TermSource& source, size_t n, int64_t first,
                                                   int64_t end, int frame, const RunSummary* summaries,
                                                   const RunSummary* piece_prefix) {
  const int lane = LaneId();
  int64_t lo = first;
  int64_t hi = end - 1;  // refused (the piece total)
  while (lo < hi) {
    const int64_t p = lo + ((hi - lo) * (lane + 1)) / 32;  // lane 31: hi
    uint64_t trial = st.s;
    const bool ok = TryApplyRun(trial, piece_prefix[p], frame);
    const unsigned refused = __ballot_sync(kFullMask, !ok);
    const int l = refused != 0 ? __ffs(refused) - 1 : 31;
    const int64_t at = __shfl_sync(kFullMask, static_cast<long long>(p), l);
    const int64_t before = __shfl_sync(kFullMask, static_cast<long long>(p), l > 0 ? l - 1 : 0);
    if (l > 0) lo = before + 1;
    hi = at;
  }
  if (lo > first) {
    uint64_t trial = st.s;
    if (TryApplyRun(trial, piece_prefix[lo - 1], frame)) st.s = trial;
  }
  st.chunks_rejected += 1;
  ReplanChunk(st, source, n, lo, nullptr, 0, 0u, nullptr);
  WalkChunkWindows(st, source, n, lo + 1, end, frame, summaries);
  return st;
}

// Warp 0: the next batch of events that fits in shared memory, and the tables to stage it.
__device__ __forceinline__ void PlanBatch(WalkSmem& sh, const WalkEvent* events, const int* event_count,
                                          int64_t groups) {
  const int lane = LaneId();
  const int64_t g0 = sh.cur_group;
  const int e0 = sh.cur_event;
  int count = 0;
  if (g0 + lane < groups) count = event_count[g0 + lane] - (lane == 0 ? e0 : 0);
  const int incl = WarpInclusiveSumInt(count);
  const int avail = __shfl_sync(kFullMask, incl, 31);
  const int nmax = avail < kBatchEvents ? avail : kBatchEvents;
  // The group of the event at position i of the window: the first lane with incl > i.
  const auto locate = [&](int i, int64_t& event_index) {
    int a = 0;
    int b = 31;
#pragma unroll
    for (int step = 0; step < 5; ++step) {
      const int mid = (a + b) >> 1;
      const int at_mid = __shfl_sync(kFullMask, incl, mid);
      if (at_mid > i) {
        b = mid;
      } else {
        a = mid + 1;
      }
    }
    const int before = __shfl_sync(kFullMask, incl, a > 0 ? a - 1 : 0);
    const int local = i - (a > 0 ? before : 0) + (a == 0 ? e0 : 0);
    event_index = (g0 + a) * kGroupChunks + local;
    return a;
  };
  int64_t index[2];
  int slot_count[2];
  int slot_base[2];
  uint32_t x_mask[2];
  int first[2];
  int slots_incl[2];
  int x_incl[2];
  bool ok[2];
  int carry_slots = 0;
  int carry_x = 0;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int i = h * 32 + lane;
    locate(i, index[h]);
    slot_count[h] = 0;
    slot_base[h] = 0;
    x_mask[h] = 0;
    first[h] = 0;
    if (i < nmax) {
      const WalkEvent& e = events[index[h]];
      slot_count[h] = e.slot_count;
      slot_base[h] = e.slot_base;
      x_mask[h] = e.x_mask;
      first[h] = e.first;
    }
    slots_incl[h] = carry_slots + WarpInclusiveSumInt(slot_count[h]);
    x_incl[h] = carry_x + WarpInclusiveSumInt(__popc(x_mask[h]));
    carry_slots = __shfl_sync(kFullMask, slots_incl[h], 31);
    carry_x = __shfl_sync(kFullMask, x_incl[h], 31);
    ok[h] = i < nmax && slots_incl[h] <= kBatchSlots && x_incl[h] <= kBatchSubchunks;
  }
  const int nb = __popc(__ballot_sync(kFullMask, ok[0])) + __popc(__ballot_sync(kFullMask, ok[1]));
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int i = h * 32 + lane;
    if (ok[h]) {
      const int soff = slots_incl[h] - slot_count[h];
      const int xoff = x_incl[h] - __popc(x_mask[h]);
      sh.ev_src[i] = static_cast<int>(index[h]);
      sh.ev_soff[i] = soff;
      sh.ev_xoff[i] = xoff;
      for (int t = 0; t < slot_count[h]; ++t) sh.slot_src[soff + t] = slot_base[h] + t;
      uint32_t m = x_mask[h];
      for (int t = 0; m != 0; ++t) {
        const int k = __ffs(m) - 1;
        m &= m - 1;
        sh.x_src[xoff + t] =
            static_cast<long long>(first[h]) * kChunkTerms + static_cast<long long>(k) * kSubchunkTerms;
      }
      if (i == nb - 1) {
        sh.ns = slots_incl[h];
        sh.nx = x_incl[h];
      }
    }
  }
  // The cursor moves to the event after the batch.
  int64_t next_index = 0;
  const int next_group = locate(nb < avail ? nb : 0, next_index);
  __syncwarp();  // every lane has read the cursor
  if (lane == 0) {
    sh.nb = nb;
    if (nb == 0) {
      sh.ns = 0;
      sh.nx = 0;
    }
    if (nb < avail) {
      sh.cur_group = static_cast<int>(g0 + next_group);
      sh.cur_event = static_cast<int>(next_index - (g0 + next_group) * kGroupChunks);
    } else {
      sh.cur_group = static_cast<int>(g0 + 32 < groups ? g0 + 32 : groups);
      sh.cur_event = 0;
    }
  }
}

// All threads: copy the planned batch into shared memory.
template <class TermSource>
__device__ __forceinline__ void LoadBatch(WalkSmem& sh, const TermSource& source, size_t n, const WalkEvent* events,
                                          const ScanSlot* slots) {
  constexpr int kEventWords = sizeof(WalkEvent) / 16;
  constexpr int kSlotWords = sizeof(ScanSlot) / 16;
  constexpr int kUnroll = 8;
  const int tid = static_cast<int>(threadIdx.x);
  const int nb = sh.nb;
  const int ns = sh.ns;
  const int nx = sh.nx;
  for (int w = tid; w < nb * kEventWords; w += kWalkThreads) {
    const int i = w / kEventWords;
    const int q = w % kEventWords;
    reinterpret_cast<uint4*>(&sh.ev[i])[q] = reinterpret_cast<const uint4*>(events + sh.ev_src[i])[q];
  }
  const int slot_words = ns * kSlotWords;
  for (int w0 = tid; w0 < slot_words; w0 += kWalkThreads * kUnroll) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int w = w0 + u * kWalkThreads;
      if (w < slot_words) v[u] = reinterpret_cast<const uint4*>(slots + sh.slot_src[w / kSlotWords])[w % kSlotWords];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int w = w0 + u * kWalkThreads;
      if (w < slot_words) reinterpret_cast<uint4*>(&sh.slot[w / kSlotWords])[w % kSlotWords] = v[u];
    }
  }
  const int term_words = nx * kSubchunkTerms;
  for (int w0 = tid; w0 < term_words; w0 += kWalkThreads * kUnroll) {
    double v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int w = w0 + u * kWalkThreads;
      v[u] = 0.0;
      if (w < term_words) {
        const size_t i = static_cast<size_t>(sh.x_src[w / kSubchunkTerms]) + static_cast<size_t>(w % kSubchunkTerms);
        if (i < n) v[u] = source(i);
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int w = w0 + u * kWalkThreads;
      if (w < term_words) sh.xterm[w / kSubchunkTerms][w % kSubchunkTerms] = v[u];
    }
  }
}

template <class TermSource>
__global__ void __launch_bounds__(kWalkThreads, 1)
    OrderedEventWalk(TermSource source, size_t n, int64_t chunks, const RunSummary* summaries,
                     const RunSummary* piece_prefix, const WalkEvent* events, const int* event_count,
                     const int* plan_runs, const ScanSlot* slots, WalkOutput* output) {
  extern __shared__ __align__(16) unsigned char walk_smem_raw[];
  WalkSmem& sh = *reinterpret_cast<WalkSmem*>(walk_smem_raw);
  const int tid = static_cast<int>(threadIdx.x);
  const int64_t groups = GroupCount(chunks);
  if (tid == 0) {
    sh.cur_group = 0;
    sh.cur_event = 0;
    sh.plan_runs = 0;
  }
  __syncthreads();
  int runs = 0;
  for (int64_t g = tid; g < groups; g += kWalkThreads) runs += plan_runs[g];
  atomicAdd(&sh.plan_runs, runs);

  WalkState st{0, 0, 0, 0};  // +0: the loop's start; meaningful in warp 0
  for (;;) {
    __syncthreads();  // the previous batch is processed
    if (tid < 32) PlanBatch(sh, events, event_count, groups);
    __syncthreads();
    const int nb = sh.nb;
    if (nb == 0) break;
    LoadBatch(sh, source, n, events, slots);
    __syncthreads();
    if (tid < 32) {
      for (int i = 0; i < nb; ++i) {
        const WalkEvent& e = sh.ev[i];
        const RunSummary total = e.total;
        uint64_t trial = st.s;
        if (TryApplyRun(trial, total, e.frame)) {
          st.s = trial;
          continue;
        }
        if (e.kind == 0) {
          st = WalkRefusedPiece(st, source, n, e.first, e.end, e.frame, summaries, piece_prefix);
        } else {
          st.chunks_rejected += 1;
          ReplanChunk(st, source, n, e.first, &sh.slot[sh.ev_soff[i]], e.slot_count, e.x_mask,
                      &sh.xterm[sh.ev_xoff[i]]);
        }
      }
    }
  }
  if (tid == 0) {
    WalkOutput out;
    out.sum_bits = st.s;
    out.chunks_rejected = st.chunks_rejected;
    out.subchunks_rejected = st.subchunks_rejected;
    out.terms_one_by_one = st.terms_one_by_one;
    // One composed step per run of chunks with one plan, plus one per refused chunk (the
    // host model counts the same).
    out.walk_windows = sh.plan_runs + st.chunks_rejected;
    *output = out;
  }
}

// A kernel's dynamic shared-memory allowance above 48 KB, set once per process, device and
// kernel (`done` is the kernel's own flag word): a call per enqueue would cost the
// caller's thread a driver call each time.
template <class Kernel>
cudaError_t AllowSharedMemoryOnce(Kernel kernel, int bytes, std::atomic<uint64_t>& done) {
  int device = 0;
  if (cudaError_t err = cudaGetDevice(&device); err != cudaSuccess) return err;
  const uint64_t bit = device >= 0 && device < 64 ? (uint64_t{1} << device) : 0;
  if (bit != 0 && (done.load(std::memory_order_relaxed) & bit) != 0) return cudaSuccess;
  const cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  if (err == cudaSuccess && bit != 0) done.fetch_or(bit, std::memory_order_relaxed);
  return err;
}

// The walk needs more than 48 KB of shared memory.
template <class TermSource>
cudaError_t AllowWalkSharedMemory() {
  static std::atomic<uint64_t> done{0};
  return AllowSharedMemoryOnce(OrderedEventWalk<TermSource>, static_cast<int>(sizeof(WalkSmem)), done);
}

// Where EnqueueOrderedSum records events (each may be null): after each of the five kernels.
struct StageEvents {
  cudaEvent_t after[5] = {nullptr, nullptr, nullptr, nullptr, nullptr};
};

// Records stages->after[k] on `stream`, if the caller asked for stage events.
inline cudaError_t RecordStage(const StageEvents* stages, int k, cudaStream_t stream) {
  if (stages == nullptr || stages->after[k] == nullptr) return cudaSuccess;
  return cudaEventRecord(stages->after[k], stream);
}

// Enqueues the whole pipeline for n >= 1 terms on `stream`. The result is in ws.output
// once the stream gets there; nothing is copied to the host.
template <class TermSource>
cudaError_t EnqueueOrderedSum(const TermSource& source, size_t n, const Workspace& ws, PlanOptions options,
                              cudaStream_t stream, const StageEvents* stages = nullptr) {
  const int64_t chunks = ChunkCount(n);
  const int64_t groups = GroupCount(chunks);
  if (cudaError_t err = AllowWalkSharedMemory<TermSource>(); err != cudaSuccess) return err;
  const auto record = [&](int k) { return RecordStage(stages, k, stream); };
  ChunkApproximateSumsWarp<TermSource>
      <<<WarpGrid(chunks, kSumWarps), kSumWarps * 32, 0, stream>>>(source, n, chunks, ws.chunk_sums);
  if (cudaError_t err = record(0); err != cudaSuccess) return err;
  PlanAndPrefix<kPrefixThreads>
      <<<1, kPrefixThreads, 0, stream>>>(ws.chunk_sums, chunks, options, ws.plan, ws.approximate_prefix, ws.slot_pool);
  if (cudaError_t err = record(1); err != cudaSuccess) return err;
  ChunkSummariesWarp<TermSource><<<WarpGrid(chunks, kSummaryWarps), kSummaryWarps * 32, 0, stream>>>(
      source, n, chunks, ws.plan, ws.approximate_prefix, ws.summaries, ws.predicted_refused, ws.transitions, ws.slots,
      ws.slot_pool, static_cast<int>(groups * kGroupSlots));
  if (cudaError_t err = record(2); err != cudaSuccess) return err;
  PrepareWalk<TermSource><<<static_cast<unsigned>(groups), kGroupChunks, 0, stream>>>(
      chunks, ws.plan, ws.predicted_refused, ws.summaries, ws.transitions, ws.piece_prefix, ws.events, ws.event_count,
      ws.plan_runs);
  if (cudaError_t err = record(3); err != cudaSuccess) return err;
  OrderedEventWalk<TermSource><<<1, kWalkThreads, sizeof(WalkSmem), stream>>>(
      source, n, chunks, ws.summaries, ws.piece_prefix, ws.events, ws.event_count, ws.plan_runs, ws.slots, ws.output);
  if (cudaError_t err = record(4); err != cudaSuccess) return err;
  return cudaGetLastError();
}

}  // namespace gpu
}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_ORDERED_SUM_KERNELS_CUH_
