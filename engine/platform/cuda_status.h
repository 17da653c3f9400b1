// CUDA runtime errors as absl statuses naming the call, for every host file that calls
// CUDA (the twins, the device frame, the runtime): RESOURCE_EXHAUSTED when memory runs
// out, INTERNAL otherwise. What an error means for the device (transient or sticky) is
// the runtime's business (engine/runtime/device_fault.h), not this file's.
//
//   EXACTQ_RETURN_IF_CUDA_ERROR("SsimCuda", cudaMalloc(&p, bytes));
#ifndef EXACTQ_ENGINE_PLATFORM_CUDA_STATUS_H_
#define EXACTQ_ENGINE_PLATFORM_CUDA_STATUS_H_

#include <cuda_runtime_api.h>

#include "absl/status/status.h"

namespace exactq {

// OK for cudaSuccess; otherwise "<who>: <call>: <error name> (<error text>)".
absl::Status CudaStatus(cudaError_t error, const char* who, const char* call);

}  // namespace exactq

// Evaluates `call` once and returns its error, if any, as CudaStatus(error, who, #call).
#define EXACTQ_RETURN_IF_CUDA_ERROR(who, call)                     \
  do {                                                             \
    const cudaError_t exactq_cuda_error_ = (call);                 \
    if (exactq_cuda_error_ != cudaSuccess) {                       \
      return ::exactq::CudaStatus(exactq_cuda_error_, who, #call); \
    }                                                              \
  } while (0)

#endif  // EXACTQ_ENGINE_PLATFORM_CUDA_STATUS_H_
