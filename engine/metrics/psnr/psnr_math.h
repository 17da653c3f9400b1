// PSNR from a plane's SSE, with libvmaf's double operations in libvmaf's order.
//
// libvmaf's integer PSNR (libvmaf/src/feature/integer_psnr.c, Netflix/vmaf 3.2.0 and
// the lusoris/vmaf fork at c2a3c7e0 agree) turns a plane's exact integer SSE into dB:
//
//   mse  = (double)sse / (double)(plane_width * plane_height)
//   psnr = min(10.0 * log10((double)(peak * peak) / max(mse, 1e-16)), psnr_max)
//
// with peak = 2^bpc - 1 and psnr_max = 6 * bpc + 12 (60 dB at 8 bits, 72 at 10, 108
// at 16). Each line is one IEEE operation on doubles (no contraction: host code is
// built with -ffp-contract=off) and log10 is the host libm's, so the result matches
// libvmaf's bits on the same libm. libvmaf runs this for 8, 10, 12 and 16 bits;
// ExactQ applies the same formula to every depth from 8 to 16.
//
// These are host functions shared by every backend: a backend computes the integer
// SSE however it likes (it is exact) and calls these for the dB value.

#ifndef EXACTQ_ENGINE_METRICS_PSNR_PSNR_MATH_H_
#define EXACTQ_ENGINE_METRICS_PSNR_PSNR_MATH_H_

#include <cstdint>

namespace exactq {

// libvmaf's floor on the MSE, so identical planes give a finite value before the clamp.
inline constexpr double kPsnrMinMse = 1e-16;

// 2^bit_depth - 1, or with libvmaf's reduced_hbd_peak option 255 * 2^(bit_depth - 8)
// (the 8-bit peak scaled, for content converted up from 8 bits).
uint32_t PsnrPeak(int bit_depth, bool reduced_hbd_peak);

// The dB clamp. With min_sse == 0 (the default) it is 6 * bit_depth + 12. Otherwise
// it is libvmaf's ceil(10 * log10(peak^2 / (min_sse / plane_samples))), the PSNR at
// the smallest SSE the caller wants to tell apart.
double PsnrMaxDb(int bit_depth, uint32_t peak, double min_sse, uint64_t plane_samples);

// (double)sse / (double)plane_samples.
double MseFromSse(uint64_t sse, uint64_t plane_samples);

// min(10 * log10(peak^2 / max(mse, 1e-16)), max_db).
double PsnrFromMse(double mse, uint32_t peak, double max_db);

}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_PSNR_PSNR_MATH_H_
