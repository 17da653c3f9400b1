// The per-frame features compiled once per instruction set from vmaf_features_kernels.inc:
// generic (the build's baseline), avx2 (-mavx2, no FMA) and avx512 (AVX-512 F/BW/VL/DQ,
// 512-bit vectors preferred, no FMA). Same source, same integer arithmetic, the same IEEE
// operations per pixel in the same order (contraction off, no fast-math), so the same
// bits; ComputeVmafFeatures picks the widest the CPU has.
// The *_neg namespaces: the same source with vmaf_v0.6.1neg's enhancement gain limits
// (1 instead of 100, EXACTQ_VMAF_ENHN_GAIN_LIMIT).
// Callers have checked the input (CheckVmafInput, prev_ref's geometry). Internal to
// vmaf_features.cc and its tests.

#ifndef EXACTQ_ENGINE_METRICS_VMAF_VMAF_FEATURES_KERNELS_H_
#define EXACTQ_ENGINE_METRICS_VMAF_VMAF_FEATURES_KERNELS_H_

#include "engine/format/frame.h"
#include "engine/metrics/vmaf/vmaf_features.h"

namespace exactq {
namespace vmaf {
namespace internal {

namespace generic {
VmafFeatures ComputeFeatures(const Frame& ref, const Frame& dis, const Frame* prev_ref, const Parallel& parallel);
}  // namespace generic

namespace generic_neg {
VmafFeatures ComputeFeatures(const Frame& ref, const Frame& dis, const Frame* prev_ref, const Parallel& parallel);
}  // namespace generic_neg

namespace avx2 {
VmafFeatures ComputeFeatures(const Frame& ref, const Frame& dis, const Frame* prev_ref, const Parallel& parallel);
}  // namespace avx2

namespace avx2_neg {
VmafFeatures ComputeFeatures(const Frame& ref, const Frame& dis, const Frame* prev_ref, const Parallel& parallel);
}  // namespace avx2_neg

namespace avx512 {
VmafFeatures ComputeFeatures(const Frame& ref, const Frame& dis, const Frame* prev_ref, const Parallel& parallel);
}  // namespace avx512

namespace avx512_neg {
VmafFeatures ComputeFeatures(const Frame& ref, const Frame& dis, const Frame* prev_ref, const Parallel& parallel);
}  // namespace avx512_neg

// Whether this CPU runs the avx2 / avx512 kernels (checked in the generic translation
// unit, which no wider instruction reaches).
bool VmafAvx2Supported();
bool VmafAvx512Supported();

}  // namespace internal
}  // namespace vmaf
}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_VMAF_VMAF_FEATURES_KERNELS_H_
