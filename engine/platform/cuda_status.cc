#include "engine/platform/cuda_status.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace exactq {

absl::Status CudaStatus(cudaError_t error, const char* who, const char* call) {
  if (error == cudaSuccess) return absl::OkStatus();
  std::string message =
      absl::StrCat(who, ": ", call, ": ", cudaGetErrorName(error), " (", cudaGetErrorString(error), ")");
  if (error == cudaErrorMemoryAllocation) return absl::ResourceExhaustedError(std::move(message));
  return absl::InternalError(std::move(message));
}

}  // namespace exactq
