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
// The code computes exactly that integer expression, arranged for speed: each geometry
// pair's taps are computed once (BicubicScaler), taps that read clamped indices are
// folded onto the samples they clamp to (the same integer sum: s*a + s*b = s*(a+b)), the
// vertical pass runs row by row over a ring of horizontally scaled rows, and an AVX2
// build (chosen at run time) vectorises both passes. Integer sums are exact in any
// order, so the bytes are the definition's;
// bicubic_scaler_reference.h is the definition written as a plain loop, and the tests
// compare both on random sizes, depths and layouts.
//
//   absl::StatusOr<Frame> scaled = scale::ScaleBicubic(rendition, reference.geometry());
//
//   // Many pictures of one geometry pair (a ladder's rendition): taps computed once.
//   absl::StatusOr<scale::BicubicScaler> scaler = scale::BicubicScaler::Create(from, to);
//   Frame out;
//   absl::Status s = scaler->Scale(picture, &out);
#ifndef EXACTQ_ENGINE_SCALE_BICUBIC_SCALER_H_
#define EXACTQ_ENGINE_SCALE_BICUBIC_SCALER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/format/frame.h"
#include "engine/format/frame_geometry.h"
#include "engine/platform/worker_pool.h"

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
// otherwise, or for an invalid geometry). Computes the taps on every call: a caller that
// scales many pictures of one geometry pair keeps a BicubicScaler instead.
absl::StatusOr<Frame> ScaleBicubic(const Frame& source, const FrameGeometry& target);

// Builds of the scaler's kernels (the same bytes: integer arithmetic). Tests and the
// benchmark name one; everything else takes BestScalerIsa().
enum class ScalerIsa { kBaseline, kAvx2 };
// AVX2 where this CPU has it, else the baseline.
ScalerIsa BestScalerIsa();
const char* ScalerIsaName(ScalerIsa isa);  // "baseline", "avx2"

// The scaler of one geometry pair: every plane's taps computed once, then any number of
// pictures scaled with them, each to the bytes ScaleBicubic returns. Holds scratch rows,
// so one thread at a time calls Scale (copies are independent); a WorkerPool given to
// Scale splits each plane into bands of output rows that its threads scale at once (the
// same bytes for every thread count: each output row is the same integer expression).
class BicubicScaler {
 public:
  // InvalidArgument for an invalid geometry or different pixel formats (InternalError
  // for taps whose row sums could overflow 32 bits: no pair of sizes makes them). An
  // `isa` this CPU lacks runs as the baseline.
  static absl::StatusOr<BicubicScaler> Create(const FrameGeometry& source, const FrameGeometry& target,
                                              ScalerIsa isa = BestScalerIsa());

  const FrameGeometry& source_geometry() const { return source_; }
  const FrameGeometry& target_geometry() const { return target_; }
  ScalerIsa isa() const { return isa_; }

  // `source` (at source_geometry(), else InvalidArgument) resized into *target, which
  // takes target_geometry() (its buffer and memory resource kept when large enough).
  // With a pool of more than one thread, bands of kBandRows output rows run on it.
  absl::Status Scale(const Frame& source, Frame* target, WorkerPool* pool = nullptr);

  // Output rows per band when a pool scales: each band scales up to v.taps - 1 source
  // rows horizontally that its neighbour also scales, about 2% more work at 128.
  static constexpr int kBandRows = 128;

 private:
  // One axis of one plane with its taps folded: output i reads samples first[i] + k for
  // k < taps, all inside [0, src - 1] (taps = min(the definition's taps, src)).
  struct FoldedAxis {
    int src = 0;
    int dst = 0;
    int taps = 0;
    std::vector<int32_t> first;
    std::vector<int32_t> weight;
    int64_t max_abs_weight_sum = 0;  // the largest sum of |weight| of one output
  };
  struct PlaneTaps {
    FoldedAxis h;
    FoldedAxis v;
    // The AVX2 build's four-tap horizontal kernel: its first `shuffled_outputs` outputs
    // (a multiple of 8), four at a time: window starts, byte shuffles, 16-bit taps.
    int shuffled_outputs = 0;
    std::vector<int32_t> shuffle_base;
    std::vector<int8_t> shuffle_mask;
    std::vector<int16_t> shuffle_weight;
  };

  BicubicScaler() = default;
  static FoldedAxis Fold(const AxisTaps& axis);
  static void Shuffles(const FrameGeometry& source, PlaneTaps* taps);
  // One worker's rows: a ring of horizontally scaled rows, the vertical sums of the
  // general tap count, the ring's row pointers.
  struct Scratch {
    std::vector<int32_t> ring;
    std::vector<int> ring_rows;
    std::vector<int64_t> sums;
    std::vector<const int32_t*> rows;
  };
  template <class Sample>
  void ScaleBand(const Frame& source, int plane, int y_begin, int y_end, Scratch* scratch, Frame* target) const;

  FrameGeometry source_;
  FrameGeometry target_;
  ScalerIsa isa_ = ScalerIsa::kBaseline;
  std::vector<PlaneTaps> planes_;
  std::vector<Scratch> scratch_;  // one per worker
  // Scale's tasks: a plane's band of output rows; [0] whole planes, [1] kBandRows bands.
  struct Band {
    int plane, y_begin, y_end;
  };
  std::vector<Band> bands_[2];
};

}  // namespace scale
}  // namespace exactq

#endif  // EXACTQ_ENGINE_SCALE_BICUBIC_SCALER_H_
