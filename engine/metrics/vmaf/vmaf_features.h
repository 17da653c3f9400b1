// The per-frame features of VMAF (model vmaf_v0.6.1), as libvmaf 3.2.0's integer CPU
// extractors compute them: VIF at four scales (integer_vif.c), ADM2 (integer_adm.c)
// and the motion SAD of this frame's reference against the previous one
// (integer_motion.c). Luma only, any chroma layout, 8 to 16 bits.
//
// A frame's features are a pure function of (reference, distorted, previous reference
// or none): no state, so frames may be computed in any order, on any thread. The
// temporal rules that turn motion into integer_motion2 and the SVM live in
// vmaf_sequence.h and vmaf_model.h.
//
// Where libvmaf's arithmetic is exact (integer filters, integer sums) the order of a
// sum cannot matter; every pixel-level floating-point step (VIF's gain, ADM's angle
// test) is a per-pixel function of integers, and the few float/double steps after the
// sums are done once per frame in libvmaf's order. So splitting rows into bands over
// threads (Parallel below) returns the same bits as one band: the reference is the
// one-band case of the same code.
//
//   absl::StatusOr<VmafFeatures> f = ComputeVmafFeatures(ref, dis, &prev_ref);
//   absl::StatusOr<VmafFeatures> first = ComputeVmafFeatures(ref0, dis0, nullptr);

#ifndef EXACTQ_ENGINE_METRICS_VMAF_VMAF_FEATURES_H_
#define EXACTQ_ENGINE_METRICS_VMAF_VMAF_FEATURES_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/format/frame.h"
#include "engine/format/frame_geometry.h"
#include "engine/metrics/vmaf/vmaf_model.h"

namespace exactq {
class WorkerPool;

namespace vmaf {

// The smallest frame all four VIF and ADM scales allow, 17x17. Width: ADM's scale-0
// masking shifts by ceil(log2(ceil(w/2)) - 4), which must not be negative (w >= 17).
// Both sizes: ADM's last band (ceil(n/16)) needs 2 samples for its 3x3 masking mirror and
// its log2 shifts (n >= 17); VIF's scale 3 (n/8) needs 2 for its 3-tap mirror (n >= 16).
// Smaller frames are refused: libvmaf's arithmetic is undefined there. Where a shift is
// 0 (ADM at n/2 in 17..32) the rounding term is 0; libvmaf computes it as
// (uint32_t)pow(2, 0u - 1), which x86-64 converts from +inf to 0 as well.
inline constexpr int kMinWidth = 17;
inline constexpr int kMinHeight = 17;

struct VmafFeatures {
  // integer_vif_scale0..3: libvmaf's float num / float den, widened to double.
  double vif[4] = {0, 0, 0, 0};
  // integer_adm2.
  double adm2 = 0;
  // VMAF_integer_feature_motion_sad_score: this reference against the previous
  // reference; 0 for the first frame (no previous reference).
  double motion = 0;
};

// OK when both geometries are equal, valid, and at least kMinWidth x kMinHeight;
// InvalidArgument naming the minimum otherwise.
absl::Status CheckVmafInput(const FrameGeometry& ref, const FrameGeometry& dis);

// How rows are split: bands == 1 or pool == nullptr is the plain reference; otherwise
// each stage's rows go in `bands` pieces over the pool.
struct Parallel {
  WorkerPool* pool = nullptr;
  int bands = 1;
};

// The frame's features. prev_ref is the previous frame's reference (same geometry), or
// nullptr for the first frame. InvalidArgument from CheckVmafInput. The features are
// computed with `model`'s extractor options: vmaf_v0.6.1 and vmaf_4k_v0.6.1 use libvmaf's
// defaults; vmaf_v0.6.1neg sets VIF's and ADM's enhancement gain limits to 1 (default 100).
absl::StatusOr<VmafFeatures> ComputeVmafFeatures(const Frame& ref, const Frame& dis, const Frame* prev_ref,
                                                 const Parallel& parallel = {},
                                                 VmafModelId model = VmafModelId::kV0_6_1);

}  // namespace vmaf
}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_VMAF_VMAF_FEATURES_H_
