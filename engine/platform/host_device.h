// Macros for code compiled both by the host compiler and by nvcc: EXACTQ_HD marks a
// function for both sides; EXACTQ_UNROLL asks the device compiler to unroll a loop
// (fixed-count parity loops keep their values in registers) and means nothing on the
// host.
#ifndef EXACTQ_ENGINE_PLATFORM_HOST_DEVICE_H_
#define EXACTQ_ENGINE_PLATFORM_HOST_DEVICE_H_

#if defined(__CUDACC__)
#define EXACTQ_HD __host__ __device__
#else
#define EXACTQ_HD
#endif

#if defined(__CUDA_ARCH__)
#define EXACTQ_UNROLL _Pragma("unroll")
#else
#define EXACTQ_UNROLL
#endif

#endif  // EXACTQ_ENGINE_PLATFORM_HOST_DEVICE_H_
