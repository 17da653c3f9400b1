#include "engine/metrics/vmaf/vmaf_model.h"

#include <cmath>

namespace exactq {
namespace vmaf {
namespace {

#include "engine/metrics/vmaf/vmaf_v0_6_1_model.inc"

}  // namespace

double SvmDecision(const double x[6]) {
  double sum = 0;
  for (int i = 0; i < kModelSupportVectors; ++i) {
    const ModelSupportVector& sv = kModelSv[i];
    // libsvm's RBF distance: one term per index, in index order.
    double dist = 0;
    for (int k = 0; k < 6; ++k) {
      const double d = x[k] - sv.x[k];
      dist += d * d;
    }
    sum += sv.coef * std::exp(-kModelGamma * dist);
  }
  sum -= kModelRho;
  return sum;
}

double PredictVmaf(const VmafModelInput& input, bool enable_transform) {
  const double features[6] = {input.adm2,   input.motion2, input.vif[0],
                              input.vif[1], input.vif[2],  input.vif[3]};
  double x[6];
  for (int k = 0; k < 6; ++k) x[k] = kModelSlopes[k + 1] * features[k] + kModelIntercepts[k + 1];
  double prediction = SvmDecision(x);
  prediction = (prediction - kModelIntercepts[0]) / kModelSlopes[0];

  double y = prediction;
  if (enable_transform) {
    // Polynomial, then out_gte_in.
    const double y_in = prediction;
    y = 0.;
    y += kModelTransformP0;
    y += kModelTransformP1 * y_in;
    y += kModelTransformP2 * y_in * y_in;
    y = (y < y_in) ? y_in : y;
  }

  // Clip.
  y = (y < kModelClipMin) ? kModelClipMin : y;
  y = (y > kModelClipMax) ? kModelClipMax : y;
  return y;
}

}  // namespace vmaf
}  // namespace exactq
