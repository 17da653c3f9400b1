// vmaf: Netflix libvmaf 3.2.0's VMAF with model vmaf_v0.6.1, vmaf_4k_v0.6.1 or
// vmaf_v0.6.1neg, as a Metric: the integer VIF (four scales), ADM2 and motion extractors,
// the model's normalisation, nu-SVR and clipping (README.md has the definition and the
// decisions, vmaf_features.h the per-frame step, vmaf_sequence.h the frame-order rules,
// vmaf_model.h the models).
//
// Input: any layout at 8..16 bits (luma is read), at least 17x17; smaller frames are
// refused (InvalidArgument). Outputs, libvmaf's names: vmaf, integer_vif_scale0..3,
// integer_adm2, integer_motion2. Option `model`:
//   vmaf_v0.6.1     (default) libvmaf's default extractor options;
//   vmaf_4k_v0.6.1  the same features, its own SVM and normalisation (only vmaf differs);
//   vmaf_v0.6.1neg  vmaf_v0.6.1's SVM; VIF and ADM with enhancement gain limits 1 instead
//                   of 100, so integer_vif_scale0..3 and integer_adm2 differ too (libvmaf
//                   names those with an "_egl_1" suffix; the names here stay plain).
// Any other model is refused (InvalidArgument listing the valid names).
//
// State across frames: motion reads the previous frame's reference, and frame i's
// integer_motion2 needs frame i + 1's motion. In a stream the per-frame step
// (ScoreInStream: features, pure) runs on any thread in any order and the stage
// (CreateSequenceStage) answers frame i once frame i + 1 is known or the stream ends.
// Score(ref, dist) alone is a stream of one frame (motion2 = 0).
//
// Definition version 1.
#ifndef EXACTQ_ENGINE_METRICS_VMAF_VMAF_H_
#define EXACTQ_ENGINE_METRICS_VMAF_VMAF_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/metrics/metric.h"
#include "engine/metrics/vmaf/vmaf_model.h"
#include "engine/metrics/vmaf/vmaf_threads.h"

namespace exactq {

class VmafMetric : public Metric {
 public:
  explicit VmafMetric(int num_threads = 1, vmaf::VmafModelId model = vmaf::VmafModelId::kV0_6_1)
      : threads_(num_threads), model_(model) {}

  vmaf::VmafModelId model() const { return model_; }

  const MetricInfo& info() const override;
  absl::Status CheckInput(const FrameGeometry& geometry) const override;
  std::vector<std::string> OutputNames(const FrameGeometry& geometry) const override;
  bool reads_previous_reference() const override { return true; }
  std::unique_ptr<SequenceStage> CreateSequenceStage() const override;

 protected:
  absl::StatusOr<FrameScores> ScoreFrame(const Frame& ref, const Frame& dist) override;
  absl::StatusOr<FrameScores> ScoreFrameInStream(const Frame& ref, const Frame& dist,
                                                 const Frame* previous_reference) override;

 private:
  vmaf::VmafThreads threads_;
  vmaf::VmafModelId model_;
};

// A frame's per-frame outputs, what the stage (CreateSequenceStage) takes: the features
// in VmafFeatures' order, the last one integer_motion. What a twin of the per-frame step
// returns too.
FrameScores VmafPerFrameScores(const vmaf::VmafFeatures& features);

// For the registry.
const MetricInfo& VmafMetricInfo();
absl::StatusOr<std::unique_ptr<Metric>> CreateVmafMetric(const MetricOptions& options);

}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_VMAF_VMAF_H_
