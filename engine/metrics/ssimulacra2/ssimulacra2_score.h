// The host-side end of `ssimulacra2`: from a frame's 108 sums to its score (spec B.9-
// B.11), one function for every backend (docs/design.md rule 5).
//
// Every backend (the reference, the threaded path, a CUDA twin) produces the same
// numbers for a frame: for each computed scale, channel (X, Y, B) and kind of term, the
// double sum of the per-pixel terms in raster order (ssimulacra2_math.h, SumIndex).
// This code turns them into norms (1-norms and 4th roots of 4-norms, divided by the
// scale's pixel count), weights them with libjxl's 108 weights and maps the total
// through libjxl's polynomial and power, so sqrt and pow are the host libm's whatever
// computed the sums. Scales that were not computed (small frames) contribute zero but
// keep their weight slots, as in the fork.
//
//   exactq::ssimulacra2::FrameSums sums = ...;  // from a backend
//   absl::StatusOr<double> score = exactq::ssimulacra2::ScoreFromSums(sums);

#ifndef EXACTQ_ENGINE_METRICS_SSIMULACRA2_SSIMULACRA2_SCORE_H_
#define EXACTQ_ENGINE_METRICS_SSIMULACRA2_SSIMULACRA2_SCORE_H_

#include "absl/status/statusor.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_math.h"

namespace exactq {
namespace ssimulacra2 {

// Bumped whenever any output bit may change (docs/design.md rule 6).
inline constexpr int kDefinitionVersion = 1;

inline constexpr int kChannels = 3;  // X, Y, B
inline constexpr int kWeightCount = 108;

// libjxl's weights (tools/ssimulacra2.cc, equal to the fork's kWeights; spec B.11):
// index c*36 + scale*6 + n*3 + m, with n 0 = 1-norm, 1 = 4-norm and m 0 = SSIM,
// 1 = ringing (artifact), 2 = blurring (detail).
extern const double kWeights[kWeightCount];

// The side of scale s's images: ceil(side / 2^s), as repeated 2x2 downsampling gives.
int ScaleSide(int side, int scale);

// How many scales a frame computes under the fork's stop rule (B.5): scale s counts
// while both of its sides are >= kMinScaleSide, up to kMaxScales. 0 below 8x8.
int ScaleCount(int width, int height);

// A frame's sums as every backend returns them. A CUDA twin reads `sums` back as one
// block of kMaxScales * kChannels * kSumsPerChannel doubles (864 bytes).
struct FrameSums {
  int width = 0;  // scale 0
  int height = 0;
  int num_scales = 0;  // ScaleCount(width, height)
  // sums[scale][channel][SumIndex]; scales >= num_scales stay 0 and are not read.
  double sums[kMaxScales][kChannels][kSumsPerChannel] = {};
};

// B.9: the norms of one scale. ssim[2c + n] and edge[4c + k], k = 0 ringing 1-norm,
// 1 ringing 4-norm, 2 blurring 1-norm, 3 blurring 4-norm.
struct ScaleNorms {
  double ssim[2 * kChannels] = {};
  double edge[4 * kChannels] = {};
};
ScaleNorms NormsOf(const double (&sums)[kChannels][kSumsPerChannel], int width, int height);

// B.10 without the final check: the pooled value, which may be NaN or infinite when
// a sum is (the fork's "non-finite fails the frame" is ScoreFromSums' job).
double PoolNorms(const ScaleNorms (&norms)[kMaxScales], int num_scales);

// The frame's score: 100 - 10 * pooled^0.6276..., or exactly 100 when the pooled value
// is <= 0 (identical frames). Internal when it is not finite, which no valid input
// reaches (every term is bounded; see ssimulacra2_reference.h).
absl::StatusOr<double> ScoreFromSums(const FrameSums& sums);

}  // namespace ssimulacra2
}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_SSIMULACRA2_SSIMULACRA2_SCORE_H_
