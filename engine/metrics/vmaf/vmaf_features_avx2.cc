// The features for CPUs with AVX2. Built with -mavx2 and without -mfma (with contraction
// off an FMA cannot appear anyway; the check below keeps it so). Only called after
// VmafAvx2Supported(), which lives in the generic file.

#if !defined(__AVX2__) || defined(__FMA__)
#error "build this file with -mavx2 and without -mfma"
#endif

#define EXACTQ_VMAF_KERNEL_NS avx2
#include "engine/metrics/vmaf/vmaf_features_kernels.inc"
#undef EXACTQ_VMAF_KERNEL_NS
// The same kernels with vmaf_v0.6.1neg's extractor options (enhancement gain limits 1).
#define EXACTQ_VMAF_KERNEL_NS avx2_neg
#define EXACTQ_VMAF_ENHN_GAIN_LIMIT 1
#include "engine/metrics/vmaf/vmaf_features_kernels.inc"
#undef EXACTQ_VMAF_KERNEL_NS
