// The CPU reference of `ssimulacra2`: the definition, step by step (metrics-spec.md B).
//
// Plain scalar code, written to be read next to the spec; every other backend must
// return its bits. One frame pair:
//   1. YUV -> linear RGB, full size (B.2, B.3): nearest chroma, the yuv_matrix option,
//      the sRGB EOTF by table.
//   2. For each scale while both sides are >= 8, at most 6 (B.5):
//        XYB of both images (B.4);
//        five blurs (B.6-B.7): ref^2, dis^2, ref*dis, ref, dis, each a horizontal
//          recursive-Gaussian pass over the rows, then a vertical one over the columns;
//        per channel, per pixel in raster order, the SSIM and edge terms in f64,
//          added into six doubles (B.8): 18 sums per scale;
//        the 2x2 downsample of both linear-RGB images for the next scale.
//   3. Norms and pooling on the host (ssimulacra2_score.h).
// The arithmetic of every step is in ssimulacra2_math.h, shared with the other
// backends; this file only walks the images in the definition's order.
//
// Input: 4:2:0, 4:2:2 or 4:4:4, 8 to 16 bits, at least 8x8. 4:0:0 (no chroma to
// convert) and smaller frames are refused with InvalidArgument.
//
// Non-finite values: the edge denominator is at least 1, and the SSIM denominator is
// two blurred variances (each a few ulp below zero at worst) plus C2 = 0.0009, so no
// valid input is known to give a non-finite term. Should one occur, the sums carry it
// (a NaN stays NaN through the clamps) and ScoreFromSums fails the frame.
//
//   absl::StatusOr<FrameSums> sums =
//       exactq::ssimulacra2::ReferenceSums(ref, dis, YuvMatrix::kBt709Limited);
//   absl::StatusOr<double> score = exactq::ssimulacra2::ScoreFromSums(*sums);

#ifndef EXACTQ_ENGINE_METRICS_SSIMULACRA2_SSIMULACRA2_REFERENCE_H_
#define EXACTQ_ENGINE_METRICS_SSIMULACRA2_SSIMULACRA2_REFERENCE_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/format/frame.h"
#include "engine/format/frame_geometry.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_math.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_score.h"

namespace exactq {
namespace ssimulacra2 {

// OK for a valid geometry with chroma and both sides >= 8; otherwise InvalidArgument
// saying why.
absl::Status CheckSsimulacra2Input(const FrameGeometry& geometry);

// InvalidArgument from CheckSsimulacra2Input, or when the two geometries differ.
absl::Status CheckSsimulacra2Pair(const Frame& ref, const Frame& dis);

// The frame's sums by the definition.
absl::StatusOr<FrameSums> ReferenceSums(const Frame& ref, const Frame& dis, YuvMatrix matrix);

// ReferenceSums, then ScoreFromSums.
absl::StatusOr<double> ReferenceScore(const Frame& ref, const Frame& dis, YuvMatrix matrix);

// For tests only: ReferenceSums, and in *fork_avx2 (not null) the same frame's sums as
// the fork's AVX2 build computes them, from the same pass. That build (which produced
// the corpus's peer scores) takes |img - mu| of the edge map in f32 for all but the
// last (w*h mod 8) pixels of each plane, where its scalar code and this reference
// widen to f64 first; nothing else differs. The variant equals the fork bit for bit on
// every corpus frame (ssimulacra2_corpus_test.cc), which shows that every other step
// is the fork's scalar arithmetic exactly.
absl::StatusOr<FrameSums> ReferenceSumsWithForkAvx2Variant(const Frame& ref, const Frame& dis, YuvMatrix matrix,
                                                           FrameSums* fork_avx2);

}  // namespace ssimulacra2
}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_SSIMULACRA2_SSIMULACRA2_REFERENCE_H_
