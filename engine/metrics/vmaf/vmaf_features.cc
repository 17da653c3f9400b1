// Input checks and the choice of kernels (vmaf_features_kernels.h); the arithmetic is in
// vmaf_features_kernels.inc.

#include "engine/metrics/vmaf/vmaf_features.h"

#include "absl/strings/str_format.h"
#include "engine/metrics/vmaf/vmaf_features_kernels.h"

namespace exactq {
namespace vmaf {

absl::Status CheckVmafInput(const FrameGeometry& ref, const FrameGeometry& dis) {
  if (absl::Status s = ValidateGeometry(ref); !s.ok()) return s;
  if (!(ref == dis)) {
    return absl::InvalidArgumentError("vmaf: reference and distorted geometries differ");
  }
  if (ref.width < kMinWidth || ref.height < kMinHeight) {
    return absl::InvalidArgumentError(
        absl::StrFormat("vmaf: frame %dx%d is smaller than the minimum %dx%d (four VIF and ADM scales)", ref.width,
                        ref.height, kMinWidth, kMinHeight));
  }
  return absl::OkStatus();
}

absl::StatusOr<VmafFeatures> ComputeVmafFeatures(const Frame& ref, const Frame& dis, const Frame* prev_ref,
                                                 const Parallel& parallel, VmafModelId model) {
  if (absl::Status s = CheckVmafInput(ref.geometry(), dis.geometry()); !s.ok()) return s;
  if (prev_ref != nullptr && !(prev_ref->geometry() == ref.geometry())) {
    return absl::InvalidArgumentError("vmaf: previous reference geometry differs");
  }
  static const bool use_avx512 = internal::VmafAvx512Supported();
  static const bool use_avx2 = internal::VmafAvx2Supported();
  if (VmafModelLimitsGainToOne(model)) {
    if (use_avx512) return internal::avx512_neg::ComputeFeatures(ref, dis, prev_ref, parallel);
    if (use_avx2) return internal::avx2_neg::ComputeFeatures(ref, dis, prev_ref, parallel);
    return internal::generic_neg::ComputeFeatures(ref, dis, prev_ref, parallel);
  }
  if (use_avx512) return internal::avx512::ComputeFeatures(ref, dis, prev_ref, parallel);
  if (use_avx2) return internal::avx2::ComputeFeatures(ref, dis, prev_ref, parallel);
  return internal::generic::ComputeFeatures(ref, dis, prev_ref, parallel);
}

}  // namespace vmaf
}  // namespace exactq
