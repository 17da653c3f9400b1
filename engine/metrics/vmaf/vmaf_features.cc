// VMAF's per-frame features, following libvmaf 3.2.0's C extractors (Netflix vmaf at
// f85a8536: libvmaf/src/feature/integer_vif.c, integer_adm.c, integer_motion.c) for
// their arithmetic, constants and order of operations. Written here from that reading.
//
// Conventions that matter for the bits:
// - Where libvmaf stores a value in a narrower integer (int16 bands, uint16 filtered
//   pixels) this code applies the same truncation (I16, U16 below) and may then keep
//   it in a wider type.
// - Where libvmaf's int32 arithmetic wraps (ADM's 16-bit DWT, ADM's threshold shift)
//   this code wraps the same way (Wrap32), as GCC's code for those lines does.
// - Float and double steps are written with the same types and the same association
//   (the build uses -ffp-contract=off). libm functions are glibc's, as libvmaf's are.

#include "engine/metrics/vmaf/vmaf_features.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "absl/strings/str_format.h"
#include "engine/metrics/ssimulacra2/worker_pool.h"

namespace exactq {
namespace vmaf {
namespace {

// ---------------------------------------------------------------------------------
// Helpers.

inline int32_t Wrap32(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }
inline int32_t I16(int64_t v) { return static_cast<int16_t>(static_cast<uint16_t>(v)); }
inline uint32_t U16(uint64_t v) { return static_cast<uint16_t>(v); }

// Reflection without repeating the edge (libvmaf's VIF padding and motion's mirror):
// -1 -> 1, n -> n - 2.
inline int Reflect101(int i, int n) {
  if (i < 0) return -i;
  if (i >= n) return 2 * (n - 1) - i;
  return i;
}

// How many pieces ForBands splits `count` rows into.
int NumBands(const Parallel& parallel, int count) {
  if (parallel.pool == nullptr) return 1;
  return std::max(1, std::min(parallel.bands, count));
}

// Runs f(band, begin, end) over [0, count) in NumBands pieces (one: the plain loop).
template <typename F>
void ForBands(const Parallel& parallel, int count, const F& f) {
  const int bands = NumBands(parallel, count);
  if (bands <= 1) {
    f(0, 0, count);
    return;
  }
  parallel.pool->Run(bands, [&](int band, int /*worker*/) {
    const int begin = static_cast<int>(static_cast<int64_t>(count) * band / bands);
    const int end = static_cast<int>(static_cast<int64_t>(count) * (band + 1) / bands);
    f(band, begin, end);
  });
}

// A plane of samples (or filtered values) with its size.
struct Plane16 {
  int w = 0;
  int h = 0;
  std::vector<uint16_t> data;
  const uint16_t* row(int i) const { return data.data() + static_cast<size_t>(i) * w; }
};

Plane16 LumaOf(const Frame& frame) {
  Plane16 plane;
  plane.w = frame.geometry().width;
  plane.h = frame.geometry().height;
  const size_t n = static_cast<size_t>(plane.w) * plane.h;
  plane.data.resize(n);
  if (frame.geometry().bytes_per_sample() == 1) {
    const uint8_t* src = frame.plane8(0);
    for (size_t i = 0; i < n; ++i) plane.data[i] = src[i];
  } else {
    const uint16_t* src = frame.plane16(0);
    std::copy(src, src + n, plane.data.begin());
  }
  return plane;
}

// ---------------------------------------------------------------------------------
// VIF (integer_vif.c).

constexpr int kVifFilterWidth[4] = {17, 9, 5, 3};
constexpr uint16_t kVifFilter[4][17] = {
    {489, 935, 1640, 2640, 3896, 5274, 6547, 7455, 7784, 7455, 6547, 5274, 3896, 2640, 1640, 935,
     489},
    {1244, 3663, 7925, 12590, 14692, 12590, 7925, 3663, 1244},
    {3571, 16004, 26386, 16004, 3571},
    {10904, 43728, 10904},
};
constexpr int32_t kVifSigmaNsq = 65536 << 1;
constexpr double kVifEnhancementGainLimit = 100.0;

// log2(i) * 2048 rounded, for i in [32767, 65535] (libvmaf's log_generate).
struct VifLog2Table {
  uint16_t value[65537] = {};
  VifLog2Table() {
    for (unsigned i = 32767; i < 65536; ++i) {
      value[i] = static_cast<uint16_t>(std::round(::log2f(static_cast<float>(i)) * 2048));
    }
  }
};

const VifLog2Table& Log2Table() {
  static const VifLog2Table* table = new VifLog2Table();
  return *table;
}

inline int32_t VifLog2_32(const uint16_t* table, uint32_t v) {
  const int k = 16 - __builtin_clz(v);  // v >= 2^18 here
  return table[v >> k] + 2048 * k;
}

inline int32_t VifLog2_64(const uint16_t* table, uint64_t v) {
  const int k = 48 - __builtin_clzll(v);  // v >= 2^17 here
  return table[v >> k] + 2048 * k;
}

struct VifSums {
  int64_t num_log = 0;
  int64_t den_log = 0;
  int64_t num_non_log = 0;
  int64_t den_non_log = 0;
};

// The per-pixel statistic from the filtered moments (libvmaf's horizontal-pass tail).
inline void VifPixel(const uint16_t* log2_table, uint32_t mu1, uint32_t mu2, uint64_t acc_ref,
                     uint64_t acc_dis, uint64_t acc_ref_dis, VifSums* sums) {
  const uint32_t mu1_sq = static_cast<uint32_t>((uint64_t{mu1} * mu1 + 2147483648u) >> 32);
  const uint32_t mu2_sq = static_cast<uint32_t>((uint64_t{mu2} * mu2 + 2147483648u) >> 32);
  const uint32_t mu1_mu2 = static_cast<uint32_t>((uint64_t{mu1} * mu2 + 2147483648u) >> 32);
  const uint32_t xx = static_cast<uint32_t>((acc_ref + 32768) >> 16);
  const uint32_t yy = static_cast<uint32_t>((acc_dis + 32768) >> 16);
  const uint32_t xy = static_cast<uint32_t>((acc_ref_dis + 32768) >> 16);

  const int32_t sigma1_sq = static_cast<int32_t>(xx - mu1_sq);
  int32_t sigma2_sq = static_cast<int32_t>(yy - mu2_sq);
  const int32_t sigma12 = static_cast<int32_t>(xy - mu1_mu2);
  sigma2_sq = std::max(sigma2_sq, 0);
  if (sigma1_sq >= kVifSigmaNsq) {
    sums->den_log +=
        VifLog2_32(log2_table, static_cast<uint32_t>(Wrap32(int64_t{kVifSigmaNsq} + sigma1_sq))) -
        2048 * 17;
    if (sigma12 > 0 && sigma2_sq > 0) {
      const double eps = 65536 * 1.0e-10;
      double g = sigma12 / (sigma1_sq + eps);
      int32_t sv_sq = static_cast<int32_t>(sigma2_sq - g * sigma12);
      sv_sq = std::max(sv_sq, 0);
      g = std::min(g, kVifEnhancementGainLimit);
      const uint32_t numer1 = static_cast<uint32_t>(sv_sq + kVifSigmaNsq);
      const int64_t numer1_tmp = static_cast<int64_t>(g * g * sigma1_sq) + numer1;
      sums->num_log += VifLog2_64(log2_table, static_cast<uint64_t>(numer1_tmp)) -
                       VifLog2_64(log2_table, numer1);
    }
  } else {
    sums->num_non_log += sigma2_sq;
    sums->den_non_log++;
  }
}

// libvmaf's vif_statistic_16 (which vif_statistic_8 equals at 8 bits) over rows
// [row_begin, row_end) of one scale. The filters run tap by tap over whole rows (the
// same integer sums as libvmaf's pixel-by-pixel loops, in a form compilers vectorise);
// `Wide` is the vertical accumulator of the squares: uint32 holds them exactly at
// scale 0 and 8 bits (17 taps of 65536 * 255^2 < 2^32), uint64 elsewhere.
template <int kScale, typename Wide>
VifSums VifStatisticRowsT(const Plane16& ref, const Plane16& dis, int bpc, int row_begin,
                          int row_end) {
  const uint16_t* log2_table = Log2Table().value;
  constexpr int kWidth = kVifFilterWidth[kScale];
  constexpr int kHalf = kWidth / 2;
  const uint16_t* filter = kVifFilter[kScale];
  const int w = ref.w;
  const int h = ref.h;

  uint32_t add_vp, shift_vp;
  uint64_t add_vp_sq;
  uint32_t shift_vp_sq;
  if (kScale == 0) {
    shift_vp = bpc;
    add_vp = 1u << (bpc - 1);
    shift_vp_sq = (bpc - 8) * 2;
    add_vp_sq = bpc == 8 ? 0 : uint64_t{1} << (shift_vp_sq - 1);
  } else {
    shift_vp = 16;
    add_vp = 32768;
    shift_vp_sq = 16;
    add_vp_sq = 32768;
  }

  // Vertical accumulators, then the vertically filtered rows, padded by kHalf on each
  // side with libvmaf's mirror (PADDING_SQ_DATA).
  std::vector<uint32_t> v_mu1(w), v_mu2(w);
  std::vector<Wide> v_ref(w), v_dis(w), v_ref_dis(w);
  const int padded = w + 2 * kHalf;
  std::vector<uint32_t> t_mu1(padded), t_mu2(padded), t_ref(padded), t_dis(padded),
      t_ref_dis(padded);
  std::vector<uint32_t> h_mu1(w), h_mu2(w);
  std::vector<uint64_t> h_ref(w), h_dis(w), h_ref_dis(w);
  VifSums sums;
  for (int i = row_begin; i < row_end; ++i) {
    std::fill(v_mu1.begin(), v_mu1.end(), 0);
    std::fill(v_mu2.begin(), v_mu2.end(), 0);
    std::fill(v_ref.begin(), v_ref.end(), 0);
    std::fill(v_dis.begin(), v_dis.end(), 0);
    std::fill(v_ref_dis.begin(), v_ref_dis.end(), 0);
    for (int k = 0; k < kWidth; ++k) {
      const int r = Reflect101(i - kHalf + k, h);
      const uint16_t* rr = ref.row(r);
      const uint16_t* dr = dis.row(r);
      const uint32_t f = filter[k];
      for (int j = 0; j < w; ++j) {
        const uint32_t x = rr[j];
        const uint32_t y = dr[j];
        const uint32_t fx = f * x;
        const uint32_t fy = f * y;
        v_mu1[j] += fx;
        v_mu2[j] += fy;
        v_ref[j] += static_cast<Wide>(fx) * x;
        v_dis[j] += static_cast<Wide>(fy) * y;
        v_ref_dis[j] += static_cast<Wide>(fx) * y;
      }
    }
    for (int j = 0; j < w; ++j) {
      t_mu1[kHalf + j] = U16((uint64_t{v_mu1[j]} + add_vp) >> shift_vp);
      t_mu2[kHalf + j] = U16((uint64_t{v_mu2[j]} + add_vp) >> shift_vp);
      t_ref[kHalf + j] = static_cast<uint32_t>((uint64_t{v_ref[j]} + add_vp_sq) >> shift_vp_sq);
      t_dis[kHalf + j] = static_cast<uint32_t>((uint64_t{v_dis[j]} + add_vp_sq) >> shift_vp_sq);
      t_ref_dis[kHalf + j] =
          static_cast<uint32_t>((uint64_t{v_ref_dis[j]} + add_vp_sq) >> shift_vp_sq);
    }
    for (int f = 1; f <= kHalf; ++f) {
      for (std::vector<uint32_t>* t : {&t_mu1, &t_mu2, &t_ref, &t_dis, &t_ref_dis}) {
        (*t)[kHalf - f] = (*t)[kHalf + Reflect101(-f, w)];
        (*t)[kHalf + w - 1 + f] = (*t)[kHalf + Reflect101(w - 1 + f, w)];
      }
    }
    // Horizontal.
    std::fill(h_mu1.begin(), h_mu1.end(), 0);
    std::fill(h_mu2.begin(), h_mu2.end(), 0);
    std::fill(h_ref.begin(), h_ref.end(), 0);
    std::fill(h_dis.begin(), h_dis.end(), 0);
    std::fill(h_ref_dis.begin(), h_ref_dis.end(), 0);
    for (int k = 0; k < kWidth; ++k) {
      const uint32_t f = filter[k];
      const uint32_t* a = t_mu1.data() + k;
      const uint32_t* b = t_mu2.data() + k;
      const uint32_t* c = t_ref.data() + k;
      const uint32_t* d = t_dis.data() + k;
      const uint32_t* e = t_ref_dis.data() + k;
      for (int j = 0; j < w; ++j) {
        h_mu1[j] += f * a[j];
        h_mu2[j] += f * b[j];
        h_ref[j] += uint64_t{f} * c[j];
        h_dis[j] += uint64_t{f} * d[j];
        h_ref_dis[j] += uint64_t{f} * e[j];
      }
    }
    for (int j = 0; j < w; ++j) {
      VifPixel(log2_table, h_mu1[j], h_mu2[j], h_ref[j], h_dis[j], h_ref_dis[j], &sums);
    }
  }
  return sums;
}

VifSums VifStatisticRows(const Plane16& ref, const Plane16& dis, int scale, int bpc, int row_begin,
                         int row_end) {
  switch (scale) {
    case 0:
      return bpc == 8 ? VifStatisticRowsT<0, uint32_t>(ref, dis, bpc, row_begin, row_end)
                      : VifStatisticRowsT<0, uint64_t>(ref, dis, bpc, row_begin, row_end);
    case 1:
      return VifStatisticRowsT<1, uint64_t>(ref, dis, bpc, row_begin, row_end);
    case 2:
      return VifStatisticRowsT<2, uint64_t>(ref, dis, bpc, row_begin, row_end);
    default:
      return VifStatisticRowsT<3, uint64_t>(ref, dis, bpc, row_begin, row_end);
  }
}

// libvmaf's subsample_rd_16 (subsample_rd_8 at 8 bits) followed by decimation: the
// filtered value at every even row and column, which is all the next scale reads.
// Writes rows [row_begin, row_end) of next (next.h = h / 2, next.w = w / 2).
void VifSubsampleRows(const Plane16& src, int scale, int bpc, Plane16* next, int row_begin,
                      int row_end) {
  const int fwidth = kVifFilterWidth[scale + 1];
  const int half = fwidth / 2;
  const uint16_t* filter = kVifFilter[scale + 1];
  const uint32_t add_vp = scale == 0 ? 1u << (bpc - 1) : 32768;
  const uint32_t shift_vp = scale == 0 ? bpc : 16;
  const int w = src.w;
  const int h = src.h;
  std::vector<uint32_t> acc(w);
  std::vector<uint32_t> convol(w + 2 * half);  // padded by half with the mirror
  for (int r = row_begin; r < row_end; ++r) {
    const int i = 2 * r;
    std::fill(acc.begin(), acc.end(), 0);
    for (int k = 0; k < fwidth; ++k) {
      const uint16_t* row = src.row(Reflect101(i - half + k, h));
      const uint32_t f = filter[k];
      for (int j = 0; j < w; ++j) acc[j] += f * uint32_t{row[j]};
    }
    for (int j = 0; j < w; ++j) convol[half + j] = U16((uint64_t{acc[j]} + add_vp) >> shift_vp);
    for (int f = 1; f <= half; ++f) {
      convol[half - f] = convol[half + f];
      convol[half + w - 1 + f] = convol[half + w - 1 - f];
    }
    uint16_t* out = next->data.data() + static_cast<size_t>(r) * next->w;
    for (int c = 0; c < next->w; ++c) {
      const uint32_t* x = convol.data() + 2 * c;  // taps 2c - half .. 2c + half
      uint32_t sum = 0;
      for (int k = 0; k < fwidth; ++k) sum += filter[k] * x[k];
      out[c] = static_cast<uint16_t>((uint64_t{sum} + 32768) >> 16);
    }
  }
}

void ComputeVif(const Plane16& ref0, const Plane16& dis0, int bpc, const Parallel& parallel,
                double vif[4]) {
  Plane16 ref_scales[4];
  Plane16 dis_scales[4];
  const Plane16* ref = &ref0;
  const Plane16* dis = &dis0;
  for (int scale = 0; scale < 4; ++scale) {
    if (scale > 0) {
      Plane16& nr = ref_scales[scale];
      Plane16& nd = dis_scales[scale];
      nr.w = nd.w = ref->w / 2;
      nr.h = nd.h = ref->h / 2;
      nr.data.resize(static_cast<size_t>(nr.w) * nr.h);
      nd.data.resize(nr.data.size());
      ForBands(parallel, nr.h, [&](int, int begin, int end) {
        VifSubsampleRows(*ref, scale - 1, bpc, &nr, begin, end);
        VifSubsampleRows(*dis, scale - 1, bpc, &nd, begin, end);
      });
      ref = &nr;
      dis = &nd;
    }
    std::vector<VifSums> partial(NumBands(parallel, ref->h));
    ForBands(parallel, ref->h, [&](int band, int begin, int end) {
      partial[band] = VifStatisticRows(*ref, *dis, scale, bpc, begin, end);
    });
    VifSums sums;  // integer sums: the order of bands cannot matter
    for (const VifSums& p : partial) {
      sums.num_log += p.num_log;
      sums.den_log += p.den_log;
      sums.num_non_log += p.num_non_log;
      sums.den_non_log += p.den_non_log;
    }
    const float num =
        sums.num_log / 2048.0 + (sums.den_non_log - ((sums.num_non_log) / 16384.0) / (65025.0));
    const float den = sums.den_log / 2048.0 + sums.den_non_log;
    vif[scale] = num / den;
  }
}

// ---------------------------------------------------------------------------------
// ADM (integer_adm.c, adm_tools.h constants), without AIM and with the default options
// of vmaf_v0.6.1: Watson97 CSF, view distance 3.0 x 1080, enhancement gain limit 100,
// noise weight 0.03125.

constexpr int32_t kDwtLo[4] = {15826, 27411, 7345, -4240};
constexpr int32_t kDwtHi[4] = {-4240, -7345, 27411, -15826};
constexpr int32_t kDwtLoSum = 46342;
constexpr int32_t kDwtHiSum = 0;
constexpr double kAdmEnhancementGainLimit = 100.0;
constexpr double kAdmNormViewDist = 3.0;
constexpr int kAdmRefDisplayHeight = 1080;
constexpr double kAdmNoiseWeight = 0.03125;
constexpr double kAdmBorderFactor = 0.1;
constexpr double kPi = 3.14159265358979323846;

// libvmaf's div_lookup: 2^30 / i, signed, around index 32768.
struct AdmDivTable {
  int32_t value[65537] = {};
  AdmDivTable() {
    for (int i = 1; i <= 32768; ++i) {
      const int32_t recip = static_cast<int32_t>(1073741824 / i);
      value[32768 + i] = recip;
      value[32768 - i] = 0 - recip;
    }
  }
};

const AdmDivTable& DivTable() {
  static const AdmDivTable* table = new AdmDivTable();
  return *table;
}

// dwt_quant_step for the luma Watson97 model, in libvmaf's float/double mix.
float DwtQuantStep(int lambda, int theta) {
  // dwt_7_9_YCbCr_threshold[0] and dwt_7_9_basis_function_amplitudes (float from
  // double literals, as libvmaf initialises them).
  const float a = 0.495;
  const float k = 0.466;
  const float f0 = 0.401;
  const float g[4] = {1.501, 1.0, 0.534, 1.0};
  static const float amplitudes[6][4] = {
      {0.62171, 0.67234, 0.72709, 0.67234},     {0.34537, 0.41317, 0.49428, 0.41317},
      {0.18004, 0.22727, 0.28688, 0.22727},     {0.091401, 0.11792, 0.15214, 0.11792},
      {0.045943, 0.059758, 0.077727, 0.059758}, {0.023013, 0.030018, 0.039156, 0.030018}};
  const float r = kAdmNormViewDist * kAdmRefDisplayHeight * kPi / 180.0;
  const float temp = std::log10(std::pow(2.0, lambda + 1) * f0 * g[theta] / r);
  const float q =
      2.0 * a * std::pow(10.0, static_cast<double>(k * temp * temp)) / amplitudes[lambda][theta];
  return q;
}

// 1 / quant step for theta 1 (h, v) and 2 (d).
void RFactors(int scale, float rfactor[3]) {
  const float factor1 = 1.0f / DwtQuantStep(scale, 1);
  const float factor2 = 1.0f / DwtQuantStep(scale, 2);
  rfactor[0] = factor1;
  rfactor[1] = factor1;
  rfactor[2] = factor2;
}

// Four bands of one scale; values as libvmaf holds them (int16 at scale 0, int32 at
// scales 1..3), kept in int32.
struct Bands {
  int w = 0;
  int h = 0;
  std::vector<int32_t> a, v, hb, d;  // hb: the "h" band
  void Resize(int width, int height) {
    w = width;
    h = height;
    const size_t n = static_cast<size_t>(w) * h;
    a.assign(n, 0);
    v.assign(n, 0);
    hb.assign(n, 0);
    d.assign(n, 0);
  }
};

// dwt2_src_indices_filt's mirror: -1 -> 1, n -> n - 1, n + 1 -> n - 2.
inline int DwtMirror(int i, int n) {
  if (i < 0) return -i;
  if (i >= n) return 2 * n - i - 1;
  return i;
}

// One 4-tap lo/hi pair over values s[0..3].
inline int64_t Taps(const int32_t* f, const int64_t s[4]) {
  int64_t acc = 0;
  for (int k = 0; k < 4; ++k) acc += f[k] * s[k];
  return acc;
}

// adm_dwt2_16 (adm_dwt2_8 at 8 bits) over output rows [row_begin, row_end).
void AdmDwtScale0Rows(const Plane16& src, int bpc, Bands* out, int row_begin, int row_end) {
  const int w = src.w;
  const int h = src.h;
  const int32_t add_vp = 1 << (bpc - 1);
  std::vector<int32_t> tmplo(w), tmphi(w);
  for (int i = row_begin; i < row_end; ++i) {
    const uint16_t* rows[4];
    for (int k = 0; k < 4; ++k) rows[k] = src.row(DwtMirror(2 * i - 1 + k, h));
    for (int j = 0; j < w; ++j) {
      const int64_t s[4] = {rows[0][j], rows[1][j], rows[2][j], rows[3][j]};
      // int32 in libvmaf: wraps at 16 bits.
      const int32_t lo = Wrap32(Taps(kDwtLo, s) - int64_t{kDwtLoSum} * add_vp);
      const int32_t hi = Wrap32(Taps(kDwtHi, s) - int64_t{kDwtHiSum} * add_vp);
      tmplo[j] = I16(Wrap32(int64_t{lo} + add_vp) >> bpc);
      tmphi[j] = I16(Wrap32(int64_t{hi} + add_vp) >> bpc);
    }
    for (int j = 0; j < out->w; ++j) {
      int c[4];
      for (int k = 0; k < 4; ++k) c[k] = DwtMirror(2 * j - 1 + k, w);
      const int64_t lo[4] = {tmplo[c[0]], tmplo[c[1]], tmplo[c[2]], tmplo[c[3]]};
      const int64_t hi[4] = {tmphi[c[0]], tmphi[c[1]], tmphi[c[2]], tmphi[c[3]]};
      const size_t o = static_cast<size_t>(i) * out->w + j;
      out->a[o] = I16((Taps(kDwtLo, lo) + 32768) >> 16);
      out->v[o] = I16((Taps(kDwtHi, lo) + 32768) >> 16);
      out->hb[o] = I16((Taps(kDwtLo, hi) + 32768) >> 16);
      out->d[o] = I16((Taps(kDwtHi, hi) + 32768) >> 16);
    }
  }
}

// adm_dwt2_s123_combined for one image, from the previous scale's band a.
void AdmDwtS123Rows(const std::vector<int32_t>& src, int w, int h, int scale, Bands* out,
                    int row_begin, int row_end) {
  constexpr int64_t kAddVp[3] = {0, 32768, 32768};
  constexpr int kShiftVp[3] = {0, 16, 16};
  constexpr int64_t kAddHp[3] = {16384, 32768, 16384};
  constexpr int kShiftHp[3] = {15, 16, 15};
  const int64_t add_vp = kAddVp[scale - 1];
  const int shift_vp = kShiftVp[scale - 1];
  const int64_t add_hp = kAddHp[scale - 1];
  const int shift_hp = kShiftHp[scale - 1];
  std::vector<int32_t> tmplo(w), tmphi(w);
  for (int i = row_begin; i < row_end; ++i) {
    const int32_t* rows[4];
    for (int k = 0; k < 4; ++k) {
      rows[k] = src.data() + static_cast<size_t>(DwtMirror(2 * i - 1 + k, h)) * w;
    }
    for (int j = 0; j < w; ++j) {
      const int64_t s[4] = {rows[0][j], rows[1][j], rows[2][j], rows[3][j]};
      tmplo[j] = static_cast<int32_t>((Taps(kDwtLo, s) + add_vp) >> shift_vp);
      tmphi[j] = static_cast<int32_t>((Taps(kDwtHi, s) + add_vp) >> shift_vp);
    }
    for (int j = 0; j < out->w; ++j) {
      int c[4];
      for (int k = 0; k < 4; ++k) c[k] = DwtMirror(2 * j - 1 + k, w);
      const int64_t lo[4] = {tmplo[c[0]], tmplo[c[1]], tmplo[c[2]], tmplo[c[3]]};
      const int64_t hi[4] = {tmphi[c[0]], tmphi[c[1]], tmphi[c[2]], tmphi[c[3]]};
      const size_t o = static_cast<size_t>(i) * out->w + j;
      out->a[o] = static_cast<int32_t>((Taps(kDwtLo, lo) + add_hp) >> shift_hp);
      out->v[o] = static_cast<int32_t>((Taps(kDwtHi, lo) + add_hp) >> shift_hp);
      out->hb[o] = static_cast<int32_t>((Taps(kDwtLo, hi) + add_hp) >> shift_hp);
      out->d[o] = static_cast<int32_t>((Taps(kDwtHi, hi) + add_hp) >> shift_hp);
    }
  }
}

// The region libvmaf computes decouple and CSF on: the masking region widened by one
// tap on each side, clamped to the band.
struct Region {
  int left, top, right, bottom;
};

Region CsfRegion(int w, int h) {
  Region r;
  r.left = w * kAdmBorderFactor - 0.5 - 1;
  r.top = h * kAdmBorderFactor - 0.5 - 1;
  r.right = w - r.left + 2;
  r.bottom = h - r.top + 2;
  if (r.left < 0) r.left = 0;
  if (r.right > w) r.right = w;
  if (r.top < 0) r.top = 0;
  if (r.bottom > h) r.bottom = h;
  return r;
}

// The region the masking and the denominator sum over (about 10% off each side).
Region ScoreRegion(int w, int h) {
  Region r;
  r.left = w * kAdmBorderFactor - 0.5;
  r.top = h * kAdmBorderFactor - 0.5;
  r.right = w - r.left;
  r.bottom = h - r.top;
  return r;
}

// libvmaf's angle test: is the angle between (oh, ov) and (th, tv) under one degree?
inline bool AngleFlag(int64_t oh, int64_t ov, int64_t th, int64_t tv) {
  static const float cos_1deg_sq = std::cos(1.0 * kPi / 180.0) * std::cos(1.0 * kPi / 180.0);
  const int64_t ot_dp = oh * th + ov * tv;
  const int64_t o_mag_sq = oh * oh + ov * ov;
  const int64_t t_mag_sq = th * th + tv * tv;
  return ((static_cast<float>(ot_dp) / 4096.0) >= 0.0f) &&
         ((static_cast<float>(ot_dp) / 4096.0) * (static_cast<float>(ot_dp) / 4096.0) >=
          cos_1deg_sq * (static_cast<float>(o_mag_sq) / 4096.0) *
              (static_cast<float>(t_mag_sq) / 4096.0));
}

// The enhancement limit on a restored value (libvmaf's MIN/MAX with the gain limit).
inline int64_t LimitGain(int64_t rst, int64_t o, int64_t k, int64_t t, bool angle_flag) {
  const float rst_f = (static_cast<float>(k) / 32768) * (static_cast<float>(o) / 64);
  if (angle_flag && (rst_f > 0.)) {
    const double x = rst * kAdmEnhancementGainLimit;
    return static_cast<int64_t>((x < t) ? x : static_cast<double>(t));
  }
  if (angle_flag && (rst_f < 0.)) {
    const double x = rst * kAdmEnhancementGainLimit;
    return static_cast<int64_t>((x > t) ? x : static_cast<double>(t));
  }
  return rst;
}

// adm_decouple (scale 0, int16) over rows [row_begin, row_end) of the CSF region.
// Writes r (restored) and a (additive impairment) for bands h, v, d.
void AdmDecoupleRows(const Bands& ref, const Bands& dis, int scale, const Region& region, Bands* r,
                     Bands* a, int row_begin, int row_end) {
  const int32_t* div = DivTable().value;
  for (int i = row_begin; i < row_end; ++i) {
    for (int j = region.left; j < region.right; ++j) {
      const size_t o = static_cast<size_t>(i) * ref.w + j;
      const int64_t oh = ref.hb[o], ov = ref.v[o], od = ref.d[o];
      const int64_t th = dis.hb[o], tv = dis.v[o], td = dis.d[o];
      const bool angle_flag = AngleFlag(oh, ov, th, tv);
      const int64_t ov3[3] = {oh, ov, od};
      const int64_t tv3[3] = {th, tv, td};
      int64_t rst[3];
      for (int b = 0; b < 3; ++b) {
        const int64_t ob = ov3[b];
        const int64_t tb = tv3[b];
        int64_t tmp_k;
        if (scale == 0) {
          tmp_k = ob == 0 ? 32768 : ((int64_t{div[ob + 32768]} * tb) + 16384) >> 15;
          tmp_k = static_cast<int32_t>(tmp_k);
        } else {
          // int64 / int32 as a table lookup on the top 15 bits of |o|.
          int shift = 0;
          const uint32_t abs_o = static_cast<uint32_t>(std::abs(static_cast<int32_t>(ob)));
          const int sign = ob < 0 ? -1 : 1;
          uint32_t msb = abs_o;
          if (abs_o >= 32768) {
            shift = 17 - __builtin_clz(abs_o);
            msb = static_cast<uint16_t>((abs_o + (1u << (shift - 1))) >> shift);
          }
          tmp_k =
              ob == 0
                  ? 32768
                  : (((int64_t{div[msb + 32768]} * tb) * sign) + (int64_t{1} << (14 + shift))) >>
                        (15 + shift);
        }
        const int64_t k = tmp_k < 0 ? 0 : (tmp_k > 32768 ? 32768 : tmp_k);
        int64_t rb = ((k * ob) + 16384) >> 15;
        rb = scale == 0 ? I16(rb) : static_cast<int32_t>(rb);
        rb = LimitGain(rb, ob, k, tb, angle_flag);
        if (scale == 0)
          rb = I16(rb);
        else
          rb = static_cast<int32_t>(rb);
        rst[b] = rb;
      }
      r->hb[o] = static_cast<int32_t>(rst[0]);
      r->v[o] = static_cast<int32_t>(rst[1]);
      r->d[o] = static_cast<int32_t>(rst[2]);
      if (scale == 0) {
        a->hb[o] = I16(th - rst[0]);
        a->v[o] = I16(tv - rst[1]);
        a->d[o] = I16(td - rst[2]);
      } else {
        a->hb[o] = Wrap32(th - rst[0]);
        a->v[o] = Wrap32(tv - rst[1]);
        a->d[o] = Wrap32(td - rst[2]);
      }
    }
  }
}

// adm_csf / i4_adm_csf (not AIM): csf_a from the additive impairment a, and csf_f, its
// magnitude over 30, over rows [row_begin, row_end) of the CSF region.
void AdmCsfRows(const Bands& a, int scale, const float rfactor[3], const Region& region,
                Bands* csf_a, Bands* csf_f, int row_begin, int row_end) {
  const std::vector<int32_t>* src[3] = {&a.hb, &a.v, &a.d};
  std::vector<int32_t>* dst[3] = {&csf_a->hb, &csf_a->v, &csf_a->d};
  std::vector<int32_t>* flt[3] = {&csf_f->hb, &csf_f->v, &csf_f->d};
  // Scale 0 at the default view distance: libvmaf's fixed i_rfactor.
  constexpr int32_t kRFactor0[3] = {36453, 36453, 49417};
  constexpr int kShift0[3] = {15, 15, 17};
  constexpr int32_t kShiftAdd0[3] = {16384, 16384, 65535};
  const uint32_t rfactor32[3] = {static_cast<uint32_t>(rfactor[0] * std::pow(2, 32)),
                                 static_cast<uint32_t>(rfactor[1] * std::pow(2, 32)),
                                 static_cast<uint32_t>(rfactor[2] * std::pow(2, 32))};
  // (int32_t)(1u << 31) in libvmaf: the "rounding" term of the >> 32 is -2^31.
  const int64_t add_flt = static_cast<int32_t>(1u << 31);
  for (int theta = 0; theta < 3; ++theta) {
    for (int i = row_begin; i < row_end; ++i) {
      for (int j = region.left; j < region.right; ++j) {
        const size_t o = static_cast<size_t>(i) * a.w + j;
        const int64_t s = (*src[theta])[o];
        if (scale == 0) {
          const int32_t dst_val = kRFactor0[theta] * static_cast<int32_t>(s);
          const int32_t d16 = I16((dst_val + kShiftAdd0[theta]) >> kShift0[theta]);
          (*dst[theta])[o] = d16;
          (*flt[theta])[o] = I16(((4369 * std::abs(d16)) + 2048) >> 12);
        } else {
          const int32_t dst_val =
              static_cast<int32_t>(((rfactor32[theta] * s) + (int64_t{1} << 27)) >> 28);
          (*dst[theta])[o] = dst_val;
          (*flt[theta])[o] =
              static_cast<int32_t>(((int64_t{143165577} * std::abs(dst_val)) + add_flt) >> 32);
        }
      }
    }
  }
}

// The masking threshold at (i, j): for each of h, v, d, the eight neighbours of csf_f
// plus a fifteenth of |csf_a| at the centre. Neighbours mirror at the band's edges:
// -1 -> 1 and n -> n - 1 (libvmaf's ADM_CM_THRESH_* cases).
inline int32_t CmThreshold(const Bands& csf_a, const Bands& csf_f, int scale, int i, int j) {
  const int w = csf_a.w;
  const int h = csf_a.h;
  auto mirror = [](int x, int n) { return x < 0 ? -x : (x >= n ? n - 1 : x); };
  const int rows[3] = {mirror(i - 1, h), i, mirror(i + 1, h)};
  const int cols[3] = {mirror(j - 1, w), j, mirror(j + 1, w)};
  const std::vector<int32_t>* center[3] = {&csf_a.hb, &csf_a.v, &csf_a.d};
  const std::vector<int32_t>* flt[3] = {&csf_f.hb, &csf_f.v, &csf_f.d};
  const int64_t add_flt = static_cast<int32_t>(1u << 31);
  int32_t thr = 0;
  for (int theta = 0; theta < 3; ++theta) {
    int32_t sum = 0;
    for (int y = 0; y < 3; ++y) {
      for (int x = 0; x < 3; ++x) {
        const size_t o = static_cast<size_t>(rows[y]) * w + cols[x];
        if (y == 1 && x == 1) {
          const int32_t c = (*center[theta])[o];
          if (scale == 0) {
            sum += I16(((8738 * std::abs(c)) + 2048) >> 12);
          } else {
            sum += static_cast<int32_t>(((int64_t{286331153} * std::abs(c)) + add_flt) >> 32);
          }
        } else {
          sum += (*flt[theta])[o];
        }
      }
    }
    thr += sum;
  }
  return thr;
}

// Row sums of the masked, cubed restored bands (adm_cm / i4_adm_cm), each row's sum
// shifted as libvmaf does before the frame sum.
struct CmSums {
  int64_t h = 0, v = 0, d = 0;
};

struct CmShifts {
  int sub[3];
  int sq[3];
  int64_t add_sq[3];
  int cub[3];
  int64_t add_cub[3];
  int inner;
  int64_t add_inner;
};

inline int64_t RoundAdd(uint32_t shift) { return shift > 0 ? int64_t{1} << (shift - 1) : 0; }

CmShifts MakeCmShifts(int scale, int w, int h) {
  CmShifts s;
  if (scale == 0) {
    const uint32_t cub_hv = static_cast<uint32_t>(std::ceil(std::log2(w) - 4));
    const uint32_t cub_d = static_cast<uint32_t>(std::ceil(std::log2(w) - 3));
    s.sub[0] = s.sub[1] = 10;
    s.sub[2] = 12;
    s.sq[0] = s.sq[1] = 29;
    s.sq[2] = 30;
    s.add_sq[0] = s.add_sq[1] = 268435456;
    s.add_sq[2] = 536870912;
    s.cub[0] = s.cub[1] = cub_hv;
    s.cub[2] = cub_d;
  } else {
    const uint32_t cub = static_cast<uint32_t>(std::ceil(std::log2(w)));
    for (int b = 0; b < 3; ++b) {
      s.sub[b] = 0;
      s.sq[b] = 30;
      s.add_sq[b] = 536870912;
      s.cub[b] = cub;
    }
  }
  for (int b = 0; b < 3; ++b) s.add_cub[b] = RoundAdd(s.cub[b]);
  s.inner = static_cast<uint32_t>(std::ceil(std::log2(h)));
  s.add_inner = RoundAdd(s.inner);
  return s;
}

CmSums AdmCmRows(const Bands& r, const Bands& csf_a, const Bands& csf_f, int scale,
                 const float rfactor[3], const Region& region, const CmShifts& s, int row_begin,
                 int row_end) {
  constexpr int32_t kRFactor0[3] = {36453, 36453, 49417};
  const uint32_t rfactor32[3] = {static_cast<uint32_t>(rfactor[0] * std::pow(2, 32)),
                                 static_cast<uint32_t>(rfactor[1] * std::pow(2, 32)),
                                 static_cast<uint32_t>(rfactor[2] * std::pow(2, 32))};
  const std::vector<int32_t>* src[3] = {&r.hb, &r.v, &r.d};
  CmSums sums;
  for (int i = row_begin; i < row_end; ++i) {
    int64_t inner[3] = {0, 0, 0};
    for (int j = region.left; j < region.right; ++j) {
      const int32_t thr = CmThreshold(csf_a, csf_f, scale, i, j);
      const size_t o = static_cast<size_t>(i) * r.w + j;
      for (int b = 0; b < 3; ++b) {
        int32_t x;
        int32_t t;
        if (scale == 0) {
          x = (*src[b])[o] * kRFactor0[b];
          t = Wrap32(int64_t{static_cast<uint32_t>(thr)} << s.sub[b]);
        } else {
          x = static_cast<int32_t>(((int64_t{(*src[b])[o]} * rfactor32[b]) + (int64_t{1} << 27)) >>
                                   28);
          t = thr;
        }
        x = Wrap32(int64_t{std::abs(x)} - t);
        x = x < 0 ? 0 : x;
        const int32_t x_sq = static_cast<int32_t>(((int64_t{x} * x) + s.add_sq[b]) >> s.sq[b]);
        const int64_t val = ((int64_t{x_sq} * x) + s.add_cub[b]) >> s.cub[b];
        inner[b] += val;
      }
    }
    sums.h += (inner[0] + s.add_inner) >> s.inner;
    sums.v += (inner[1] + s.add_inner) >> s.inner;
    sums.d += (inner[2] + s.add_inner) >> s.inner;
  }
  return sums;
}

// The denominator's row sums of |ref|^3 (adm_csf_den_scale / adm_csf_den_s123).
struct DenShifts {
  int sq = 0;
  uint64_t add_sq = 0;
  int cub = 0;
  uint64_t add_cub = 0;
  int accum = 0;
  uint64_t add_accum = 0;
};

DenShifts MakeDenShifts(int scale, const Region& region) {
  DenShifts s;
  const int rows = region.bottom - region.top;
  const int cols = region.right - region.left;
  if (scale == 0) {
    int32_t shift = static_cast<int32_t>(std::ceil(std::log2(rows * cols) - 20));
    shift = shift > 0 ? shift : 0;
    s.accum = shift;
    s.add_accum = shift > 0 ? uint64_t{1} << (shift - 1) : 0;
  } else {
    constexpr int kShiftSq[3] = {31, 30, 31};
    s.sq = kShiftSq[scale - 1];
    s.add_sq = uint64_t{1} << s.sq;  // libvmaf adds 2^shift, not half of it
    s.cub = static_cast<uint32_t>(std::ceil(std::log2(cols)));
    s.add_cub = static_cast<uint32_t>(std::pow(2, (s.cub - 1)));
    s.accum = static_cast<uint32_t>(std::ceil(std::log2(rows)));
    s.add_accum = static_cast<uint32_t>(std::pow(2, (s.accum - 1)));
  }
  return s;
}

struct DenSums {
  uint64_t h = 0, v = 0, d = 0;
};

DenSums AdmDenRows(const Bands& ref, int scale, const Region& region, const DenShifts& s,
                   int row_begin, int row_end) {
  DenSums sums;
  const std::vector<int32_t>* src[3] = {&ref.hb, &ref.v, &ref.d};
  for (int i = row_begin; i < row_end; ++i) {
    uint64_t inner[3] = {0, 0, 0};
    for (int j = region.left; j < region.right; ++j) {
      const size_t o = static_cast<size_t>(i) * ref.w + j;
      for (int b = 0; b < 3; ++b) {
        if (scale == 0) {
          const uint64_t x = static_cast<uint16_t>(std::abs((*src[b])[o]));
          inner[b] += (x * x) * x;
        } else {
          const uint64_t x = static_cast<uint32_t>(std::abs((*src[b])[o]));
          inner[b] += ((((x * x) + s.add_sq) >> s.sq) * x + s.add_cub) >> s.cub;
        }
      }
    }
    sums.h += (inner[0] + s.add_accum) >> s.accum;
    sums.v += (inner[1] + s.add_accum) >> s.accum;
    sums.d += (inner[2] + s.add_accum) >> s.accum;
  }
  return sums;
}

// One scale's numerator and denominator (floats, as libvmaf returns them).
void AdmScale(const Bands& ref, const Bands& dis, int scale, const Parallel& parallel,
              float* num_scale, float* den_scale) {
  const int w = ref.w;
  const int h = ref.h;
  float rfactor[3];
  RFactors(scale, rfactor);

  const Region csf_region = CsfRegion(w, h);
  Bands r, a, csf_a, csf_f;
  r.Resize(w, h);
  a.Resize(w, h);
  csf_a.Resize(w, h);
  csf_f.Resize(w, h);
  const int csf_rows = csf_region.bottom - csf_region.top;
  ForBands(parallel, csf_rows, [&](int, int begin, int end) {
    AdmDecoupleRows(ref, dis, scale, csf_region, &r, &a, csf_region.top + begin,
                    csf_region.top + end);
    AdmCsfRows(a, scale, rfactor, csf_region, &csf_a, &csf_f, csf_region.top + begin,
               csf_region.top + end);
  });

  const Region region = ScoreRegion(w, h);
  const int rows = region.bottom - region.top;

  // Denominator.
  const DenShifts ds = MakeDenShifts(scale, region);
  std::vector<DenSums> den_partial(NumBands(parallel, rows));
  ForBands(parallel, rows, [&](int band, int begin, int end) {
    den_partial[band] = AdmDenRows(ref, scale, region, ds, region.top + begin, region.top + end);
  });
  DenSums den;
  for (const DenSums& p : den_partial) {
    den.h += p.h;
    den.v += p.v;
    den.d += p.d;
  }
  double shift_csf;
  if (scale == 0) {
    shift_csf = std::pow(2, (18 - ds.accum));
  } else {
    constexpr uint32_t kConvert[3] = {32, 27, 23};
    shift_csf = std::pow(
        2, (kConvert[scale - 1] - static_cast<uint32_t>(ds.accum) - static_cast<uint32_t>(ds.cub)));
  }
  const double csf_h = static_cast<double>(den.h / shift_csf) * std::pow(rfactor[0], 3);
  const double csf_v = static_cast<double>(den.v / shift_csf) * std::pow(rfactor[1], 3);
  const double csf_d = static_cast<double>(den.d / shift_csf) * std::pow(rfactor[2], 3);
  const float powf_add = ::powf(rows * (region.right - region.left) * kAdmNoiseWeight, 1.0f / 3.0f);
  const float den_h = ::powf(csf_h, 1.0f / 3.0f) + powf_add;
  const float den_v = ::powf(csf_v, 1.0f / 3.0f) + powf_add;
  const float den_d = ::powf(csf_d, 1.0f / 3.0f) + powf_add;
  *den_scale = den_h + den_v + den_d;

  // Numerator (contrast masking).
  const CmShifts cs = MakeCmShifts(scale, w, h);
  std::vector<CmSums> cm_partial(NumBands(parallel, rows));
  ForBands(parallel, rows, [&](int band, int begin, int end) {
    cm_partial[band] = AdmCmRows(r, csf_a, csf_f, scale, rfactor, region, cs, region.top + begin,
                                 region.top + end);
  });
  CmSums cm;
  for (const CmSums& p : cm_partial) {
    cm.h += p.h;
    cm.v += p.v;
    cm.d += p.d;
  }
  float f_h, f_v, f_d;
  if (scale == 0) {
    f_h = static_cast<float>(cm.h / std::pow(2, (52u - cs.cub[0] - cs.inner)));
    f_v = static_cast<float>(cm.v / std::pow(2, (52u - cs.cub[1] - cs.inner)));
    f_d = static_cast<float>(cm.d / std::pow(2, (57u - cs.cub[2] - cs.inner)));
  } else {
    constexpr uint32_t kFinal[3] = {45, 39, 36};
    // A float in libvmaf: int64 / float divides in float.
    const float final_shift = std::pow(2, (kFinal[scale - 1] - static_cast<uint32_t>(cs.cub[0]) -
                                           static_cast<uint32_t>(cs.inner)));
    f_h = static_cast<float>(cm.h) / final_shift;
    f_v = static_cast<float>(cm.v) / final_shift;
    f_d = static_cast<float>(cm.d) / final_shift;
  }
  const float noise = ::powf(rows * (region.right - region.left) * kAdmNoiseWeight, 1.0f / 3.0f);
  const float num_h = ::powf(f_h, 1.0f / 3.0f) + noise;
  const float num_v = ::powf(f_v, 1.0f / 3.0f) + noise;
  const float num_d = ::powf(f_d, 1.0f / 3.0f) + noise;
  *num_scale = num_h + num_v + num_d;
}

double ComputeAdm2(const Plane16& ref0, const Plane16& dis0, int bpc, const Parallel& parallel) {
  const int w0 = ref0.w;
  const int h0 = ref0.h;
  const double numden_limit = 1e-10 * (w0 * h0) / (1920.0 * 1080.0);
  double num = 0;
  double den = 0;
  Bands ref, dis;
  for (int scale = 0; scale < 4; ++scale) {
    Bands next_ref, next_dis;
    if (scale == 0) {
      next_ref.Resize((w0 + 1) / 2, (h0 + 1) / 2);
      next_dis.Resize((w0 + 1) / 2, (h0 + 1) / 2);
      ForBands(parallel, next_ref.h, [&](int, int begin, int end) {
        AdmDwtScale0Rows(ref0, bpc, &next_ref, begin, end);
        AdmDwtScale0Rows(dis0, bpc, &next_dis, begin, end);
      });
    } else {
      const int w = ref.w;
      const int h = ref.h;
      next_ref.Resize((w + 1) / 2, (h + 1) / 2);
      next_dis.Resize((w + 1) / 2, (h + 1) / 2);
      ForBands(parallel, next_ref.h, [&](int, int begin, int end) {
        AdmDwtS123Rows(ref.a, w, h, scale, &next_ref, begin, end);
        AdmDwtS123Rows(dis.a, w, h, scale, &next_dis, begin, end);
      });
    }
    ref = std::move(next_ref);
    dis = std::move(next_dis);
    float num_scale = 0.0f;
    float den_scale = 0.0f;
    AdmScale(ref, dis, scale, parallel, &num_scale, &den_scale);
    num += num_scale;
    den += den_scale;
  }
  num = num < numden_limit ? 0 : num;
  den = den < numden_limit ? 0 : den;
  return den == 0.0 ? 1.0f : num / den;
}

// ---------------------------------------------------------------------------------
// Motion (integer_motion.c): the SAD of the blurred difference of two references.

constexpr int32_t kMotionFilter[5] = {3571, 16004, 26386, 16004, 3571};
constexpr double kMotionMaxValue = 10000.0;

inline int MotionMirror(int i, int n) {
  if (i < 0) return -i;
  if (i >= n) return 2 * n - i - 2;
  return i;
}

uint64_t MotionSadRows(const Plane16& prev, const Plane16& cur, int bpc, int row_begin,
                       int row_end) {
  const int w = cur.w;
  const int h = cur.h;
  const int64_t y_round = int64_t{1} << (bpc - 1);
  std::vector<int64_t> acc(w);
  std::vector<int32_t> y_row(w + 4);  // padded by 2 with the mirror
  uint64_t sad = 0;
  for (int i = row_begin; i < row_end; ++i) {
    std::fill(acc.begin(), acc.end(), 0);
    for (int k = 0; k < 5; ++k) {
      const int r = MotionMirror(i - 2 + k, h);
      const uint16_t* p = prev.row(r);
      const uint16_t* c = cur.row(r);
      const int64_t f = kMotionFilter[k];
      for (int j = 0; j < w; ++j) acc[j] += f * (int32_t{p[j]} - int32_t{c[j]});
    }
    int32_t any_nonzero = 0;
    for (int j = 0; j < w; ++j) {
      y_row[2 + j] = static_cast<int32_t>((acc[j] + y_round) >> bpc);
      any_nonzero |= y_row[2 + j];
    }
    if (!any_nonzero) continue;
    for (int f = 1; f <= 2; ++f) {
      y_row[2 - f] = y_row[2 + MotionMirror(-f, w)];
      y_row[2 + w - 1 + f] = y_row[2 + MotionMirror(w - 1 + f, w)];
    }
    uint32_t row_sad = 0;
    for (int j = 0; j < w; ++j) {
      const int32_t* y = y_row.data() + j;  // taps j - 2 .. j + 2
      int64_t sum = 0;
      for (int k = 0; k < 5; ++k) sum += int64_t{kMotionFilter[k]} * y[k];
      const int32_t val = static_cast<int32_t>((sum + 32768) >> 16);
      row_sad += std::abs(val);
    }
    sad += row_sad;
  }
  return sad;
}

double ComputeMotion(const Plane16& prev, const Plane16& cur, int bpc, const Parallel& parallel) {
  std::vector<uint64_t> partial(NumBands(parallel, cur.h));
  ForBands(parallel, cur.h, [&](int band, int begin, int end) {
    partial[band] = MotionSadRows(prev, cur, bpc, begin, end);
  });
  uint64_t sad = 0;
  for (uint64_t p : partial) sad += p;
  const unsigned w = cur.w;
  const unsigned h = cur.h;
  const double score = static_cast<double>(sad) / 256. / (w * h) * 1.0;
  return std::min(score, kMotionMaxValue);
}

}  // namespace

absl::Status CheckVmafInput(const FrameGeometry& ref, const FrameGeometry& dis) {
  if (absl::Status s = ValidateGeometry(ref); !s.ok()) return s;
  if (!(ref == dis)) {
    return absl::InvalidArgumentError("vmaf: reference and distorted geometries differ");
  }
  if (ref.width < kMinWidth || ref.height < kMinHeight) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "vmaf: frame %dx%d is smaller than the minimum %dx%d (four VIF and ADM scales)", ref.width,
        ref.height, kMinWidth, kMinHeight));
  }
  return absl::OkStatus();
}

absl::StatusOr<VmafFeatures> ComputeVmafFeatures(const Frame& ref, const Frame& dis,
                                                 const Frame* prev_ref, const Parallel& parallel) {
  if (absl::Status s = CheckVmafInput(ref.geometry(), dis.geometry()); !s.ok()) return s;
  if (prev_ref != nullptr && !(prev_ref->geometry() == ref.geometry())) {
    return absl::InvalidArgumentError("vmaf: previous reference geometry differs");
  }
  const int bpc = ref.geometry().format.bit_depth;
  const Plane16 ref_luma = LumaOf(ref);
  const Plane16 dis_luma = LumaOf(dis);
  VmafFeatures features;
  ComputeVif(ref_luma, dis_luma, bpc, parallel, features.vif);
  features.adm2 = ComputeAdm2(ref_luma, dis_luma, bpc, parallel);
  if (prev_ref != nullptr) {
    features.motion = ComputeMotion(LumaOf(*prev_ref), ref_luma, bpc, parallel);
  }
  return features;
}

}  // namespace vmaf
}  // namespace exactq
