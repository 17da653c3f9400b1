// The steps after VMAF's integer sums, in libvmaf 3.2.0's types and order
// (integer_vif.c, integer_adm.c, integer_motion.c); the build keeps -ffp-contract=off.
#include "engine/metrics/vmaf/vmaf_feature_sums.h"

#include <algorithm>
#include <cmath>

namespace exactq {
namespace vmaf {
namespace {

constexpr double kAdmNormViewDist = 3.0;
constexpr int kAdmRefDisplayHeight = 1080;
constexpr double kAdmNoiseWeight = 0.03125;
constexpr double kAdmBorderFactor = 0.1;
constexpr double kPi = 3.14159265358979323846;
constexpr double kMotionMaxValue = 10000.0;

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
  const float q = 2.0 * a * std::pow(10.0, static_cast<double>(k * temp * temp)) / amplitudes[lambda][theta];
  return q;
}

AdmRegion CsfRegion(int w, int h) {
  AdmRegion r;
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

AdmRegion ScoreRegion(int w, int h) {
  AdmRegion r;
  r.left = w * kAdmBorderFactor - 0.5;
  r.top = h * kAdmBorderFactor - 0.5;
  r.right = w - r.left;
  r.bottom = h - r.top;
  return r;
}

int64_t RoundAdd(uint32_t shift) { return shift > 0 ? int64_t{1} << (shift - 1) : 0; }

AdmCmShifts MakeCmShifts(int scale, int w, int h) {
  AdmCmShifts s;
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

AdmDenShifts MakeDenShifts(int scale, const AdmRegion& region) {
  AdmDenShifts s;
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

struct Log2TableData {
  uint16_t value[kVifLog2TableSize] = {};
  Log2TableData() {
    for (unsigned i = 32767; i < 65536; ++i) {
      value[i] = static_cast<uint16_t>(std::round(::log2f(static_cast<float>(i)) * 2048));
    }
  }
};

struct DivTableData {
  int32_t value[kAdmDivTableSize] = {};
  DivTableData() {
    for (int i = 1; i <= 32768; ++i) {
      const int32_t recip = static_cast<int32_t>(1073741824 / i);
      value[32768 + i] = recip;
      value[32768 - i] = 0 - recip;
    }
  }
};

}  // namespace

double VifScaleScore(const VifSums& sums) {
  const float num = sums.num_log / 2048.0 + (sums.den_non_log - ((sums.num_non_log) / 16384.0) / (65025.0));
  const float den = sums.den_log / 2048.0 + sums.den_non_log;
  return num / den;
}

const uint16_t* VifLog2Table() {
  static const Log2TableData* table = new Log2TableData();
  return table->value;
}

AdmScaleParams MakeAdmScaleParams(int scale, int w, int h) {
  AdmScaleParams p;
  p.scale = scale;
  p.w = w;
  p.h = h;
  const float factor1 = 1.0f / DwtQuantStep(scale, 1);
  const float factor2 = 1.0f / DwtQuantStep(scale, 2);
  p.rfactor[0] = factor1;
  p.rfactor[1] = factor1;
  p.rfactor[2] = factor2;
  for (int b = 0; b < 3; ++b) p.rfactor32[b] = static_cast<uint32_t>(p.rfactor[b] * std::pow(2, 32));
  p.csf_region = CsfRegion(w, h);
  p.score_region = ScoreRegion(w, h);
  p.cm = MakeCmShifts(scale, w, h);
  p.den = MakeDenShifts(scale, p.score_region);
  return p;
}

void AdmScaleNumDen(const AdmScaleParams& p, const AdmScaleSums& sums, float* num, float* den) {
  const int scale = p.scale;
  const AdmRegion& region = p.score_region;
  const int rows = region.bottom - region.top;
  const float* rfactor = p.rfactor;

  double shift_csf;
  if (scale == 0) {
    shift_csf = std::pow(2, (18 - p.den.accum));
  } else {
    constexpr uint32_t kConvert[3] = {32, 27, 23};
    shift_csf =
        std::pow(2, (kConvert[scale - 1] - static_cast<uint32_t>(p.den.accum) - static_cast<uint32_t>(p.den.cub)));
  }
  const double csf_h = static_cast<double>(sums.den[0] / shift_csf) * std::pow(rfactor[0], 3);
  const double csf_v = static_cast<double>(sums.den[1] / shift_csf) * std::pow(rfactor[1], 3);
  const double csf_d = static_cast<double>(sums.den[2] / shift_csf) * std::pow(rfactor[2], 3);
  const float powf_add = ::powf(rows * (region.right - region.left) * kAdmNoiseWeight, 1.0f / 3.0f);
  const float den_h = ::powf(csf_h, 1.0f / 3.0f) + powf_add;
  const float den_v = ::powf(csf_v, 1.0f / 3.0f) + powf_add;
  const float den_d = ::powf(csf_d, 1.0f / 3.0f) + powf_add;
  *den = den_h + den_v + den_d;

  const AdmCmShifts& cs = p.cm;
  float f_h, f_v, f_d;
  if (scale == 0) {
    f_h = static_cast<float>(sums.cm[0] / std::pow(2, (52u - cs.cub[0] - cs.inner)));
    f_v = static_cast<float>(sums.cm[1] / std::pow(2, (52u - cs.cub[1] - cs.inner)));
    f_d = static_cast<float>(sums.cm[2] / std::pow(2, (57u - cs.cub[2] - cs.inner)));
  } else {
    constexpr uint32_t kFinal[3] = {45, 39, 36};
    // A float in libvmaf: int64 / float divides in float.
    const float final_shift =
        std::pow(2, (kFinal[scale - 1] - static_cast<uint32_t>(cs.cub[0]) - static_cast<uint32_t>(cs.inner)));
    f_h = static_cast<float>(sums.cm[0]) / final_shift;
    f_v = static_cast<float>(sums.cm[1]) / final_shift;
    f_d = static_cast<float>(sums.cm[2]) / final_shift;
  }
  const float noise = ::powf(rows * (region.right - region.left) * kAdmNoiseWeight, 1.0f / 3.0f);
  const float num_h = ::powf(f_h, 1.0f / 3.0f) + noise;
  const float num_v = ::powf(f_v, 1.0f / 3.0f) + noise;
  const float num_d = ::powf(f_d, 1.0f / 3.0f) + noise;
  *num = num_h + num_v + num_d;
}

double Adm2FromScales(const float num_scale[4], const float den_scale[4], int w0, int h0) {
  const double numden_limit = 1e-10 * (w0 * h0) / (1920.0 * 1080.0);
  double num = 0;
  double den = 0;
  for (int scale = 0; scale < 4; ++scale) {
    num += num_scale[scale];
    den += den_scale[scale];
  }
  num = num < numden_limit ? 0 : num;
  den = den < numden_limit ? 0 : den;
  return den == 0.0 ? 1.0f : num / den;
}

const int32_t* AdmDivTable() {
  static const DivTableData* table = new DivTableData();
  return table->value;
}

float AdmCos1DegSquared() {
  static const float cos_1deg_sq = std::cos(1.0 * kPi / 180.0) * std::cos(1.0 * kPi / 180.0);
  return cos_1deg_sq;
}

double MotionScore(uint64_t sad, int w_in, int h_in) {
  const unsigned w = w_in;
  const unsigned h = h_in;
  const double score = static_cast<double>(sad) / 256. / (w * h) * 1.0;
  return std::min(score, kMotionMaxValue);
}

}  // namespace vmaf
}  // namespace exactq
