// The features for any x86-64 (or other) CPU: the build's baseline instruction set.

#define EXACTQ_VMAF_KERNEL_NS generic
#include "engine/metrics/vmaf/vmaf_features_kernels.inc"
#undef EXACTQ_VMAF_KERNEL_NS
// The same kernels with vmaf_v0.6.1neg's extractor options (enhancement gain limits 1).
#define EXACTQ_VMAF_KERNEL_NS generic_neg
#define EXACTQ_VMAF_ENHN_GAIN_LIMIT 1
#include "engine/metrics/vmaf/vmaf_features_kernels.inc"
#undef EXACTQ_VMAF_KERNEL_NS

namespace exactq {
namespace vmaf {
namespace internal {

bool VmafAvx2Supported() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

bool VmafAvx512Supported() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
#else
  return false;
#endif
}

}  // namespace internal
}  // namespace vmaf
}  // namespace exactq
