#include "engine/metrics/vmaf/vmaf_sequence.h"

#include "engine/metrics/vmaf/vmaf_model.h"

namespace exactq {
namespace vmaf {

const std::vector<std::string>& VmafOutputNames() {
  static const std::vector<std::string>* names = new std::vector<std::string>{
      "vmaf",         "integer_vif_scale0", "integer_vif_scale1", "integer_vif_scale2", "integer_vif_scale3",
      "integer_adm2", "integer_motion2"};
  return *names;
}

FrameScores VmafOutputs(const VmafFeatures& features, double motion2, VmafModelId model) {
  VmafModelInput input;
  input.adm2 = features.adm2;
  input.motion2 = motion2;
  for (int s = 0; s < 4; ++s) input.vif[s] = features.vif[s];
  const std::vector<std::string>& names = VmafOutputNames();
  const double values[7] = {PredictVmaf(input, false, model),
                            features.vif[0],
                            features.vif[1],
                            features.vif[2],
                            features.vif[3],
                            features.adm2,
                            motion2};
  FrameScores scores;
  scores.reserve(7);
  for (int i = 0; i < 7; ++i) scores.push_back({names[i], values[i]});
  return scores;
}

std::optional<FrameScores> VmafFinisher::Push(const VmafFeatures& features) {
  std::optional<FrameScores> out;
  if (pending_.has_value()) {
    // pending_ is frame frames_pushed_ - 1; features is its successor.
    const int index = frames_pushed_ - 1;
    double motion2 = 0.;
    if (index >= 1) {
      const double lo = pending_->motion;
      const double hi = features.motion;
      motion2 = lo < hi ? lo : hi;
    }
    out = VmafOutputs(*pending_, motion2, model_);
  }
  pending_ = features;
  ++frames_pushed_;
  return out;
}

std::optional<FrameScores> VmafFinisher::Finish() {
  std::optional<FrameScores> out;
  if (pending_.has_value()) {
    const int index = frames_pushed_ - 1;
    out = VmafOutputs(*pending_, index >= 1 ? pending_->motion : 0., model_);
  }
  pending_.reset();
  frames_pushed_ = 0;
  return out;
}

absl::StatusOr<std::vector<FrameScores>> ScoreVmafSequence(absl::Span<const Frame> refs, absl::Span<const Frame> dists,
                                                           const Parallel& parallel, VmafModelId model) {
  if (refs.size() != dists.size()) {
    return absl::InvalidArgumentError("vmaf: reference and distorted frame counts differ");
  }
  std::vector<FrameScores> out;
  VmafFinisher finisher(model);
  for (size_t i = 0; i < refs.size(); ++i) {
    absl::StatusOr<VmafFeatures> features =
        ComputeVmafFeatures(refs[i], dists[i], i == 0 ? nullptr : &refs[i - 1], parallel, model);
    if (!features.ok()) return features.status();
    if (std::optional<FrameScores> scores = finisher.Push(*features)) {
      out.push_back(std::move(*scores));
    }
  }
  if (std::optional<FrameScores> scores = finisher.Finish()) out.push_back(std::move(*scores));
  return out;
}

}  // namespace vmaf
}  // namespace exactq
