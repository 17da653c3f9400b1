// The exact scaler: a frame resized to another geometry by arithmetic that is part of
// ExactQ's definition (a ladder's renditions are scaled to their reference's size before
// they are scored, and the scaled samples must be the same wherever they are computed).
// This file is the definition; a CUDA twin must return the same samples byte for byte.
//
// Definition (version kScaleDefinitionVersion):
// - Kernel: the cubic of the Mitchell-Netravali family with B = 0, C = 0.6, the default
//   of FFmpeg's `scale=...:flags=bicubic`, so that scaled pixels stay close to what farms
//   scale with today:
//     K(t) = (42 t^3 - 72 t^2 + 30) / 30              for |t| < 1
//     K(t) = (-18 t^3 + 90 t^2 - 144 t + 72) / 30     for 1 <= |t| < 2, 0 beyond
//   (K(0) = 1, K(1) = K(2) = 0: a same-size scale is the identity.)
// - Sample grids are centre-aligned in each plane: output sample i of a plane of `dst`
//   samples sits at source position x = (i + 1/2) * src / dst - 1/2. Every plane is
//   scaled on its own grid (chroma of 4:2:0 and 4:2:2 is treated as centred between its
//   luma samples).
// - Taps: for an upscale (dst >= src) the 4 source samples floor(x) - 1 .. floor(x) + 2
//   with weights K(|j - x|); for a downscale the kernel is stretched by s = src / dst
//   (weights K(|j - x| / s) over 2 * ceil(2 s) samples), so it also filters. The distance
//   is one binary64 division of integers, |2 j dst - (2 i + 1) src + dst| / (2 max(src,
//   dst)); K in binary64 with -ffp-contract=off. Weights are divided by their sum and
//   rounded to kTapBits fractional bits (lround); the tap with the largest weight takes
//   the residue, so every output's taps sum to exactly 2^kTapBits.
// - Edges: source indices outside the plane are clamped to its first or last sample.
// - Arithmetic: horizontal pass first, sum of sample * tap in int64, kept whole (int64,
//   no rounding); vertical pass over those sums with the same taps in int64; then one
//   rounding, floor((v + 2^(2 kTapBits - 1)) / 2^(2 kTapBits)), and a clamp to
//   [0, 2^bit_depth - 1].
// - Same pixel format in and out (layout and depth); 4:0:0 scales its one plane.
//
//   absl::StatusOr<Frame> scaled = scale::ScaleBicubic(rendition, reference.geometry());
#ifndef EXACTQ_ENGINE_SCALE_BICUBIC_SCALER_H_
#define EXACTQ_ENGINE_SCALE_BICUBIC_SCALER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/format/frame.h"
#include "engine/format/frame_geometry.h"

namespace exactq {
namespace scale {

inline constexpr int kScaleDefinitionVersion = 1;
inline constexpr int kTapBits = 14;

// The taps of one axis: output i reads source samples first[i] + k (clamped to
// [0, src - 1]) for k < taps, with weights weight[i * taps + k] (summing to 2^kTapBits).
struct AxisTaps {
  int src = 0;
  int dst = 0;
  int taps = 0;
  std::vector<int32_t> first;
  std::vector<int32_t> weight;
};

// The kernel, K(t) above.
double BicubicKernel(double t);

// The taps that resize an axis of `src` samples to `dst` (both >= 1).
AxisTaps BicubicTaps(int src, int dst);

// `source` resized to `target`, which must have the same pixel format (InvalidArgument
// otherwise, or for an invalid geometry).
absl::StatusOr<Frame> ScaleBicubic(const Frame& source, const FrameGeometry& target);

}  // namespace scale
}  // namespace exactq

#endif  // EXACTQ_ENGINE_SCALE_BICUBIC_SCALER_H_
