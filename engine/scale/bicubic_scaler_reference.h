// The scaler's definition as a straightforward loop, for tests and benchmarks only: every
// output sample computed from the definition in bicubic_scaler.h exactly as it reads
// (clamped source indices per sample, a horizontal pass over whole source rows into
// int64, then the vertical pass, one rounding, one clamp). ScaleBicubic must return
// these bytes; bicubic_scaler_test compares them on random sizes, depths and layouts.
//
//   absl::StatusOr<Frame> expected = scale::ScaleBicubicReference(source, target);
#ifndef EXACTQ_ENGINE_SCALE_BICUBIC_SCALER_REFERENCE_H_
#define EXACTQ_ENGINE_SCALE_BICUBIC_SCALER_REFERENCE_H_

#include "absl/status/statusor.h"
#include "engine/format/frame.h"
#include "engine/format/frame_geometry.h"

namespace exactq {
namespace scale {

absl::StatusOr<Frame> ScaleBicubicReference(const Frame& source, const FrameGeometry& target);

}  // namespace scale
}  // namespace exactq

#endif  // EXACTQ_ENGINE_SCALE_BICUBIC_SCALER_REFERENCE_H_
