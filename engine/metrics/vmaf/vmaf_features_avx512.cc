// The features for CPUs with AVX-512 (F, BW, VL, DQ): the same source as the AVX2 build
// (its AVX2 intrinsics included), with GCC's vectoriser free to use 512-bit vectors.
// Built without -mfma (with contraction off an FMA cannot appear anyway; the check
// below keeps it so). Only called after VmafAvx512Supported(), in the generic file.

#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VL__) || !defined(__AVX512DQ__) || \
    defined(__FMA__)
#error "build this file with -mavx512f -mavx512bw -mavx512vl -mavx512dq and without -mfma"
#endif

#define EXACTQ_VMAF_KERNEL_NS avx512
#include "engine/metrics/vmaf/vmaf_features_kernels.inc"
#undef EXACTQ_VMAF_KERNEL_NS
// The same kernels with vmaf_v0.6.1neg's extractor options (enhancement gain limits 1).
#define EXACTQ_VMAF_KERNEL_NS avx512_neg
#define EXACTQ_VMAF_ENHN_GAIN_LIMIT 1
#include "engine/metrics/vmaf/vmaf_features_kernels.inc"
#undef EXACTQ_VMAF_KERNEL_NS
