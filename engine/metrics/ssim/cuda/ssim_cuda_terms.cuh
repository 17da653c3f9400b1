// Device code: the ssim terms of one ordered-sum chunk, computed by one CUDA block.
//
// The chunk layout is engine/exact's (device_chunk_summaries.cuh): chunk c is the 1024
// raster-order pixels c*1024 .. c*1024+1023, and thread t of the 256-thread block gets
// the terms of pixels 4t..4t+3 of the chunk, in order, in registers. So the terms can go
// straight into BlockOrderedChunk (or into an inexact tree sum, for the benchmark).
//
// Each term is the reference's (ssim_reference.cc, metrics-spec A.4-A.5):
//   moments: the same integers as the reference's int64 moments. The window sum is
//     separable and every quantity is a non-negative integer, so the order of the adds
//     does not matter; this computes the vertical sums first (per raster position, into
//     shared memory), then the horizontal ones. A chunk's pixels are raster-consecutive,
//     so the horizontal neighbours x-4..x+4 of pixel p that lie in its row are the raster
//     positions p-4..p+4: one shared array of the vertical sums at positions
//     c*1024-4 .. c*1024+1027 serves every row the chunk touches (rows of any width, 1
//     included). Taps whose sample lies outside the frame are dropped exactly as
//     TapBegin/TapEnd do (a tap is kept iff its row/column is inside the frame), and
//     w = Lx * Ly = KeptTapSum(x) * KeptTapSum(y), the reference's w.
//   term: SsimTerm(Moments, Stabilisers) from ssim_math.h, the very function the CPU
//     calls; device code is built with --fmad=false, so it performs the same IEEE
//     operations in the same order.
//
// Integer widths (the bounds of ssim_math.h, per depth; every value is >= 0):
//   vertical sums  sum t*s <= 256*65535 < 2^24 always; sum t*s*s <= 256*(2^bpc-1)^2,
//                  which is < 2^32 up to 12 bits (256*4095^2 = 4,292,870,400), so VSum is
//                  uint32 there and uint64 above. s*s itself is < 2^32 at 16 bits.
//   window moments sum t*V <= 256 * (256*(2^bpc-1)^2): < 2^32 at 8 bits only
//                  (65536*255^2 = 4,261,478,400), so HSum is uint32 at 8 bits and uint64
//                  above.
// The narrower types are a speed choice (32-bit multiply-adds); the values are the
// reference's integers, converted to int64 for SsimTerm.
//
//   using Terms = ssim::gpu::BlockChunkTerms<uint8_t, uint32_t, uint32_t>;
//   __shared__ Terms::TempStorage temp;
//   double x[4]; int valid;
//   Terms::Compute(temp, plane, chunk, x, valid);  // every thread of the block calls it
#ifndef EXACTQ_ENGINE_METRICS_SSIM_CUDA_SSIM_CUDA_TERMS_CUH_
#define EXACTQ_ENGINE_METRICS_SSIM_CUDA_SSIM_CUDA_TERMS_CUH_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "engine/exact/device_chunk_summaries.cuh"
#include "engine/metrics/ssim/cuda/ssim_cuda_taps.h"
#include "engine/metrics/ssim/ssim_math.h"

namespace exactq {
namespace ssim {
namespace gpu {

using exact::gpu::kBlockThreads;
using exact::gpu::kChunkTerms;
using exact::gpu::kTermsPerThread;

// A frame pair's luma planes on the device (W*H samples each, packed rows) and what the
// term needs besides.
template <class Sample>
struct LumaPlanes {
  const Sample* ref;
  const Sample* dis;
  int width;
  int height;
  Stabilisers st;
};

// Blocks per SM that kernels computing terms ask the compiler to fit (__launch_bounds__).
// At 8 bits the code fits in the 80 registers that three 256-thread blocks leave, without
// spilling, and the third resident block hides more of the wait on the planes' loads. The
// 64-bit moments above 8 bits would spill there, so those take two.
template <class Sample>
inline constexpr int kMinBlocksPerSm = sizeof(Sample) == 1 ? 3 : 2;

// Raster positions whose vertical sums a chunk needs: its own 1024 and 4 either side.
inline constexpr int kSpan = kChunkTerms + 2 * kRadius;  // 1032
// Each thread reads the vertical sums of positions 4t .. 4t+11 of the span.
inline constexpr int kLaneSpan = kTermsPerThread + 2 * kRadius;  // 12
static_assert(kSpan % 4 == 0, "16-byte vector loads of the span arrays");

// The kLaneSpan values base[0..11] (base at a multiple of 4 entries, so 16-byte aligned)
// with 16-byte shared-memory loads.
__device__ __forceinline__ void LoadLaneSpan(const uint32_t* base, uint32_t (&v)[kLaneSpan]) {
#pragma unroll
  for (int i = 0; i < kLaneSpan; i += 4) {
    const uint4 u = *reinterpret_cast<const uint4*>(base + i);
    v[i] = u.x;
    v[i + 1] = u.y;
    v[i + 2] = u.z;
    v[i + 3] = u.w;
  }
}
__device__ __forceinline__ void LoadLaneSpan(const uint64_t* base, uint64_t (&v)[kLaneSpan]) {
#pragma unroll
  for (int i = 0; i < kLaneSpan; i += 2) {
    const ulonglong2 u = *reinterpret_cast<const ulonglong2*>(base + i);
    v[i] = u.x;
    v[i + 1] = u.y;
  }
}

template <class Sample, class VSum, class HSum>
class BlockChunkTerms {
 public:
  // The vertical sums of the span, one array per moment (16-byte aligned: LoadLaneSpan).
  struct __align__(16) TempStorage {
    VSum s[kSpan];   // sum t * ref
    VSum d[kSpan];   // sum t * dis
    VSum ss[kSpan];  // sum t * ref * ref
    VSum sd[kSpan];  // sum t * ref * dis
    VSum dd[kSpan];  // sum t * dis * dis
  };

  // Thread threadIdx.x's terms of chunk `chunk`: x[j] is the term of raster pixel
  // chunk*1024 + 4*threadIdx.x + j for j < valid; pixels past the frame give 0 and are not
  // counted in valid (as exact::gpu::LoadLaneTerms). Every thread of the block must call
  // it; `temp` may be reused after a __syncthreads().
  __device__ static void Compute(TempStorage& temp, const LumaPlanes<Sample>& planes, int64_t chunk,
                                 double (&x)[kTermsPerThread], int& valid) {
    const int width = planes.width;
    const int64_t n = static_cast<int64_t>(width) * planes.height;
    const int64_t first = chunk * kChunkTerms;  // the chunk's first pixel

    // 1. Vertical sums at raster positions first-4 .. first+1027 (those inside the frame;
    //    the others are zeroed and never multiplied: a pixel's kept horizontal taps stay in
    //    its row). Four consecutive positions per step: when they lie in one row they share
    //    the row arithmetic and, on aligned rows, one vector load per plane and row.
    //    first - kRadius is a multiple of 4, so every quad starts at a multiple of 4.
    //    Thread t takes the quad 4t..4t+3; the last 8 positions go one each to threads 0..7.
    static_assert(kSpan == 4 * kBlockThreads + 2 * kRadius, "one quad per thread plus 8 positions");
    {
      const int i0 = 4 * threadIdx.x;
      const int64_t q0 = first - kRadius + i0;
      uint32_t y = 0;
      uint32_t col = 0;
      bool quad = false;
      if (q0 >= 0 && q0 + 3 < n) {
        y = static_cast<uint32_t>(q0) / static_cast<uint32_t>(width);
        col = static_cast<uint32_t>(q0) - y * static_cast<uint32_t>(width);
        quad = col + 3 < static_cast<uint32_t>(width);
      }
      if (quad) {
        VerticalSumsQuad(temp, i0, planes, static_cast<int>(col), static_cast<int>(y), AlignedRows(planes));
      } else {
        for (int i = i0; i < i0 + 4; ++i) VerticalSumsAt(temp, i, planes, first, n);
      }
    }
    if (threadIdx.x < 2 * kRadius) VerticalSumsAt(temp, 4 * kBlockThreads + threadIdx.x, planes, first, n);
    __syncthreads();

    // 2. Horizontal sums and the term for this thread's four pixels.
    const int lane_first = threadIdx.x * kTermsPerThread;  // offset of its span window
    valid = 0;
    int col[kTermsPerThread];
    int row[kTermsPerThread];
#pragma unroll
    for (int j = 0; j < kTermsPerThread; ++j) {
      const int64_t p = first + lane_first + j;
      col[j] = 0;
      row[j] = 0;
      if (p < n) {
        valid = j + 1;
        const uint32_t y = static_cast<uint32_t>(p) / static_cast<uint32_t>(width);
        row[j] = static_cast<int>(y);
        col[j] = static_cast<int>(static_cast<uint32_t>(p) - y * static_cast<uint32_t>(width));
      }
    }
    HSum s[kTermsPerThread], d[kTermsPerThread], ss[kTermsPerThread], sd[kTermsPerThread], dd[kTermsPerThread];
    int lx[kTermsPerThread];  // KeptTapSum(col, width) of each pixel
    // All four pixels in one row and 4 px away from both ends: every tap is kept.
    const bool interior =
        valid == kTermsPerThread && col[0] >= kRadius && col[0] + 3 == col[3] && col[3] + kRadius < width;
    if (interior) {
      HorizontalFull(temp.s + lane_first, s);
      HorizontalFull(temp.d + lane_first, d);
      HorizontalFull(temp.ss + lane_first, ss);
      HorizontalFull(temp.sd + lane_first, sd);
      HorizontalFull(temp.dd + lane_first, dd);
#pragma unroll
      for (int j = 0; j < kTermsPerThread; ++j) lx[j] = kTapSum;
    } else {
      int taps[kTermsPerThread][kTapCount];  // kept taps per pixel (0 for dropped ones)
#pragma unroll
      for (int j = 0; j < kTermsPerThread; ++j) {
        lx[j] = 0;
#pragma unroll
        for (int k = 0; k < kTapCount; ++k) {
          taps[j][k] = j < valid ? KeptTap(col[j], width, k) : 0;
          lx[j] += taps[j][k];
        }
      }
      HorizontalMasked(temp.s + lane_first, taps, s);
      HorizontalMasked(temp.d + lane_first, taps, d);
      HorizontalMasked(temp.ss + lane_first, taps, ss);
      HorizontalMasked(temp.sd + lane_first, taps, sd);
      HorizontalMasked(temp.dd + lane_first, taps, dd);
    }
#pragma unroll
    for (int j = 0; j < kTermsPerThread; ++j) {
      x[j] = 0.0;
      if (j < valid) {
        Moments m;
        m.mux = static_cast<int64_t>(s[j]);
        m.muy = static_cast<int64_t>(d[j]);
        m.x2 = static_cast<int64_t>(ss[j]);
        m.xy = static_cast<int64_t>(sd[j]);
        m.y2 = static_cast<int64_t>(dd[j]);
        // w = Lx * Ly, the reference's KeptTapSum(x) * KeptTapSum(y) (ssim_cuda_taps.h).
        m.w = static_cast<int64_t>(lx[j]) * KeptTapSumUnrolled(row[j], planes.height);
        x[j] = SsimTerm(m, planes.st);
      }
    }
  }

 private:
  // Sums over the kept vertical taps of column `col` around row `y`; a tap is kept iff
  // its row is inside the frame (the same set as TapBegin(y)..TapEnd(y, H)).
  __device__ static void VerticalSums(TempStorage& temp, int i, const LumaPlanes<Sample>& planes, int col, int y) {
    const int width = planes.width;
    const int height = planes.height;
    VSum s = 0, d = 0, ss = 0, sd = 0, dd = 0;
    const bool full = y >= kRadius && y + kRadius < height;
#pragma unroll
    for (int k = 0; k < kTapCount; ++k) {
      const int r = y - kRadius + k;
      if (full || (r >= 0 && r < height)) {
        const size_t at = static_cast<size_t>(r) * width + col;
        const uint32_t a = __ldg(planes.ref + at);
        const uint32_t b = __ldg(planes.dis + at);
        const uint32_t t = static_cast<uint32_t>(Tap(k));
        s += static_cast<VSum>(t * a);  // < 2^24
        d += static_cast<VSum>(t * b);
        // a*a < 2^32 at 16 bits; the product with t is formed in VSum.
        ss += static_cast<VSum>(t) * static_cast<VSum>(a * a);
        sd += static_cast<VSum>(t) * static_cast<VSum>(a * b);
        dd += static_cast<VSum>(t) * static_cast<VSum>(b * b);
      }
    }
    temp.s[i] = s;
    temp.d[i] = d;
    temp.ss[i] = ss;
    temp.sd[i] = sd;
    temp.dd[i] = dd;
  }

  // VerticalSums of span position i (raster position first - 4 + i), or zeros outside the
  // frame.
  __device__ static void VerticalSumsAt(TempStorage& temp, int i, const LumaPlanes<Sample>& planes, int64_t first,
                                        int64_t n) {
    const int64_t q = first - kRadius + i;
    if (q >= 0 && q < n) {
      const uint32_t y = static_cast<uint32_t>(q) / static_cast<uint32_t>(planes.width);
      const uint32_t col = static_cast<uint32_t>(q) - y * static_cast<uint32_t>(planes.width);
      VerticalSums(temp, i, planes, static_cast<int>(col), static_cast<int>(y));
    } else {
      temp.s[i] = temp.d[i] = temp.ss[i] = temp.sd[i] = temp.dd[i] = 0;
    }
  }

  // Whether a row's samples at a column that is a multiple of 4 start on a 4-sample
  // boundary in memory: the width is a multiple of 4 and both planes are so aligned.
  __device__ static bool AlignedRows(const LumaPlanes<Sample>& planes) {
    constexpr uintptr_t kVector = 4 * sizeof(Sample);
    return planes.width % 4 == 0 && reinterpret_cast<uintptr_t>(planes.ref) % kVector == 0 &&
           reinterpret_cast<uintptr_t>(planes.dis) % kVector == 0;
  }

  // Four samples at p (a multiple of 4 samples from an aligned base when `aligned`).
  __device__ static void Load4(const uint8_t* p, bool aligned, uint32_t (&v)[4]) {
    if (aligned) {
      const uchar4 q = __ldg(reinterpret_cast<const uchar4*>(p));
      v[0] = q.x;
      v[1] = q.y;
      v[2] = q.z;
      v[3] = q.w;
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j) v[j] = __ldg(p + j);
    }
  }
  __device__ static void Load4(const uint16_t* p, bool aligned, uint32_t (&v)[4]) {
    if (aligned) {
      const ushort4 q = __ldg(reinterpret_cast<const ushort4*>(p));
      v[0] = q.x;
      v[1] = q.y;
      v[2] = q.z;
      v[3] = q.w;
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j) v[j] = __ldg(p + j);
    }
  }

  // VerticalSums for the four positions i0..i0+3 of one row: columns col..col+3 of row y.
  // The same taps, products and sums per position, so the same integers.
  __device__ static void VerticalSumsQuad(TempStorage& temp, int i0, const LumaPlanes<Sample>& planes, int col, int y,
                                          bool aligned) {
    const int width = planes.width;
    const int height = planes.height;
    VSum s[4], d[4], ss[4], sd[4], dd[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) s[j] = d[j] = ss[j] = sd[j] = dd[j] = 0;
    const bool full = y >= kRadius && y + kRadius < height;
#pragma unroll
    for (int k = 0; k < kTapCount; ++k) {
      const int r = y - kRadius + k;
      if (full || (r >= 0 && r < height)) {
        const size_t at = static_cast<size_t>(r) * width + col;
        uint32_t a[4];
        uint32_t b[4];
        Load4(planes.ref + at, aligned, a);
        Load4(planes.dis + at, aligned, b);
        const uint32_t t = static_cast<uint32_t>(Tap(k));
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          s[j] += static_cast<VSum>(t * a[j]);
          d[j] += static_cast<VSum>(t * b[j]);
          ss[j] += static_cast<VSum>(t) * static_cast<VSum>(a[j] * a[j]);
          sd[j] += static_cast<VSum>(t) * static_cast<VSum>(a[j] * b[j]);
          dd[j] += static_cast<VSum>(t) * static_cast<VSum>(b[j] * b[j]);
        }
      }
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      temp.s[i0 + j] = s[j];
      temp.d[i0 + j] = d[j];
      temp.ss[i0 + j] = ss[j];
      temp.sd[i0 + j] = sd[j];
      temp.dd[i0 + j] = dd[j];
    }
  }

  // out[j] = sum_k Tap(k) * v[j + k], every tap kept.
  __device__ static void HorizontalFull(const VSum* window, HSum (&out)[kTermsPerThread]) {
    VSum v[kLaneSpan];
    LoadLaneSpan(window, v);
#pragma unroll
    for (int j = 0; j < kTermsPerThread; ++j) {
      HSum acc = 0;
#pragma unroll
      for (int k = 0; k < kTapCount; ++k) acc += static_cast<HSum>(Tap(k)) * static_cast<HSum>(v[j + k]);
      out[j] = acc;
    }
  }

  // out[j] = sum_k taps[j][k] * v[j + k], with dropped taps 0 (their v may be stale).
  __device__ static void HorizontalMasked(const VSum* window, const int (&taps)[kTermsPerThread][kTapCount],
                                          HSum (&out)[kTermsPerThread]) {
    VSum v[kLaneSpan];
    LoadLaneSpan(window, v);
#pragma unroll
    for (int j = 0; j < kTermsPerThread; ++j) {
      HSum acc = 0;
#pragma unroll
      for (int k = 0; k < kTapCount; ++k) {
        // A dropped tap faces another row's entry or a zeroed one: skip it.
        if (taps[j][k] != 0) acc += static_cast<HSum>(taps[j][k]) * static_cast<HSum>(v[j + k]);
      }
      out[j] = acc;
    }
  }
};

}  // namespace gpu
}  // namespace ssim
}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_SSIM_CUDA_SSIM_CUDA_TERMS_CUH_
