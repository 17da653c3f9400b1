// The per-window arithmetic of `ssim`, the VMAF fork's fixed-point (Xiph.Org) SSIM,
// written once for host and device code (metrics-spec.md section A.3-A.5).
//
// A window is a separable 9x9 integer Gaussian (sigma 1.5, taps summing to 256) centred
// on a luma pixel. Taps that fall outside the frame are dropped, not mirrored: a window
// within 4 px of an edge keeps fewer taps and weighs w = Lx * Ly < 2^16, where Lx and Ly
// are the sums of the kept horizontal and vertical taps. Over each window the moments
// sum(t*s), sum(t*d), sum(t*s*s), sum(t*s*d), sum(t*d*d) are exact integers (int64);
// from them SsimTerm forms one double, w * SSIM(window), with the fork's roundings in
// the fork's order. The frame score is sum(term) / sum(w), summed in raster order by
// the callers (ssim_reference.h).
//
// Everything here is a pure function, inline and EXACTQ_HD, so that a CUDA twin calls
// the same code; SsimTerm is a template so the host's vector path (ssim_threads.cc)
// instantiates it on GCC vector types and performs the same IEEE operations, lane by
// lane. Build with -ffp-contract=off (host) / --fmad=false (device): an FMA would change
// the bits.
//
//   const exactq::ssim::Stabilisers st = exactq::ssim::StabilisersFor(/*bit_depth=*/10);
//   exactq::ssim::Moments m = ...;  // the window's int64 moments
//   double term = exactq::ssim::SsimTerm(m, st);

#ifndef EXACTQ_ENGINE_METRICS_SSIM_SSIM_MATH_H_
#define EXACTQ_ENGINE_METRICS_SSIM_SSIM_MATH_H_

#include <cstdint>

#include "engine/platform/host_device.h"

namespace exactq {
namespace ssim {

// The window (A.3): 256 * N(k; 0, 1.5) rounded to integers, centre = 256 - sides. The
// fork derives them from exp() at run time; they are fixed numbers, checked against
// that formula in ssim_math_test.cc.
inline constexpr int kRadius = 4;
inline constexpr int kTapCount = 2 * kRadius + 1;
inline constexpr int kTapSum = 256;
EXACTQ_HD inline constexpr int Tap(int k) {
  // A switch rather than a table: a namespace-scope array is not visible to device code.
  switch (k) {
    case 0:
    case 8:
      return 2;
    case 1:
    case 7:
      return 9;
    case 2:
    case 6:
      return 28;
    case 3:
    case 5:
      return 55;
    default:
      return 68;
  }
}

// The kept taps for a window centred at `pos` in a line of `size` samples: taps
// k in [TapBegin, TapEnd) read sample pos - kRadius + k, which is inside the line.
EXACTQ_HD inline constexpr int TapBegin(int pos) { return pos < kRadius ? kRadius - pos : 0; }
EXACTQ_HD inline constexpr int TapEnd(int pos, int size) {
  return pos + kRadius + 1 > size ? kTapCount - (pos + kRadius + 1 - size) : kTapCount;
}
// Lx or Ly: the sum of the kept taps (256 away from the edges; 162, 217, 245, 254 at
// 0..3 px from an edge; less again when both edges cut a short line).
EXACTQ_HD inline constexpr int KeptTapSum(int pos, int size) {
  int sum = 0;
  for (int k = TapBegin(pos); k < TapEnd(pos, size); ++k) sum += Tap(k);
  return sum;
}

// A window's moments, exact in int64. Bounds at 16 bits (the worst case): mux, muy
// < 2^32; x2, xy, y2 < 2^48; w <= 2^16. All are below 2^53, so each converts to double
// exactly; that is what lets the vector path hold them as doubles.
struct Moments {
  int64_t mux = 0;  // sum t * ref
  int64_t muy = 0;  // sum t * dis
  int64_t x2 = 0;   // sum t * ref * ref
  int64_t xy = 0;   // sum t * ref * dis
  int64_t y2 = 0;   // sum t * dis * dis
  int64_t w = 0;    // sum t (= Lx * Ly)
};

// K1^2 and K2^2 as the fork evaluates them (0.01 * 0.01 in binary64), which are the
// doubles 0.0001 and 0.0009.
inline constexpr double kK1Squared = 0.01 * 0.01;
inline constexpr double kK2Squared = 0.03 * 0.03;
static_assert(kK1Squared == 0.0001 && kK2Squared == 0.0009, "K constants (spec A.5)");

// The per-depth part of the stabilisers, fl(fl(sm * sm) * K^2) with sm = 2^bpc - 1 as a
// double. sm * sm is formed in double: at 16 bits 65535^2 overflows an int, which is
// the bug that makes the peers wrong at 16 bits (the product is exact in double).
struct Stabilisers {
  double c1_factor = 0.0;
  double c2_factor = 0.0;
};
EXACTQ_HD inline Stabilisers StabilisersFor(int bit_depth) {
  const double sm = static_cast<double>((int64_t{1} << bit_depth) - 1);
  const double sm2 = sm * sm;
  return Stabilisers{sm2 * kK1Squared, sm2 * kK2Squared};
}

// One window's term, w * SSIM(window), in the order of spec A.5 (each operator below is
// one IEEE rounding; do not regroup):
//   c1  = ((sm*sm*K1) * w) * w            c2 likewise
//   mx2 = mux*mux, mxy = mux*muy, my2 = muy*muy   (exact integers, rounded once)
//   num = (w * (2*mxy + c1)) * (c2 + 2*(xy*w - mxy))
//   den = ((mx2 + my2) + c1) * ((((x2*w - mx2) + y2*w) - my2) + c2)
//   term = num / den
// The grouping (w * A) * B matters: at borders w is not a power of two. The inputs are
// the moments already converted to T (exact, see Moments); T is double, or a GCC vector
// of doubles whose operators act lane by lane with the same roundings. den > 0 always
// (its first factor is >= c1 > 0; the variance sum's rounding error is far below c2),
// and term < 0 exactly where the window's covariance is negative enough.
template <class T>
EXACTQ_HD inline T SsimTerm(T mux, T muy, T x2, T xy, T y2, T w, const Stabilisers& st) {
  const T c1 = (st.c1_factor * w) * w;
  const T c2 = (st.c2_factor * w) * w;
  const T mx2 = mux * mux;
  const T mxy = mux * muy;
  const T my2 = muy * muy;
  const T a = 2.0 * mxy + c1;
  const T b = c2 + 2.0 * (xy * w - mxy);
  const T num = (w * a) * b;
  const T den = ((mx2 + my2) + c1) * ((((x2 * w - mx2) + y2 * w) - my2) + c2);
  return num / den;
}

EXACTQ_HD inline double SsimTerm(const Moments& m, const Stabilisers& st) {
  return SsimTerm<double>(static_cast<double>(m.mux), static_cast<double>(m.muy), static_cast<double>(m.x2),
                          static_cast<double>(m.xy), static_cast<double>(m.y2), static_cast<double>(m.w), st);
}

}  // namespace ssim
}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_SSIM_SSIM_MATH_H_
