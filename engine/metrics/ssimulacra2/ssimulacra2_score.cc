#include "engine/metrics/ssimulacra2/ssimulacra2_score.h"

#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"

namespace exactq {
namespace ssimulacra2 {

// Three weights (SSIM, ringing, blurring) per line, by index.
// clang-format off
const double kWeights[kWeightCount] = {
    0.0, 0.0007376606707406586, 0.0,  // 0: X scale 0 1-norm
    0.0, 0.0007793481682867309, 0.0,  // 3: X scale 0 4-norm
    0.0, 0.0004371155730107379, 0.0,  // 6: X scale 1 1-norm
    1.1041726426657346, 0.00066284834129271, 0.00015231632783718752,  // 9: X scale 1 4-norm
    0.0, 0.0016406437456599754, 0.0,  // 12: X scale 2 1-norm
    1.8422455520539298, 11.441172603757666, 0.0,  // 15: X scale 2 4-norm
    0.0007989109436015163, 0.000176816438078653, 0.0,  // 18: X scale 3 1-norm
    1.8787594979546387, 10.94906990605142, 0.0,  // 21: X scale 3 4-norm
    0.0007289346991508072, 0.9677937080626833, 0.0,  // 24: X scale 4 1-norm
    0.00014003424285435884, 0.9981766977854967, 0.00031949755934435053,  // 27: X scale 4 4-norm
    0.0004550992113792063, 0.0, 0.0,  // 30: X scale 5 1-norm
    0.0013648766163243398, 0.0, 0.0,  // 33: X scale 5 4-norm
    0.0, 0.0, 0.0,  // 36: Y scale 0 1-norm
    7.466890328078848, 0.0, 17.445833984131262,  // 39: Y scale 0 4-norm
    0.0006235601634041466, 0.0, 0.0,  // 42: Y scale 1 1-norm
    6.683678146179332, 0.00037724407979611296, 1.027889937768264,  // 45: Y scale 1 4-norm
    225.20515300849274, 0.0, 0.0,  // 48: Y scale 2 1-norm
    19.213238186143016, 0.0011401524586618361, 0.001237755635509985,  // 51: Y scale 2 4-norm
    176.39317598450694, 0.0, 0.0,  // 54: Y scale 3 1-norm
    24.43300999870476, 0.28520802612117757, 0.0004485436923833408,  // 57: Y scale 3 4-norm
    0.0, 0.0, 0.0,  // 60: Y scale 4 1-norm
    34.77906344483772, 44.835625328877896, 0.0,  // 63: Y scale 4 4-norm
    0.0, 0.0, 0.0,  // 66: Y scale 5 1-norm
    0.0, 0.0, 0.0,  // 69: Y scale 5 4-norm
    0.0, 0.0008680556573291698, 0.0,  // 72: B scale 0 1-norm
    0.0, 0.0, 0.0,  // 75: B scale 0 4-norm
    0.0, 0.0005313191874358747, 0.0,  // 78: B scale 1 1-norm
    0.00016533814161379112, 0.0, 0.0,  // 81: B scale 1 4-norm
    0.0, 0.0, 0.0,  // 84: B scale 2 1-norm
    0.0004179171803251336, 0.0017290828234722833, 0.0,  // 87: B scale 2 4-norm
    0.0020827005846636437, 0.0, 0.0,  // 90: B scale 3 1-norm
    8.826982764996862, 23.19243343998926, 0.0,  // 93: B scale 3 4-norm
    95.1080498811086, 0.9863978034400682, 0.9834382792465353,  // 96: B scale 4 1-norm
    0.0012286405048278493, 171.2667255897307, 0.9807858872435379,  // 99: B scale 4 4-norm
    0.0, 0.0, 0.0,  // 102: B scale 5 1-norm
    0.0005130064588990679, 0.0, 0.00010854057858411537,  // 105: B scale 5 4-norm
};
// clang-format on

int ScaleSide(int side, int scale) {
  for (int s = 0; s < scale; ++s) side = (side + 1) / 2;
  return side;
}

int ScaleCount(int width, int height) {
  int count = 0;
  while (count < kMaxScales && ScaleSide(width, count) >= kMinScaleSide && ScaleSide(height, count) >= kMinScaleSide) {
    ++count;
  }
  return count;
}

ScaleNorms NormsOf(const double (&sums)[kChannels][kSumsPerChannel], int width, int height) {
  // 1 / (double)(w*h), then multiplied: the fork's one_per_pixels.
  const double inv = 1.0 / static_cast<double>(static_cast<int64_t>(width) * height);
  ScaleNorms norms;
  for (int c = 0; c < kChannels; ++c) {
    const double* s = sums[c];
    norms.ssim[2 * c + 0] = inv * s[kSumSsim];
    norms.ssim[2 * c + 1] = std::sqrt(std::sqrt(inv * s[kSumSsim4]));
    norms.edge[4 * c + 0] = inv * s[kSumArtifact];
    norms.edge[4 * c + 1] = std::sqrt(std::sqrt(inv * s[kSumArtifact4]));
    norms.edge[4 * c + 2] = inv * s[kSumDetail];
    norms.edge[4 * c + 3] = std::sqrt(std::sqrt(inv * s[kSumDetail4]));
  }
  return norms;
}

double PoolNorms(const ScaleNorms (&norms)[kMaxScales], int num_scales) {
  double s = 0.0;
  int i = 0;
  for (int c = 0; c < kChannels; ++c) {
    for (int scale = 0; scale < kMaxScales; ++scale) {
      for (int n = 0; n < 2; ++n) {
        // Missing scales add weight * 0, and i advances all the same (B.10).
        const bool computed = scale < num_scales;
        const double ssim = computed ? norms[scale].ssim[2 * c + n] : 0.0;
        const double ringing = computed ? norms[scale].edge[4 * c + n] : 0.0;
        const double blurring = computed ? norms[scale].edge[4 * c + n + 2] : 0.0;
        s += kWeights[i++] * std::fabs(ssim);
        s += kWeights[i++] * std::fabs(ringing);
        s += kWeights[i++] * std::fabs(blurring);
      }
    }
  }
  s = s * 0.9562382616834844;
  // libjxl's polynomial, left to right: (a s - (b s) s) + ((c s) s) s.
  const double a = 2.326765642916932 * s;
  const double b = (0.020884521182843837 * s) * s;
  const double c = ((6.248496625763138e-05 * s) * s) * s;
  return (a - b) + c;
}

absl::StatusOr<double> ScoreFromSums(const FrameSums& sums) {
  ScaleNorms norms[kMaxScales];
  for (int scale = 0; scale < sums.num_scales; ++scale) {
    norms[scale] = NormsOf(sums.sums[scale], ScaleSide(sums.width, scale), ScaleSide(sums.height, scale));
  }
  const double pooled = PoolNorms(norms, sums.num_scales);
  if (!std::isfinite(pooled)) {
    return absl::InternalError(absl::StrCat("ssimulacra2: non-finite pooled value ", pooled, " for a ", sums.width, "x",
                                            sums.height, " frame"));
  }
  if (pooled > 0.0) return 100.0 - 10.0 * std::pow(pooled, 0.6276336467831387);
  return 100.0;
}

}  // namespace ssimulacra2
}  // namespace exactq
