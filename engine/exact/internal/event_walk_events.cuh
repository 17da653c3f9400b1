// The event walk's stage 4: pieces of accepted chunks and the ordered list of walk events.
#ifndef EXACTQ_ENGINE_EXACT_INTERNAL_EVENT_WALK_EVENTS_CUH_
#define EXACTQ_ENGINE_EXACT_INTERNAL_EVENT_WALK_EVENTS_CUH_

#include <cuda_runtime.h>

#include <cstdint>

#include <cub/block/block_scan.cuh>

#include "engine/exact/internal/event_walk_layout.cuh"
#include "engine/exact/internal/launch.cuh"
#include "engine/exact/internal/warp_scans.cuh"

namespace exactq {
namespace exact {
namespace gpu {

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

}  // namespace gpu
}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_INTERNAL_EVENT_WALK_EVENTS_CUH_
