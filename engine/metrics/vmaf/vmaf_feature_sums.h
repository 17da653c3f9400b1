// The integer sums each VMAF feature is made of, and the steps after them: what the CPU
// kernels (vmaf_features_kernels.inc) and the CUDA twin (cuda/) share, so that both turn
// the same sums into the same bits.
//
// Every sum over pixels in libvmaf's integer extractors is an integer sum (exact in any
// order); the floating-point steps that follow run once per frame, here, in libvmaf's
// order. The tables and per-scale constants the pixel arithmetic reads (VIF's log2
// table, ADM's reciprocal table, ADM's quantisation factors, shifts and regions) are made
// here too, once, so the device reads the host's values.
//
// Out of line on purpose: the kernels are compiled once per instruction set, and an inline
// function shared by those translation units could be linked in its AVX-512 form.
#ifndef EXACTQ_ENGINE_METRICS_VMAF_VMAF_FEATURE_SUMS_H_
#define EXACTQ_ENGINE_METRICS_VMAF_VMAF_FEATURE_SUMS_H_

#include <cstdint>

namespace exactq {
namespace vmaf {

// ---------------------------------------------------------------------------------
// VIF (integer_vif.c): per scale, four sums over the scale's pixels.

struct VifSums {
  int64_t num_log = 0;
  int64_t den_log = 0;
  int64_t num_non_log = 0;
  int64_t den_non_log = 0;
};

// integer_vif_scaleN from its scale's sums: libvmaf's float num / float den.
double VifScaleScore(const VifSums& sums);

// log2(i) * 2048 rounded, for i in [32767, 65535] (libvmaf's log_generate); 65537
// entries, the others 0.
const uint16_t* VifLog2Table();
inline constexpr int kVifLog2TableSize = 65537;

// ---------------------------------------------------------------------------------
// ADM (integer_adm.c): per scale, over the scale's bands, a denominator sum and a
// contrast-masking sum for each of the h, v and d bands; each sum is of per-row sums
// that were rounded and shifted row by row.

// A rectangle of band samples [left, right) x [top, bottom).
struct AdmRegion {
  int left = 0, top = 0, right = 0, bottom = 0;
};

// adm_cm / i4_adm_cm's shifts, per band (h, v, d) and per row.
struct AdmCmShifts {
  int sub[3] = {0, 0, 0};
  int sq[3] = {0, 0, 0};
  int64_t add_sq[3] = {0, 0, 0};
  int cub[3] = {0, 0, 0};
  int64_t add_cub[3] = {0, 0, 0};
  int inner = 0;
  int64_t add_inner = 0;
};

// adm_csf_den_scale / adm_csf_den_s123's shifts.
struct AdmDenShifts {
  int sq = 0;
  uint64_t add_sq = 0;
  int cub = 0;
  uint64_t add_cub = 0;
  int accum = 0;
  uint64_t add_accum = 0;
};

// What one scale's pixel arithmetic and its finishing step read, for bands of w x h.
struct AdmScaleParams {
  int scale = 0;
  int w = 0;
  int h = 0;
  float rfactor[3] = {0, 0, 0};       // 1 / quantisation step for h, v, d
  uint32_t rfactor32[3] = {0, 0, 0};  // rfactor * 2^32 (scales 1..3)
  AdmRegion csf_region;               // decouple and CSF: the score region widened by one
  AdmRegion score_region;             // masking and denominator (about 10% off each side)
  AdmCmShifts cm;
  AdmDenShifts den;
};
AdmScaleParams MakeAdmScaleParams(int scale, int w, int h);

struct AdmScaleSums {
  uint64_t den[3] = {0, 0, 0};  // h, v, d
  int64_t cm[3] = {0, 0, 0};    // h, v, d
};

// One scale's numerator and denominator (floats, as libvmaf returns them).
void AdmScaleNumDen(const AdmScaleParams& params, const AdmScaleSums& sums, float* num, float* den);

// integer_adm2 from the four scales' numerators and denominators, for a w0 x h0 frame.
double Adm2FromScales(const float num[4], const float den[4], int w0, int h0);

// 2^30 / i, signed, at index 32768 + i for i in [-32768, 32768] (libvmaf's
// div_lookup); 65537 entries.
const int32_t* AdmDivTable();
inline constexpr int kAdmDivTableSize = 65537;

// cos(1 degree)^2 as libvmaf's angle test holds it (a float).
float AdmCos1DegSquared();

// ---------------------------------------------------------------------------------
// Motion (integer_motion.c): the SAD of the blurred difference of two references, each
// row's sum held in uint32 as libvmaf's (it wraps there), the rows' sums in uint64.

// VMAF_integer_feature_motion_sad_score from the frame's SAD.
double MotionScore(uint64_t sad, int w, int h);

}  // namespace vmaf
}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_VMAF_VMAF_FEATURE_SUMS_H_
