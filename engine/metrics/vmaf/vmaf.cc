#include "engine/metrics/vmaf/vmaf.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "engine/metrics/metric_options.h"
#include "engine/metrics/vmaf/vmaf_sequence.h"

namespace exactq {
namespace {

constexpr int kDefinitionVersion = 1;

// The per-frame outputs a stream's stage takes: the features, in VmafFeatures' order.
constexpr const char* kFeatureNames[] = {"integer_vif_scale0", "integer_vif_scale1", "integer_vif_scale2",
                                         "integer_vif_scale3", "integer_adm2",       "integer_motion"};

vmaf::VmafFeatures FeaturesOf(const FrameScores& scores) {
  vmaf::VmafFeatures f;
  for (int i = 0; i < 4; ++i) f.vif[i] = scores[static_cast<size_t>(i)].value;
  f.adm2 = scores[4].value;
  f.motion = scores[5].value;
  return f;
}

class VmafStage final : public SequenceStage {
 public:
  explicit VmafStage(vmaf::VmafModelId model) : finisher_(model) {}

  std::vector<FrameScores> Push(FrameScores per_frame) override {
    std::vector<FrameScores> done;
    if (std::optional<FrameScores> out = finisher_.Push(FeaturesOf(per_frame))) done.push_back(std::move(*out));
    return done;
  }
  std::vector<FrameScores> Finish() override {
    std::vector<FrameScores> done;
    if (std::optional<FrameScores> out = finisher_.Finish()) done.push_back(std::move(*out));
    return done;
  }

 private:
  vmaf::VmafFinisher finisher_;
};

}  // namespace

FrameScores VmafPerFrameScores(const vmaf::VmafFeatures& f) {
  const double values[] = {f.vif[0], f.vif[1], f.vif[2], f.vif[3], f.adm2, f.motion};
  FrameScores scores;
  for (size_t i = 0; i < 6; ++i) scores.push_back({kFeatureNames[i], values[i]});
  return scores;
}

const MetricInfo& VmafMetricInfo() {
  static const MetricInfo* const info = new MetricInfo{
      "vmaf",
      kDefinitionVersion,
      "VMAF, Netflix libvmaf 3.2.0's CPU result with model vmaf_v0.6.1, vmaf_4k_v0.6.1 or vmaf_v0.6.1neg (integer VIF, "
      "ADM2, "
      "motion2; no score transform): 0..100, higher is better; luma of any layout, 8..16 bits, >= 17x17; "
      "frame i is answered once frame i + 1 is known",
      {"vmaf", "integer_vif_scale0", "integer_vif_scale1", "integer_vif_scale2", "integer_vif_scale3", "integer_adm2",
       "integer_motion2"},
      {{"model", "vmaf_v0.6.1", "the VMAF model: vmaf_v0.6.1, vmaf_4k_v0.6.1 or vmaf_v0.6.1neg"}},
  };
  return *info;
}

absl::StatusOr<std::unique_ptr<Metric>> CreateVmafMetric(const MetricOptions& options) {
  absl::StatusOr<MetricOptionParser> parser = MetricOptionParser::Create(VmafMetricInfo(), options);
  if (!parser.ok()) return parser.status();
  vmaf::VmafModelId model = vmaf::VmafModelId::kV0_6_1;
  const auto option = options.find("model");
  if (option != options.end()) {
    const std::optional<vmaf::VmafModelId> found = vmaf::FindVmafModel(option->second);
    if (!found.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat("option 'model' of metric 'vmaf' is '", option->second,
                                                     "'; the models are ", vmaf::VmafModelNames()));
    }
    model = *found;
  }
  return std::make_unique<VmafMetric>(1, model);
}

const MetricInfo& VmafMetric::info() const { return VmafMetricInfo(); }

absl::Status VmafMetric::CheckInput(const FrameGeometry& geometry) const {
  return vmaf::CheckVmafInput(geometry, geometry);
}

std::vector<std::string> VmafMetric::OutputNames(const FrameGeometry&) const { return vmaf::VmafOutputNames(); }

std::unique_ptr<SequenceStage> VmafMetric::CreateSequenceStage() const { return std::make_unique<VmafStage>(model_); }

absl::StatusOr<FrameScores> VmafMetric::ScoreFrameInStream(const Frame& ref, const Frame& dist,
                                                           const Frame* previous_reference) {
  absl::StatusOr<vmaf::VmafFeatures> features = threads_.ComputeFeatures(ref, dist, previous_reference, model_);
  if (!features.ok()) return features.status();
  return VmafPerFrameScores(*features);
}

absl::StatusOr<FrameScores> VmafMetric::ScoreFrame(const Frame& ref, const Frame& dist) {
  absl::StatusOr<vmaf::VmafFeatures> features = threads_.ComputeFeatures(ref, dist, nullptr, model_);
  if (!features.ok()) return features.status();
  vmaf::VmafFinisher finisher(model_);
  finisher.Push(*features);  // frame 0 of a one-frame stream: nothing to answer yet
  return *finisher.Finish();
}

}  // namespace exactq
