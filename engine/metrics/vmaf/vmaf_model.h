// The VMAF models as libvmaf 3.2.0 applies them (predict.c, svm.cpp): each feature
// rescaled linearly, a nu-SVR with an RBF kernel over the support vectors, the prediction
// rescaled back, and the clip to [0, 100]. The models' numbers are in
// vmaf_v0_6_1_model.inc (vmaf_v0.6.1, 211 support vectors) and vmaf_4k_v0_6_1_model.inc
// (vmaf_4k_v0.6.1, 262). Both read the same six features, computed with the same
// extractor options, so only this step differs between them. vmaf_v0.6.1neg's file has
// vmaf_v0.6.1's SVM, normalisation, transform and clip unchanged (the same "model" text and
// numbers); it differs only in its extractor options (vif_enhn_gain_limit and
// adm_enhn_gain_limit 1.0), which vmaf_features.h applies.
//
// vmaf_v0.6.1's file also carries a score transform (polynomial, out_gte_in), but without
// "enabled": true libvmaf applies it only when asked (VMAF_MODEL_FLAG_ENABLE_TRANSFORM,
// the CLI's --enable_transform; read_json_model.c). libvmaf's default, and so the
// `vmaf` output, is without it; enable_transform reproduces the flag. vmaf_4k_v0.6.1 has
// no transform, so the flag changes nothing there (as in libvmaf).
//
//   VmafModelInput in{adm2, motion2, {vif0, vif1, vif2, vif3}};
//   double vmaf = PredictVmaf(in);                              // vmaf_v0.6.1
//   double vmaf_4k = PredictVmaf(in, false, VmafModelId::k4kV0_6_1);

#ifndef EXACTQ_ENGINE_METRICS_VMAF_VMAF_MODEL_H_
#define EXACTQ_ENGINE_METRICS_VMAF_VMAF_MODEL_H_

#include <optional>
#include <string>
#include <string_view>

namespace exactq {
namespace vmaf {

// The models, by libvmaf's names (VmafModelName).
enum class VmafModelId {
  kV0_6_1,     // "vmaf_v0.6.1", the default
  k4kV0_6_1,   // "vmaf_4k_v0.6.1"
  kV0_6_1Neg,  // "vmaf_v0.6.1neg": vmaf_v0.6.1's SVM, features with gain limits 1
};

// libvmaf's name of the model ("vmaf_v0.6.1", "vmaf_4k_v0.6.1", "vmaf_v0.6.1neg").
const char* VmafModelName(VmafModelId model);

// Whether the model's features use VIF's and ADM's enhancement gain limit 1 instead of
// libvmaf's default 100 (vmaf_v0.6.1neg's feature_opts_dicts).
bool VmafModelLimitsGainToOne(VmafModelId model);

// The model of that name; nullopt for any other string.
std::optional<VmafModelId> FindVmafModel(std::string_view name);

// The valid names, comma separated, for error messages.
std::string VmafModelNames();

// The model's six features (libvmaf's VMAF_integer_feature_* scores).
struct VmafModelInput {
  double adm2 = 0;
  double motion2 = 0;
  double vif[4] = {0, 0, 0, 0};
};

// The SVM's raw decision value for already rescaled features x[0..5] (model order:
// adm2, motion2, vif0..vif3): sum over support vectors of coef * exp(-gamma * |x - sv|^2),
// in support-vector order, minus rho.
double SvmDecision(const double x[6], VmafModelId model = VmafModelId::kV0_6_1);

// The final score.
double PredictVmaf(const VmafModelInput& input, bool enable_transform = false,
                   VmafModelId model = VmafModelId::kV0_6_1);

}  // namespace vmaf
}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_VMAF_VMAF_MODEL_H_
