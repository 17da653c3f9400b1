#include "engine/metrics/vmaf/vmaf_model.h"

#include <cmath>

namespace exactq {
namespace vmaf {
namespace {

struct ModelSupportVector {
  double coef;
  double x[6];
};

namespace v0_6_1 {
#include "engine/metrics/vmaf/vmaf_v0_6_1_model.inc"
}  // namespace v0_6_1

namespace v4k_0_6_1 {
#include "engine/metrics/vmaf/vmaf_4k_v0_6_1_model.inc"
}  // namespace v4k_0_6_1

// One model's numbers, as the .inc files spell them.
struct ModelData {
  const char* name;
  double gamma;
  double rho;
  int support_vectors;
  const ModelSupportVector* sv;
  const double* slopes;      // [7]
  const double* intercepts;  // [7]
  bool has_transform;
  double transform_p0, transform_p1, transform_p2;
  double clip_min, clip_max;
};

constexpr ModelData kModels[] = {
    {"vmaf_v0.6.1", v0_6_1::kModelGamma, v0_6_1::kModelRho, v0_6_1::kModelSupportVectors, v0_6_1::kModelSv,
     v0_6_1::kModelSlopes, v0_6_1::kModelIntercepts, true, v0_6_1::kModelTransformP0, v0_6_1::kModelTransformP1,
     v0_6_1::kModelTransformP2, v0_6_1::kModelClipMin, v0_6_1::kModelClipMax},
    {"vmaf_4k_v0.6.1", v4k_0_6_1::kModelGamma, v4k_0_6_1::kModelRho, v4k_0_6_1::kModelSupportVectors,
     v4k_0_6_1::kModelSv, v4k_0_6_1::kModelSlopes, v4k_0_6_1::kModelIntercepts, false, 0., 0., 0.,
     v4k_0_6_1::kModelClipMin, v4k_0_6_1::kModelClipMax},
    // vmaf_v0.6.1neg.json: the same numbers as vmaf_v0.6.1.json (its extractor options are
    // the features' business, VmafModelLimitsGainToOne).
    {"vmaf_v0.6.1neg", v0_6_1::kModelGamma, v0_6_1::kModelRho, v0_6_1::kModelSupportVectors, v0_6_1::kModelSv,
     v0_6_1::kModelSlopes, v0_6_1::kModelIntercepts, true, v0_6_1::kModelTransformP0, v0_6_1::kModelTransformP1,
     v0_6_1::kModelTransformP2, v0_6_1::kModelClipMin, v0_6_1::kModelClipMax},
};

const ModelData& Data(VmafModelId model) { return kModels[static_cast<int>(model)]; }

}  // namespace

const char* VmafModelName(VmafModelId model) { return Data(model).name; }

bool VmafModelLimitsGainToOne(VmafModelId model) { return model == VmafModelId::kV0_6_1Neg; }

std::optional<VmafModelId> FindVmafModel(std::string_view name) {
  for (int i = 0; i < static_cast<int>(sizeof(kModels) / sizeof(kModels[0])); ++i) {
    if (name == kModels[i].name) return static_cast<VmafModelId>(i);
  }
  return std::nullopt;
}

std::string VmafModelNames() {
  std::string names;
  for (const ModelData& m : kModels) {
    if (!names.empty()) names += ", ";
    names += m.name;
  }
  return names;
}

double SvmDecision(const double x[6], VmafModelId model) {
  const ModelData& m = Data(model);
  double sum = 0;
  for (int i = 0; i < m.support_vectors; ++i) {
    const ModelSupportVector& sv = m.sv[i];
    // libsvm's RBF distance: one term per index, in index order.
    double dist = 0;
    for (int k = 0; k < 6; ++k) {
      const double d = x[k] - sv.x[k];
      dist += d * d;
    }
    sum += sv.coef * std::exp(-m.gamma * dist);
  }
  sum -= m.rho;
  return sum;
}

double PredictVmaf(const VmafModelInput& input, bool enable_transform, VmafModelId model) {
  const ModelData& m = Data(model);
  const double features[6] = {input.adm2, input.motion2, input.vif[0], input.vif[1], input.vif[2], input.vif[3]};
  double x[6];
  for (int k = 0; k < 6; ++k) x[k] = m.slopes[k + 1] * features[k] + m.intercepts[k + 1];
  double prediction = SvmDecision(x, model);
  prediction = (prediction - m.intercepts[0]) / m.slopes[0];

  double y = prediction;
  if (enable_transform && m.has_transform) {
    // Polynomial, then out_gte_in.
    const double y_in = prediction;
    y = 0.;
    y += m.transform_p0;
    y += m.transform_p1 * y_in;
    y += m.transform_p2 * y_in * y_in;
    y = (y < y_in) ? y_in : y;
  }

  // Clip.
  y = (y < m.clip_min) ? m.clip_min : y;
  y = (y > m.clip_max) ? m.clip_max : y;
  return y;
}

}  // namespace vmaf
}  // namespace exactq
