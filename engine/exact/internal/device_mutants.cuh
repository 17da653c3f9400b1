// Deliberate bugs in the device pipelines, for the device mutation check
// (device_mutations.sh): compiled only where EXACTQ_DEVICE_MUTANTS is defined (the
// test-only binary ordered_sum_cuda_mutants_test), chosen at run time by EXACTQ_MUTANT=N.
// Elsewhere EXACTQ_MUTANT(n) is the constant false and production code is unchanged.
//
// Each mutation point reads `EXACTQ_MUTANT(n) ? bug : right`, n one of the numbers
// below; device_mutations.sh runs the CUDA suite once per mutant and requires a failure.
//   1 SegmentChunkFromTile: middle steps stored as if the chunk had no head run
//   2 SegmentChunkFromTile: a crossing lane's last term left out of the lane pool
//   3 SegmentGroupsBlock: a chunk's head run dropped where it merges with the run before
//   4 SegmentGroupsBlock: segments lose their carry across warps
//   5 WarpApplyTieSteps: the parity scan ignores resets at ties
//   6 WarpApplyTieSteps: the first tie's correction of later ties left out
//   7 PlanBatch: the terms of predicted-refused sub-chunks staged one sub-chunk late
//   8 ReplanChunk: a round that accepts a single sub-chunk is not applied
//   9 SegmentWalkBlock: a batch walks although its slabs missed chunks
#ifndef EXACTQ_ENGINE_EXACT_INTERNAL_DEVICE_MUTANTS_CUH_
#define EXACTQ_ENGINE_EXACT_INTERNAL_DEVICE_MUTANTS_CUH_

#if defined(EXACTQ_DEVICE_MUTANTS)

#include <cuda_runtime.h>

#include <cstdlib>

namespace exactq {
namespace exact {
namespace gpu {

inline constexpr int kDeviceMutants = 9;

// Each .cu has its own copy (no relocatable device code), set by the first enqueue in it.
static __device__ int device_mutant = 0;

static inline void SetDeviceMutantFromEnvironment() {
  static bool set = false;
  if (set) return;
  set = true;
  const char* chosen = std::getenv("EXACTQ_MUTANT");
  const int mutant = chosen != nullptr ? std::atoi(chosen) : 0;
  cudaMemcpyToSymbol(device_mutant, &mutant, sizeof mutant);
}

}  // namespace gpu
}  // namespace exact
}  // namespace exactq

#define EXACTQ_MUTANT(n) (::exactq::exact::gpu::device_mutant == (n))
#define EXACTQ_SET_DEVICE_MUTANT() ::exactq::exact::gpu::SetDeviceMutantFromEnvironment()

#else

#define EXACTQ_MUTANT(n) false
#define EXACTQ_SET_DEVICE_MUTANT() ((void)0)

#endif

#endif  // EXACTQ_ENGINE_EXACT_INTERNAL_DEVICE_MUTANTS_CUH_
