// The model on hand-derived cases: the expected values come from an independent
// evaluation of model/vmaf_v0.6.1.json in Python (float64, the libsvm RBF sum in
// support-vector order, math.exp), not from this code.

#include "engine/metrics/vmaf/vmaf_model.h"

#include "gtest/gtest.h"

namespace exactq {
namespace vmaf {
namespace {

// libvmaf's features of corpus case p4k_x265_crf26, frame 0.
VmafModelInput P4kFrame0() {
  VmafModelInput in;
  in.adm2 = 0.9731242042967102;
  in.motion2 = 0;
  in.vif[0] = 0.6589884161949158;
  in.vif[1] = 0.912778377532959;
  in.vif[2] = 0.958051323890686;
  in.vif[3] = 0.9774130582809448;
  return in;
}

TEST(VmafModelTest, SvmDecisionOfRescaledFeatures) {
  // The same features rescaled by the model's slopes and intercepts.
  const VmafModelInput in = P4kFrame0();
  const double slopes[6] = {2.8098077502505414, 0.06264407466686016, 1.222763456258933,
                            1.5360318811084146, 1.7620864995501058,  2.08656468286432};
  const double intercepts[6] = {-1.7993968597186747, -0.003017198086831897, -0.1728125095425364,
                                -0.5294309090081222, -0.7577185792093722,   -1.083428597549764};
  const double f[6] = {in.adm2, in.motion2, in.vif[0], in.vif[1], in.vif[2], in.vif[3]};
  double x[6];
  for (int k = 0; k < 6; ++k) x[k] = slopes[k] * f[k] + intercepts[k];
  EXPECT_EQ(SvmDecision(x), 0.7460483235489561);
}

TEST(VmafModelTest, PredictionEqualsLibvmaf) {
  // libvmaf printed 87.79361374339551 for this frame (peer_scores.json).
  EXPECT_EQ(PredictVmaf(P4kFrame0()), 87.79361374339551);
  // The model's transform, applied only on request.
  EXPECT_EQ(PredictVmaf(P4kFrame0(), /*enable_transform=*/true), 98.91409170175933);
}

TEST(VmafModelTest, ZeroFeatures) {
  VmafModelInput in;
  EXPECT_EQ(PredictVmaf(in), 4.336670510919477);
  EXPECT_EQ(PredictVmaf(in, true), 9.061096917798944);
}

TEST(VmafModelTest, ClipsToZeroAndHundred) {
  VmafModelInput high;
  high.adm2 = 1;
  high.motion2 = 20;
  for (double& v : high.vif) v = 1;
  EXPECT_EQ(PredictVmaf(high), 100.0);  // unclipped 120.80583516378225

  VmafModelInput low;
  low.adm2 = 0.5;
  low.motion2 = 3.0;
  low.vif[0] = 0.2;
  low.vif[1] = 0.4;
  low.vif[2] = 0.5;
  low.vif[3] = 0.6;
  EXPECT_EQ(PredictVmaf(low), 0.0);  // unclipped -11.37995930045406
}

TEST(VmafModelTest, NamesRoundTrip) {
  for (VmafModelId m : {VmafModelId::kV0_6_1, VmafModelId::k4kV0_6_1, VmafModelId::kV0_6_1Neg}) {
    EXPECT_EQ(FindVmafModel(VmafModelName(m)), m) << VmafModelName(m);
  }
  EXPECT_EQ(FindVmafModel("vmaf_v0.6.1"), VmafModelId::kV0_6_1);
  EXPECT_EQ(FindVmafModel("vmaf_4k_v0.6.1"), VmafModelId::k4kV0_6_1);
  EXPECT_EQ(FindVmafModel("vmaf_v0.6.1neg"), VmafModelId::kV0_6_1Neg);
  EXPECT_EQ(FindVmafModel("vmaf_b_v0.6.3"), std::nullopt);
  EXPECT_EQ(VmafModelNames(), "vmaf_v0.6.1, vmaf_4k_v0.6.1, vmaf_v0.6.1neg");
  EXPECT_FALSE(VmafModelLimitsGainToOne(VmafModelId::kV0_6_1));
  EXPECT_FALSE(VmafModelLimitsGainToOne(VmafModelId::k4kV0_6_1));
  EXPECT_TRUE(VmafModelLimitsGainToOne(VmafModelId::kV0_6_1Neg));
}

TEST(VmafModelTest, FourKPredictionEqualsLibvmaf) {
  // libvmaf 3.2.0's vmaf with --model version=vmaf_4k_v0.6.1 on p4k_x265_crf26 frame 0
  // (testdata/peer_vmaf_models.json); the file has no transform, so the flag changes nothing.
  EXPECT_EQ(PredictVmaf(P4kFrame0(), false, VmafModelId::k4kV0_6_1), 92.93244734879316);
  EXPECT_EQ(PredictVmaf(P4kFrame0(), true, VmafModelId::k4kV0_6_1), 92.93244734879316);
}

TEST(VmafModelTest, NegSvmIsVmafV061s) {
  // Same numbers; only the features' extractor options differ.
  for (bool transform : {false, true}) {
    EXPECT_EQ(PredictVmaf(P4kFrame0(), transform, VmafModelId::kV0_6_1Neg),
              PredictVmaf(P4kFrame0(), transform, VmafModelId::kV0_6_1));
  }
}

}  // namespace
}  // namespace vmaf
}  // namespace exactq
