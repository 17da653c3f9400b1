// The event walk's stage 5: one block applies the events to the exact sum in order.
// Never refuses; the segment pipeline's fallback.
#ifndef EXACTQ_ENGINE_EXACT_INTERNAL_EVENT_WALK_CUH_
#define EXACTQ_ENGINE_EXACT_INTERNAL_EVENT_WALK_CUH_

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "engine/exact/internal/event_walk_chunk_sums.cuh"
#include "engine/exact/internal/event_walk_events.cuh"
#include "engine/exact/internal/event_walk_layout.cuh"
#include "engine/exact/internal/event_walk_prefix.cuh"
#include "engine/exact/internal/event_walk_summaries.cuh"
#include "engine/exact/internal/launch.cuh"
#include "engine/exact/internal/warp_scans.cuh"

namespace exactq {
namespace exact {
namespace gpu {

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
    if (r > j + (EXACTQ_MUTANT(8) ? 1 : 0)) st.s = accepted;
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
        sh.x_src[xoff + t] = static_cast<long long>(first[h]) * kChunkTerms +
                             static_cast<long long>(k + (EXACTQ_MUTANT(7) ? 1 : 0)) * kSubchunkTerms;
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

// The walk needs more than 48 KB of shared memory.
template <class TermSource>
cudaError_t AllowWalkSharedMemory() {
  static std::atomic<uint64_t> done{0};
  return AllowSharedMemoryOnce(OrderedEventWalk<TermSource>, static_cast<int>(sizeof(WalkSmem)), done);
}

}  // namespace gpu
}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_INTERNAL_EVENT_WALK_CUH_
