// The per-thread bodies of the vmaf CUDA twin's kernels: host and device code
// (EXACTQ_HD), each the arithmetic of one output sample or one summed term of the CPU
// kernels (vmaf_features_kernels.inc, libvmaf's integer extractors), in the same types.
//
// The kernels of vmaf_cuda.cu map threads onto these bodies and add their terms with
// integer atomics (exact in any order); vmaf_cuda_emulation_test runs the same bodies in
// plain loops, forms the same sums and must get ComputeVmafFeatures' bits. So the walk
// over the scales, bands, mirrors and regions is checked on any machine; the device adds
// the launch geometry and the atomics.
//
// Where the CPU code sums in a narrower type and its value cannot wrap (VIF's filters,
// whose taps sum to 65536), the bodies sum in the widest type in one order: integer sums
// of the same terms are the same value. Where a value does wrap (ADM's 16-bit DWT in
// uint32, a row of motion's SAD in uint32), the bodies wrap the same way. Floating-point
// steps are per pixel, in the CPU's types and order (device code is built with
// --fmad=false); constants made by libm (tables, quantisation factors, cos 1 degree) come
// from the host (vmaf_feature_sums.h).
#ifndef EXACTQ_ENGINE_METRICS_VMAF_CUDA_VMAF_CUDA_KERNELS_H_
#define EXACTQ_ENGINE_METRICS_VMAF_CUDA_VMAF_CUDA_KERNELS_H_

#include <cstdint>

#include "engine/metrics/vmaf/vmaf_feature_sums.h"
#include "engine/platform/host_device.h"

namespace exactq {
namespace vmaf {
namespace gpu {

// ---------------------------------------------------------------------------------
// Helpers.

EXACTQ_HD inline int32_t Wrap32(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }
EXACTQ_HD inline int32_t I16(int64_t v) { return static_cast<int16_t>(static_cast<uint16_t>(v)); }
EXACTQ_HD inline uint32_t U16(uint64_t v) { return static_cast<uint16_t>(v); }
// std::abs of an int32 as x86-64 computes it: INT32_MIN stays INT32_MIN.
EXACTQ_HD inline int32_t Abs32(int32_t v) { return v < 0 ? static_cast<int32_t>(0u - static_cast<uint32_t>(v)) : v; }

EXACTQ_HD inline int Clz32(uint32_t v) {
#if defined(__CUDA_ARCH__)
  return __clz(static_cast<int>(v));
#else
  return __builtin_clz(v);
#endif
}

EXACTQ_HD inline int Clz64(uint64_t v) {
#if defined(__CUDA_ARCH__)
  return __clzll(static_cast<long long>(v));
#else
  return __builtin_clzll(v);
#endif
}

// -1 -> 1, n -> n - 2 (VIF's padding, motion's mirror).
EXACTQ_HD inline int Reflect101(int i, int n) {
  if (i < 0) return -i;
  if (i >= n) return 2 * (n - 1) - i;
  return i;
}

// -1 -> 1, n -> n - 1, n + 1 -> n - 2 (ADM's DWT).
EXACTQ_HD inline int DwtMirror(int i, int n) {
  if (i < 0) return -i;
  if (i >= n) return 2 * n - i - 1;
  return i;
}

// -1 -> 1, n -> n - 1 (ADM's masking neighbours).
EXACTQ_HD inline int CmMirror(int i, int n) { return i < 0 ? -i : (i >= n ? n - 1 : i); }

// ---------------------------------------------------------------------------------
// VIF.

template <int kScale>
struct VifFilter {
  static constexpr int kWidth = kScale == 0 ? 17 : kScale == 1 ? 9 : kScale == 2 ? 5 : 3;
  static constexpr int kHalf = kWidth / 2;
  EXACTQ_HD static constexpr uint32_t Tap(int k) {
    constexpr uint16_t kTaps0[17] = {489,  935,  1640, 2640, 3896, 5274, 6547, 7455, 7784,
                                     7455, 6547, 5274, 3896, 2640, 1640, 935,  489};
    constexpr uint16_t kTaps1[9] = {1244, 3663, 7925, 12590, 14692, 12590, 7925, 3663, 1244};
    constexpr uint16_t kTaps2[5] = {3571, 16004, 26386, 16004, 3571};
    constexpr uint16_t kTaps3[3] = {10904, 43728, 10904};
    return kScale == 0 ? kTaps0[k] : kScale == 1 ? kTaps1[k] : kScale == 2 ? kTaps2[k] : kTaps3[k];
  }
};

inline constexpr int32_t kVifSigmaNsq = 65536 << 1;

// A column's vertically filtered moments, rounded as libvmaf stores them.
struct VifVertical {
  uint32_t mu1, mu2, ref, dis, ref_dis;
};

// The vertical filter of scale kScale at (i, j) of a w x h plane (rows mirrored).
template <int kScale, typename Sample>
EXACTQ_HD inline VifVertical VifVerticalAt(const Sample* ref, const Sample* dis, int w, int h, int bpc, int i, int j) {
  using F = VifFilter<kScale>;
  uint32_t mu1 = 0, mu2 = 0;
  uint64_t sr = 0, sd = 0, srd = 0;
  EXACTQ_UNROLL
  for (int k = 0; k < F::kWidth; ++k) {
    const size_t o = static_cast<size_t>(Reflect101(i - F::kHalf + k, h)) * w + j;
    const uint32_t f = F::Tap(k);
    const uint32_t x = ref[o];
    const uint32_t y = dis[o];
    mu1 += f * x;
    mu2 += f * y;
    sr += uint64_t{f} * (uint64_t{x} * x);
    sd += uint64_t{f} * (uint64_t{y} * y);
    srd += uint64_t{f} * (uint64_t{x} * y);
  }
  uint32_t add_vp = 32768, shift_vp = 16, shift_vp_sq = 16;
  uint64_t add_vp_sq = 32768;
  if (kScale == 0) {
    shift_vp = bpc;
    add_vp = 1u << (bpc - 1);
    shift_vp_sq = (bpc - 8) * 2;
    add_vp_sq = bpc == 8 ? 0 : uint64_t{1} << (shift_vp_sq - 1);
  }
  VifVertical v;
  v.mu1 = U16((uint64_t{mu1} + add_vp) >> shift_vp);
  v.mu2 = U16((uint64_t{mu2} + add_vp) >> shift_vp);
  v.ref = static_cast<uint32_t>((sr + add_vp_sq) >> shift_vp_sq);
  v.dis = static_cast<uint32_t>((sd + add_vp_sq) >> shift_vp_sq);
  v.ref_dis = static_cast<uint32_t>((srd + add_vp_sq) >> shift_vp_sq);
  return v;
}

EXACTQ_HD inline int32_t VifLog2_32(const uint16_t* table, uint32_t v) {
  const int k = 16 - Clz32(v);
  return table[v >> k] + 2048 * k;
}

EXACTQ_HD inline int32_t VifLog2_64(const uint16_t* table, uint64_t v) {
  const int k = 48 - Clz64(v);
  return table[v >> k] + 2048 * k;
}

// The statistic of one pixel from its filtered moments, added to `sums`.
EXACTQ_HD inline void VifPixel(const uint16_t* log2_table, double gain_limit, uint32_t mu1, uint32_t mu2,
                               uint64_t acc_ref, uint64_t acc_dis, uint64_t acc_ref_dis, VifSums* sums) {
  const uint32_t mu1_sq = static_cast<uint32_t>((uint64_t{mu1} * mu1 + 2147483648u) >> 32);
  const uint32_t mu2_sq = static_cast<uint32_t>((uint64_t{mu2} * mu2 + 2147483648u) >> 32);
  const uint32_t mu1_mu2 = static_cast<uint32_t>((uint64_t{mu1} * mu2 + 2147483648u) >> 32);
  const uint32_t xx = static_cast<uint32_t>((acc_ref + 32768) >> 16);
  const uint32_t yy = static_cast<uint32_t>((acc_dis + 32768) >> 16);
  const uint32_t xy = static_cast<uint32_t>((acc_ref_dis + 32768) >> 16);

  const int32_t sigma1_sq = static_cast<int32_t>(xx - mu1_sq);
  int32_t sigma2_sq = static_cast<int32_t>(yy - mu2_sq);
  const int32_t sigma12 = static_cast<int32_t>(xy - mu1_mu2);
  sigma2_sq = sigma2_sq < 0 ? 0 : sigma2_sq;
  if (sigma1_sq >= kVifSigmaNsq) {
    sums->den_log +=
        VifLog2_32(log2_table, static_cast<uint32_t>(Wrap32(int64_t{kVifSigmaNsq} + sigma1_sq))) - 2048 * 17;
    if (sigma12 > 0 && sigma2_sq > 0) {
      const double eps = 65536 * 1.0e-10;
      double g = sigma12 / (sigma1_sq + eps);
      int32_t sv_sq = static_cast<int32_t>(sigma2_sq - g * sigma12);
      sv_sq = sv_sq < 0 ? 0 : sv_sq;
      g = gain_limit < g ? gain_limit : g;
      const uint32_t numer1 = static_cast<uint32_t>(sv_sq + kVifSigmaNsq);
      const int64_t numer1_tmp = static_cast<int64_t>(g * g * sigma1_sq) + numer1;
      sums->num_log += VifLog2_64(log2_table, static_cast<uint64_t>(numer1_tmp)) - VifLog2_64(log2_table, numer1);
    }
  } else {
    sums->num_non_log += sigma2_sq;
    sums->den_non_log++;
  }
}

// The horizontal filter and the statistic of one pixel, from the vertical results of the
// kWidth columns around it (v[k]: column j - kHalf + k, mirrored into the row).
template <int kScale>
EXACTQ_HD inline void VifHorizontalPixel(const VifVertical* v, const uint16_t* log2_table, double gain_limit,
                                         VifSums* sums) {
  using F = VifFilter<kScale>;
  uint32_t mu1 = 0, mu2 = 0;
  uint64_t ref = 0, dis = 0, ref_dis = 0;
  EXACTQ_UNROLL
  for (int k = 0; k < F::kWidth; ++k) {
    const uint32_t f = F::Tap(k);
    mu1 += f * v[k].mu1;
    mu2 += f * v[k].mu2;
    ref += uint64_t{f} * v[k].ref;
    dis += uint64_t{f} * v[k].dis;
    ref_dis += uint64_t{f} * v[k].ref_dis;
  }
  VifPixel(log2_table, gain_limit, mu1, mu2, ref, dis, ref_dis, sums);
}

// Sample (r, c) of scale kNext from scale kNext - 1's w x h plane: its filter at row 2r
// and column 2c (subsample_rd and the decimation).
template <int kNext, typename Sample>
EXACTQ_HD inline uint16_t VifSubsampleAt(const Sample* src, int w, int h, int bpc, int r, int c) {
  using F = VifFilter<kNext>;
  const uint32_t add_vp = kNext == 1 ? 1u << (bpc - 1) : 32768;
  const uint32_t shift_vp = kNext == 1 ? bpc : 16;
  uint32_t sum = 0;
  EXACTQ_UNROLL
  for (int kc = 0; kc < F::kWidth; ++kc) {
    const int col = Reflect101(2 * c - F::kHalf + kc, w);
    uint32_t acc = 0;
    EXACTQ_UNROLL
    for (int kr = 0; kr < F::kWidth; ++kr) {
      acc += F::Tap(kr) * uint32_t{src[static_cast<size_t>(Reflect101(2 * r - F::kHalf + kr, h)) * w + col]};
    }
    sum += F::Tap(kc) * U16((uint64_t{acc} + add_vp) >> shift_vp);
  }
  return static_cast<uint16_t>((uint64_t{sum} + 32768) >> 16);
}

// ---------------------------------------------------------------------------------
// ADM.

// One DWT output: the approximation and the three detail bands.
struct AdmQuad {
  int32_t a, v, h, d;
};

EXACTQ_HD inline int32_t DwtLo(int k) { return k == 0 ? 15826 : k == 1 ? 27411 : k == 2 ? 7345 : -4240; }
EXACTQ_HD inline int32_t DwtHi(int k) { return k == 0 ? -4240 : k == 1 ? -7345 : k == 2 ? 27411 : -15826; }

EXACTQ_HD inline int64_t DwtTaps(bool hi, const int64_t s[4]) {
  int64_t acc = 0;
  EXACTQ_UNROLL
  for (int k = 0; k < 4; ++k) acc += (hi ? DwtHi(k) : DwtLo(k)) * s[k];
  return acc;
}

// adm_dwt2_16 (adm_dwt2_8) at output (i, j) of a w x h luma plane: the vertical step in
// libvmaf's int32 arithmetic, which wraps at 16 bits (uint32 here: the same bits), its
// rounding shift and int16 store, then the horizontal step.
template <typename Sample>
EXACTQ_HD inline AdmQuad AdmDwtScale0At(const Sample* src, int w, int h, int bpc, int i, int j) {
  const uint32_t add_vp = 1u << (bpc - 1);
  const uint32_t lo_bias = 46342u * add_vp;
  int64_t lo[4], hi[4];
  EXACTQ_UNROLL
  for (int k = 0; k < 4; ++k) {
    const int col = DwtMirror(2 * j - 1 + k, w);
    uint32_t l = 0, g = 0;
    EXACTQ_UNROLL
    for (int m = 0; m < 4; ++m) {
      const uint32_t s = src[static_cast<size_t>(DwtMirror(2 * i - 1 + m, h)) * w + col];
      l += static_cast<uint32_t>(DwtLo(m)) * s;
      g += static_cast<uint32_t>(DwtHi(m)) * s;
    }
    l -= lo_bias;
    lo[k] = I16(static_cast<int32_t>(l + add_vp) >> bpc);
    hi[k] = I16(static_cast<int32_t>(g + add_vp) >> bpc);
  }
  AdmQuad q;
  q.a = I16((DwtTaps(false, lo) + 32768) >> 16);
  q.v = I16((DwtTaps(true, lo) + 32768) >> 16);
  q.h = I16((DwtTaps(false, hi) + 32768) >> 16);
  q.d = I16((DwtTaps(true, hi) + 32768) >> 16);
  return q;
}

// adm_dwt2_s123_combined at output (i, j) of scale `scale` (1..3), from the previous
// scale's approximation band (w x h).
EXACTQ_HD inline AdmQuad AdmDwtS123At(const int32_t* src, int w, int h, int scale, int i, int j) {
  const int64_t add_vp = scale == 1 ? 0 : 32768;
  const int shift_vp = scale == 1 ? 0 : 16;
  const int64_t add_hp = scale == 2 ? 32768 : 16384;
  const int shift_hp = scale == 2 ? 16 : 15;
  int64_t lo[4], hi[4];
  EXACTQ_UNROLL
  for (int k = 0; k < 4; ++k) {
    const int col = DwtMirror(2 * j - 1 + k, w);
    int64_t l = 0, g = 0;
    EXACTQ_UNROLL
    for (int m = 0; m < 4; ++m) {
      const int64_t s = src[static_cast<size_t>(DwtMirror(2 * i - 1 + m, h)) * w + col];
      l += DwtLo(m) * s;
      g += DwtHi(m) * s;
    }
    lo[k] = static_cast<int32_t>((l + add_vp) >> shift_vp);
    hi[k] = static_cast<int32_t>((g + add_vp) >> shift_vp);
  }
  AdmQuad q;
  q.a = static_cast<int32_t>((DwtTaps(false, lo) + add_hp) >> shift_hp);
  q.v = static_cast<int32_t>((DwtTaps(true, lo) + add_hp) >> shift_hp);
  q.h = static_cast<int32_t>((DwtTaps(false, hi) + add_hp) >> shift_hp);
  q.d = static_cast<int32_t>((DwtTaps(true, hi) + add_hp) >> shift_hp);
  return q;
}

// What the decouple step reads besides the bands.
struct AdmPixelParams {
  const int32_t* div_table;  // AdmDivTable()
  float cos_1deg_sq;         // AdmCos1DegSquared()
  double gain_limit;         // the enhancement gain limit: 100, or 1 for vmaf_v0.6.1neg
  uint32_t rfactor32[3];     // AdmScaleParams::rfactor32
};

// libvmaf's angle test: is the angle between (oh, ov) and (th, tv) under one degree?
EXACTQ_HD inline bool AdmAngleFlag(int64_t oh, int64_t ov, int64_t th, int64_t tv, float cos_1deg_sq) {
  const int64_t ot_dp = oh * th + ov * tv;
  const int64_t o_mag_sq = oh * oh + ov * ov;
  const int64_t t_mag_sq = th * th + tv * tv;
  return ((static_cast<float>(ot_dp) / 4096.0) >= 0.0f) &&
         ((static_cast<float>(ot_dp) / 4096.0) * (static_cast<float>(ot_dp) / 4096.0) >=
          cos_1deg_sq * (static_cast<float>(o_mag_sq) / 4096.0) * (static_cast<float>(t_mag_sq) / 4096.0));
}

EXACTQ_HD inline int64_t AdmLimitGain(int64_t rst, int64_t o, int64_t k, int64_t t, bool angle_flag,
                                      double gain_limit) {
  const float rst_f = (static_cast<float>(k) / 32768) * (static_cast<float>(o) / 64);
  if (angle_flag && (rst_f > 0.)) {
    const double x = rst * gain_limit;
    return static_cast<int64_t>((x < t) ? x : static_cast<double>(t));
  }
  if (angle_flag && (rst_f < 0.)) {
    const double x = rst * gain_limit;
    return static_cast<int64_t>((x > t) ? x : static_cast<double>(t));
  }
  return rst;
}

// Decouple and CSF at one band sample, from the reference's and the distorted's detail
// bands there (h, v, d): the restored values (for the masking sum) and the CSF-weighted
// additive impairment with its magnitude over 30 (for the masking threshold).
struct AdmDecoupled {
  int32_t restored[3];  // h, v, d
  int32_t csf_a[3];
  int32_t csf_f[3];
};

EXACTQ_HD inline AdmDecoupled AdmDecoupleCsfAt(const int32_t ref[3], const int32_t dis[3], int scale,
                                               const AdmPixelParams& p) {
  AdmDecoupled out;
  const bool angle_flag = AdmAngleFlag(ref[0], ref[1], dis[0], dis[1], p.cos_1deg_sq);
  int64_t a[3];
  EXACTQ_UNROLL
  for (int b = 0; b < 3; ++b) {
    const int64_t ob = ref[b];
    const int64_t tb = dis[b];
    int64_t tmp_k;
    if (scale == 0) {
      tmp_k = ob == 0 ? 32768 : ((int64_t{p.div_table[ob + 32768]} * tb) + 16384) >> 15;
      tmp_k = static_cast<int32_t>(tmp_k);
    } else {
      int shift = 0;
      const uint32_t abs_o = static_cast<uint32_t>(Abs32(static_cast<int32_t>(ob)));
      const int sign = ob < 0 ? -1 : 1;
      uint32_t msb = abs_o;
      if (abs_o >= 32768) {
        shift = 17 - Clz32(abs_o);
        msb = static_cast<uint16_t>((abs_o + (1u << (shift - 1))) >> shift);
      }
      tmp_k = ob == 0
                  ? 32768
                  : (((int64_t{p.div_table[msb + 32768]} * tb) * sign) + (int64_t{1} << (14 + shift))) >> (15 + shift);
    }
    const int64_t k = tmp_k < 0 ? 0 : (tmp_k > 32768 ? 32768 : tmp_k);
    int64_t rb = ((k * ob) + 16384) >> 15;
    rb = scale == 0 ? I16(rb) : static_cast<int32_t>(rb);
    rb = AdmLimitGain(rb, ob, k, tb, angle_flag, p.gain_limit);
    rb = scale == 0 ? I16(rb) : static_cast<int32_t>(rb);
    out.restored[b] = static_cast<int32_t>(rb);
    a[b] = scale == 0 ? I16(tb - rb) : Wrap32(tb - rb);
  }
  // adm_csf / i4_adm_csf. Scale 0 at the default view distance: libvmaf's fixed i_rfactor.
  constexpr int64_t kAddFlt = static_cast<int32_t>(1u << 31);  // -2^31, libvmaf's "rounding" term
  EXACTQ_UNROLL
  for (int b = 0; b < 3; ++b) {
    const int32_t src = static_cast<int32_t>(a[b]);
    if (scale == 0) {
      const int32_t rfactor0 = b == 2 ? 49417 : 36453;
      const int shift0 = b == 2 ? 17 : 15;
      const int32_t shift_add0 = b == 2 ? 65535 : 16384;
      const int32_t dst_val = rfactor0 * src;
      const int32_t d16 = I16((dst_val + shift_add0) >> shift0);
      out.csf_a[b] = d16;
      out.csf_f[b] = I16(((4369 * Abs32(d16)) + 2048) >> 12);
    } else {
      const int32_t dst_val = static_cast<int32_t>(((int64_t{p.rfactor32[b]} * src) + (int64_t{1} << 27)) >> 28);
      out.csf_a[b] = dst_val;
      out.csf_f[b] = static_cast<int32_t>(((int64_t{143165577} * Abs32(dst_val)) + kAddFlt) >> 32);
    }
  }
  return out;
}

// The masking threshold at (i, j) of w x h bands: for each of h, v, d, the eight
// neighbours of csf_f plus a fifteenth of |csf_a| at the centre (mirrored at the edges).
// csf_a[b] and csf_f[b] are band b's planes.
EXACTQ_HD inline int32_t AdmCmThresholdAt(const int32_t* const csf_a[3], const int32_t* const csf_f[3], int w, int h,
                                          int scale, int i, int j) {
  const int rows[3] = {CmMirror(i - 1, h), i, CmMirror(i + 1, h)};
  const int cols[3] = {CmMirror(j - 1, w), j, CmMirror(j + 1, w)};
  constexpr int64_t kAddFlt = static_cast<int32_t>(1u << 31);
  int32_t thr = 0;
  EXACTQ_UNROLL
  for (int theta = 0; theta < 3; ++theta) {
    int32_t sum = 0;
    EXACTQ_UNROLL
    for (int y = 0; y < 3; ++y) {
      EXACTQ_UNROLL
      for (int x = 0; x < 3; ++x) {
        const size_t o = static_cast<size_t>(rows[y]) * w + cols[x];
        if (y == 1 && x == 1) {
          const int32_t c = csf_a[theta][o];
          if (scale == 0) {
            sum += I16(((8738 * Abs32(c)) + 2048) >> 12);
          } else {
            sum += static_cast<int32_t>(((int64_t{286331153} * Abs32(c)) + kAddFlt) >> 32);
          }
        } else {
          sum += csf_f[theta][o];
        }
      }
    }
    thr += sum;
  }
  return thr;
}

// One band's term of the masking sum at a sample: the restored value `src` masked by
// the threshold and cubed (adm_cm / i4_adm_cm's per-pixel body).
EXACTQ_HD inline int64_t AdmCmTerm(int32_t src, int32_t thr, int scale, int band, const AdmCmShifts& s,
                                   uint32_t rfactor32) {
  int32_t x;
  int32_t t;
  if (scale == 0) {
    x = src * (band == 2 ? 49417 : 36453);
    t = Wrap32(int64_t{static_cast<uint32_t>(thr)} << s.sub[band]);
  } else {
    x = static_cast<int32_t>(((int64_t{src} * rfactor32) + (int64_t{1} << 27)) >> 28);
    t = thr;
  }
  x = Wrap32(int64_t{Abs32(x)} - t);
  x = x < 0 ? 0 : x;
  const int32_t x_sq = static_cast<int32_t>(((int64_t{x} * x) + s.add_sq[band]) >> s.sq[band]);
  return ((int64_t{x_sq} * x) + s.add_cub[band]) >> s.cub[band];
}

// A row's masking sum of one band, as it enters the frame's sum.
EXACTQ_HD inline int64_t AdmCmRowTotal(int64_t inner, const AdmCmShifts& s) { return (inner + s.add_inner) >> s.inner; }

// One band's term of the denominator at a reference sample (|ref|^3, shifted).
EXACTQ_HD inline uint64_t AdmDenTerm(int32_t value, int scale, const AdmDenShifts& s) {
  if (scale == 0) {
    const uint64_t x = static_cast<uint16_t>(Abs32(value));
    return (x * x) * x;
  }
  const uint64_t x = static_cast<uint32_t>(Abs32(value));
  return ((((x * x) + s.add_sq) >> s.sq) * x + s.add_cub) >> s.cub;
}

EXACTQ_HD inline uint64_t AdmDenRowTotal(uint64_t inner, const AdmDenShifts& s) {
  return (inner + s.add_accum) >> s.accum;
}

// ---------------------------------------------------------------------------------
// Motion.

EXACTQ_HD inline int32_t MotionTap(int k) { return k == 0 || k == 4 ? 3571 : k == 1 || k == 3 ? 16004 : 26386; }

// The vertical blur of (previous - current) at (i, j) of w x h planes.
template <typename Sample>
EXACTQ_HD inline int32_t MotionVerticalAt(const Sample* prev, const Sample* cur, int w, int h, int bpc, int i, int j) {
  int64_t acc = 0;
  EXACTQ_UNROLL
  for (int k = 0; k < 5; ++k) {
    const size_t o = static_cast<size_t>(Reflect101(i - 2 + k, h)) * w + j;
    acc += int64_t{MotionTap(k) * (int32_t{prev[o]} - int32_t{cur[o]})};
  }
  return static_cast<int32_t>((acc + (int64_t{1} << (bpc - 1))) >> bpc);
}

// |horizontal blur| at one column, from the vertical results of the five columns around
// it (y[k]: column j - 2 + k, mirrored into the row). A row's terms are summed in uint32.
EXACTQ_HD inline uint32_t MotionHorizontalTerm(const int32_t* y) {
  int64_t sum = 0;
  EXACTQ_UNROLL
  for (int k = 0; k < 5; ++k) sum += int64_t{MotionTap(k)} * y[k];
  return static_cast<uint32_t>(Abs32(static_cast<int32_t>((sum + 32768) >> 16)));
}

}  // namespace gpu
}  // namespace vmaf
}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_VMAF_CUDA_VMAF_CUDA_KERNELS_H_
