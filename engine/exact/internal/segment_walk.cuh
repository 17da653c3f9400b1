// The segment pipeline's stage 5: one block applies the groups' steps to the exact sum.
#ifndef EXACTQ_ENGINE_EXACT_INTERNAL_SEGMENT_WALK_CUH_
#define EXACTQ_ENGINE_EXACT_INTERNAL_SEGMENT_WALK_CUH_

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "engine/exact/internal/segment_groups.cuh"
#include "engine/exact/internal/segment_layout.cuh"

namespace exactq {
namespace exact {
namespace gpu {

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

// kStagedInSlabs: a batch's walk, which refuses (kSegmentUnstaged) unless its slabs
// staged every chunk of this run (slab_staging.h).
template <int kThreads = kSegmentWalkThreads, bool kStagedInSlabs = false>
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
  __shared__ int unstaged;
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
    if constexpr (kStagedInSlabs) {
      unstaged = EveryChunkStaged(ws.counters->staging, chunks) || EXACTQ_MUTANT(9) ? 0 : 1;
    }
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
  if constexpr (kStagedInSlabs) {
    if (unstaged != 0) {
      if (tid == 0) {
        SegmentOutput out{};
        out.status = kSegmentUnstaged;
        out.refused_step = -1;
        *ws.output = out;
      }
      return;
    }
  }
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

}  // namespace gpu
}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_INTERNAL_SEGMENT_WALK_CUH_
