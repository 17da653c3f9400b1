// Branch-free forms of the window's kept taps for device code (host-callable too, so
// ssim_cuda_taps_test.cc can hold them equal to ssim_math.h's TapBegin/TapEnd/KeptTapSum
// for every position of every line length it tries).
//
// ssim_math.h's KeptTapSum loops over a run-time range and looks each tap up through a
// switch; on the GPU that becomes a tree of branches per tap. Here the loop is unrolled
// over all nine taps with a select per tap: tap k of a window centred at `pos` is kept iff
// its sample pos-4+k lies in [0, size), the same set as [TapBegin(pos), TapEnd(pos, size)).
//
//   int lx = exactq::ssim::gpu::KeptTapSumUnrolled(x, width);  // == KeptTapSum(x, width)
#ifndef EXACTQ_ENGINE_METRICS_SSIM_CUDA_SSIM_CUDA_TAPS_H_
#define EXACTQ_ENGINE_METRICS_SSIM_CUDA_SSIM_CUDA_TAPS_H_

#include "engine/metrics/ssim/ssim_math.h"

namespace exactq {
namespace ssim {
namespace gpu {

// Tap k if sample pos-4+k is inside a line of `size` samples, else 0.
EXACTQ_HD inline int KeptTap(int pos, int size, int k) {
  const int at = pos - kRadius + k;
  return (at >= 0 && at < size) ? Tap(k) : 0;
}

EXACTQ_HD inline int KeptTapSumUnrolled(int pos, int size) {
  int sum = 0;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int k = 0; k < kTapCount; ++k) sum += KeptTap(pos, size, k);
  return sum;
}

}  // namespace gpu
}  // namespace ssim
}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_SSIM_CUDA_SSIM_CUDA_TAPS_H_
