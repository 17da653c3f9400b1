// The host kernels for any x86-64 CPU: the 4-lane vectors become pairs of SSE2 operations.

#define EXACTQ_OS_KERNEL_NS generic
#define EXACTQ_OS_KERNEL_TABLE_NAME GenericChunkKernels
#define EXACTQ_OS_KERNEL_ISA_NAME "generic"
#include "engine/exact/internal/cpu_kernels.inc"

namespace exactq {
namespace exact {
namespace internal {

bool Avx2Supported() { return __builtin_cpu_supports("avx2"); }

}  // namespace internal
}  // namespace exact
}  // namespace exactq
