// The host-side end of `ssim`: from a frame's two sums to its outputs (spec A.6-A.7).
//
// Every backend (the reference, the threaded path, a CUDA twin) produces the same two
// numbers for a frame: the raster-order double sum of the per-window terms and the sum
// of the window weights. This one host function turns them into outputs, so the
// division, the log10 and the clipping are the same code whatever computed the sums
// (docs/design.md rule 5):
//   ssim    = term_sum / weight_sum               (always, linear)
//   ssim_db = min(-10 * log10(1 - ssim), max_db)  (only with enable_db; max_db when
//                                                   ssim >= 1)
//   max_db  = ceil(10 * log10(peak^2 / (0.5 / (W*H)))) with clip_db, else +inf.
// +inf is a legal ssim_db (identical frames without clip_db).
//
//   exactq::ssim::SsimOptions options{/*enable_db=*/true, /*clip_db=*/true};
//   absl::StatusOr<FrameScores> out =
//       exactq::ssim::SsimOutputs({term_sum, weight_sum}, geometry, options);

#ifndef EXACTQ_ENGINE_METRICS_SSIM_SSIM_SCORE_H_
#define EXACTQ_ENGINE_METRICS_SSIM_SSIM_SCORE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/format/frame_geometry.h"
#include "engine/metrics/metric.h"

namespace exactq {
namespace ssim {

// Bumped whenever any output bit may change (docs/design.md rule 6).
inline constexpr int kDefinitionVersion = 1;

struct SsimOptions {
  bool enable_db = false;  // also output ssim_db
  bool clip_db = false;    // cap ssim_db at the frame's max_db; no effect without enable_db
};

// A frame's two sums, as every backend returns them.
struct SsimSums {
  double term_sum = 0.0;    // sum of SsimTerm in raster order, one double, from +0
  double weight_sum = 0.0;  // sum of the window weights (exact: an integer < 2^53)
};

// The ceiling of ssim_db: +inf without clip_db (the fork's init()).
double SsimMaxDb(const FrameGeometry& geometry, bool clip_db);

// -10*log10(1 - linear), capped at max_db; max_db itself when linear >= 1.
double SsimDb(double linear, double max_db);

// "ssim", then "ssim_db" with enable_db.
std::vector<std::string> SsimOutputNames(const SsimOptions& options);

// The frame's outputs in SsimOutputNames order. Internal if the linear score is not
// finite (the fork fails such a frame; by the bounds in ssim_math.h it cannot happen).
absl::StatusOr<FrameScores> SsimOutputs(const SsimSums& sums, const FrameGeometry& geometry,
                                        const SsimOptions& options);

}  // namespace ssim
}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_SSIM_SSIM_SCORE_H_
