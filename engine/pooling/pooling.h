// PoolScores: per-frame scores of one output pooled over a stream, on the host.
//
// docs/design.md rule 5: pooling is one host function shared by every backend, so a pooled
// score depends only on the per-frame scores, never on where they were computed. The
// mean, harmonic mean, min and max are libvmaf's (libvmaf.c vmaf_feature_score_pooled,
// identical in the lusoris/vmaf fork), operation for operation:
//   mean          = (((0 + x0) + x1) + ... + x(n-1)) / n        (frame order)
//   harmonic_mean = n / (((0 + 1/(x0+1)) + 1/(x1+1)) + ...) - 1
//   min, max      = the first frame's value, replaced by any later x with x < min
//                   (x > max)
// so they match the peers' pooled numbers bit for bit. The percentiles are ExactQ's
// (libvmaf has none): nearest rank on the ascending sort, the value at 1-based rank
// ceil(p/100 * n); the median is the 50th percentile by the same rule (the lower
// middle value for even n).
//
// NaN policy. libvmaf has one for what it computes, and we keep it: a NaN frame makes
// mean and harmonic_mean NaN (arithmetic propagates it); min and max are NaN if the
// first frame is NaN (no comparison replaces it) and otherwise ignore NaN frames (a
// comparison with NaN is false). For the percentiles, which libvmaf lacks, any NaN
// frame makes every percentile NaN: a sort has no place for NaN, and dropping it would
// hide a failed frame. All NaN results are the one canonical quiet NaN.
//
//   absl::StatusOr<PooledScores> pooled = PoolScores(per_frame_psnr_y);

#ifndef EXACTQ_ENGINE_POOLING_POOLING_H_
#define EXACTQ_ENGINE_POOLING_POOLING_H_

#include <cstddef>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace exactq {

struct PooledScores {
  size_t count = 0;  // frames pooled
  double min = 0.0;
  double max = 0.0;
  double mean = 0.0;
  double harmonic_mean = 0.0;
  double p1 = 0.0;  // nearest-rank percentiles
  double p5 = 0.0;
  double p10 = 0.0;
  double median = 0.0;
};

// InvalidArgument when there are no frames.
absl::StatusOr<PooledScores> PoolScores(absl::Span<const double> per_frame);

// The nearest-rank percentile of ascending `sorted` (non-empty, no NaN):
// sorted[ceil(percent/100 * n) - 1], at least sorted[0]. `percent` is in 0..100.
double NearestRankPercentile(absl::Span<const double> sorted, int percent);

}  // namespace exactq

#endif  // EXACTQ_ENGINE_POOLING_POOLING_H_
