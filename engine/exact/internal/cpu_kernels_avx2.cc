// The host kernels for CPUs with AVX2. Built with -mavx2 and without -mfma (with
// contraction off an FMA cannot appear anyway; the check below keeps it so).
// Avx2Supported() lives in the generic file, so no AVX instruction runs before it.

#if !defined(__AVX2__) || defined(__FMA__)
#error "build this file with -mavx2 and without -mfma"
#endif

#define EXACTQ_OS_KERNEL_NS avx2
#define EXACTQ_OS_KERNEL_TABLE_NAME Avx2ChunkKernels
#define EXACTQ_OS_KERNEL_ISA_NAME "avx2"
#include "engine/exact/internal/cpu_kernels.inc"
