// The CPU reference of `ssim`: the VMAF fork's fixed-point SSIM, plainly written. Its
// bits ARE the metric (docs/design.md rule 1); every other path is tested against it.
//
// Definition (metrics-spec.md section A), luma only, any chroma layout, 8..16 bits,
// any size from 1x1:
//   1. Horizontal pass: for each pixel, the int64 moments of the kept horizontal taps
//      (ssim_math.h) over its row.
//   2. Vertical pass: for each pixel, the kept vertical taps over the horizontal moments
//      of rows y-4..y+4, giving the window's Moments.
//   3. term = SsimTerm(moments), one double per pixel.
//   4. term_sum = term_sum + term in raster order (row 0 left to right, then row 1, ...),
//      one double from +0.0, one rounding per add; weight_sum likewise with the
//      weights (exact).
//   5. ssim = term_sum / weight_sum (ssim_score.h), plus ssim_db with enable_db.
// It agrees bit for bit with the fork and libvmaf at 8..12 bits (ssim_corpus_test.cc).
// At 16 bits both peers overflow an int; this computes the 16-bit case correctly.
//
//   absl::StatusOr<exactq::ssim::SsimSums> sums = exactq::ssim::ReferenceSums(ref, dis);
//   absl::StatusOr<FrameScores> scores = exactq::ssim::ScoreReference(ref, dis, {});

#ifndef EXACTQ_ENGINE_METRICS_SSIM_SSIM_REFERENCE_H_
#define EXACTQ_ENGINE_METRICS_SSIM_SSIM_REFERENCE_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/format/frame.h"
#include "engine/format/frame_geometry.h"
#include "engine/metrics/metric.h"
#include "engine/metrics/ssim/ssim_score.h"

namespace exactq {
namespace ssim {

// OK when both geometries are equal and valid (any layout, 8..16 bits, 1x1 and up).
absl::Status CheckSsimInput(const FrameGeometry& ref, const FrameGeometry& dis);

// The frame's two sums by the definition. InvalidArgument from CheckSsimInput.
absl::StatusOr<SsimSums> ReferenceSums(const Frame& ref, const Frame& dis);

// ReferenceSums, then SsimOutputs.
absl::StatusOr<FrameScores> ScoreReference(const Frame& ref, const Frame& dis, const SsimOptions& options);

}  // namespace ssim
}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_SSIM_SSIM_REFERENCE_H_
