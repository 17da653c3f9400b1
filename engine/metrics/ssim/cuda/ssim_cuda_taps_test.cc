// The branch-free tap forms of the device code (ssim_cuda_taps.h) against ssim_math.h's
// TapBegin/TapEnd/KeptTapSum, the reference's, for every position of every line length
// from 1 to 64 and of a few long lines (the device computes w = Lx * Ly with them).
#include "engine/metrics/ssim/cuda/ssim_cuda_taps.h"

#include "engine/metrics/ssim/ssim_math.h"
#include "gtest/gtest.h"

namespace exactq {
namespace ssim {
namespace gpu {
namespace {

void CheckLine(int size) {
  for (int pos = 0; pos < size; ++pos) {
    for (int k = 0; k < kTapCount; ++k) {
      const bool kept = k >= TapBegin(pos) && k < TapEnd(pos, size);
      EXPECT_EQ(KeptTap(pos, size, k), kept ? Tap(k) : 0) << "size " << size << " pos " << pos << " tap " << k;
    }
    EXPECT_EQ(KeptTapSumUnrolled(pos, size), KeptTapSum(pos, size)) << "size " << size << " pos " << pos;
  }
}

TEST(SsimCudaTapsTest, EqualTheReferenceTaps) {
  for (int size = 1; size <= 64; ++size) CheckLine(size);
  for (int size : {1023, 1024, 1025, 1081, 2160, 3840, 4320, 8192, 16384}) CheckLine(size);
}

}  // namespace
}  // namespace gpu
}  // namespace ssim
}  // namespace exactq
