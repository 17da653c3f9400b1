// The kernels for any x86-64 CPU: the 8-lane vectors become pairs of SSE2 operations.

#define EXACTQ_SS2_KERNEL_NS generic
#define EXACTQ_SS2_KERNEL_TABLE_NAME GenericKernels
#define EXACTQ_SS2_KERNEL_ISA_NAME "generic"
#include "engine/metrics/ssimulacra2/ssimulacra2_kernels.inc"

namespace exactq {
namespace ssimulacra2 {
namespace internal {

bool Avx2Supported() { return __builtin_cpu_supports("avx2"); }

}  // namespace internal
}  // namespace ssimulacra2
}  // namespace exactq
