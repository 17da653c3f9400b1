// From per-frame features to VMAF's per-frame outputs, in frame order.
//
// libvmaf's integer_motion2 of frame i needs the motion of frame i + 1: it is
//   0                                   for frame 0,
//   min(motion[i], motion[i + 1])       while a next frame exists,
//   motion[i]                           for the last frame (i >= 1),
// (integer_motion.c's flush with the default three-frame window). So a frame is answered
// once the next frame's features are known, or at Finish(). VmafFinisher is that small
// sequential step; the features themselves come from ComputeVmafFeatures, in any order.
//
//   VmafFinisher finisher;
//   for (each frame in order) {
//     if (std::optional<FrameScores> out = finisher.Push(features)) Emit(*out);
//   }
//   if (std::optional<FrameScores> out = finisher.Finish()) Emit(*out);
//
// Outputs, in this order: vmaf, integer_vif_scale0..3, integer_adm2, integer_motion2.
// The model (vmaf_model.h) only changes vmaf; the features are the same for every model.

#ifndef EXACTQ_ENGINE_METRICS_VMAF_VMAF_SEQUENCE_H_
#define EXACTQ_ENGINE_METRICS_VMAF_VMAF_SEQUENCE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "engine/format/frame.h"
#include "engine/metrics/metric.h"
#include "engine/metrics/vmaf/vmaf_features.h"
#include "engine/metrics/vmaf/vmaf_model.h"

namespace exactq {
namespace vmaf {

// The output names, in order.
const std::vector<std::string>& VmafOutputNames();

// A frame's outputs from its features and its integer_motion2, vmaf by `model`.
FrameScores VmafOutputs(const VmafFeatures& features, double motion2, VmafModelId model = VmafModelId::kV0_6_1);

class VmafFinisher {
 public:
  explicit VmafFinisher(VmafModelId model = VmafModelId::kV0_6_1) : model_(model) {}

  // Feeds frame n's features (n = frames pushed so far); returns frame n - 1's outputs
  // when n >= 1.
  std::optional<FrameScores> Push(const VmafFeatures& features);

  // Returns the last frame's outputs (none if no frame was pushed) and resets.
  std::optional<FrameScores> Finish();

  int frames_pushed() const { return frames_pushed_; }

 private:
  VmafModelId model_;
  int frames_pushed_ = 0;
  std::optional<VmafFeatures> pending_;  // the frame not yet answered
};

// Scores a whole sequence of pairs in order (reference path, or bands over a pool).
absl::StatusOr<std::vector<FrameScores>> ScoreVmafSequence(absl::Span<const Frame> refs, absl::Span<const Frame> dists,
                                                           const Parallel& parallel = {},
                                                           VmafModelId model = VmafModelId::kV0_6_1);

}  // namespace vmaf
}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_VMAF_VMAF_SEQUENCE_H_
