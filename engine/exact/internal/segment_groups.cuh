// The segment pipeline's stage 4: one block per group of chunks composes runs across
// chunks into the group's ordered list of walk steps.
#ifndef EXACTQ_ENGINE_EXACT_INTERNAL_SEGMENT_GROUPS_CUH_
#define EXACTQ_ENGINE_EXACT_INTERNAL_SEGMENT_GROUPS_CUH_

#include <cuda_runtime.h>

#include <cstdint>

#include "engine/exact/internal/segment_layout.cuh"

namespace exactq {
namespace exact {
namespace gpu {

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
  if (!head && warp > 0 && !EXACTQ_MUTANT(4)) seg = Compose(warp_carry[warp], seg);
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
    s.run = merge && !EXACTQ_MUTANT(3) ? Compose(prev_seg, ws.records[c].head.run) : prev_seg;
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

}  // namespace gpu
}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_INTERNAL_SEGMENT_GROUPS_CUH_
