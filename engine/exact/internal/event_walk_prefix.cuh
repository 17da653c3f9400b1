// The event walk's stage 2: the approximate prefix before each chunk and its plan.
#ifndef EXACTQ_ENGINE_EXACT_INTERNAL_EVENT_WALK_PREFIX_CUH_
#define EXACTQ_ENGINE_EXACT_INTERNAL_EVENT_WALK_PREFIX_CUH_

#include <cuda_runtime.h>

#include <cstdint>

#include <cub/block/block_scan.cuh>

#include "engine/exact/internal/event_walk_layout.cuh"
#include "engine/exact/internal/launch.cuh"
#include "engine/exact/internal/warp_scans.cuh"

namespace exactq {
namespace exact {
namespace gpu {

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

}  // namespace gpu
}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_INTERNAL_EVENT_WALK_PREFIX_CUH_
