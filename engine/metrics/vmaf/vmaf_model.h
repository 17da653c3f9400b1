// The VMAF model vmaf_v0.6.1 as libvmaf 3.2.0 applies it (predict.c, svm.cpp): each
// feature rescaled linearly, a nu-SVR with an RBF kernel over the 211 support vectors,
// the prediction rescaled back, and the clip to [0, 100]. The model's numbers are in
// vmaf_v0_6_1_model.inc.
//
// The model file also carries a score transform (polynomial, out_gte_in), but without
// "enabled": true libvmaf applies it only when asked (VMAF_MODEL_FLAG_ENABLE_TRANSFORM,
// the CLI's --enable_transform; read_json_model.c). libvmaf's default, and so the
// `vmaf` output, is without it; enable_transform reproduces the flag.
//
//   VmafModelInput in{adm2, motion2, {vif0, vif1, vif2, vif3}};
//   double vmaf = PredictVmaf(in);

#ifndef EXACTQ_ENGINE_METRICS_VMAF_VMAF_MODEL_H_
#define EXACTQ_ENGINE_METRICS_VMAF_VMAF_MODEL_H_

namespace exactq {
namespace vmaf {

// The model's six features (libvmaf's VMAF_integer_feature_* scores).
struct VmafModelInput {
  double adm2 = 0;
  double motion2 = 0;
  double vif[4] = {0, 0, 0, 0};
};

// The SVM's raw decision value for already rescaled features x[0..5] (model order:
// adm2, motion2, vif0..vif3): sum over support vectors of coef * exp(-gamma * |x - sv|^2),
// in support-vector order, minus rho.
double SvmDecision(const double x[6]);

// The final score.
double PredictVmaf(const VmafModelInput& input, bool enable_transform = false);

}  // namespace vmaf
}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_VMAF_VMAF_MODEL_H_
