// The GpuScorer of a build without CUDA: no GPU is ever usable.
#include "engine/runtime/gpu_scorer.h"

#include <limits>

#include "engine/runtime/runtime_config.h"

namespace exactq {

absl::StatusOr<std::vector<GpuDevice>> ListGpuDevices() {
  return absl::UnavailableError("this build has no CUDA support (built with --config=nocuda or without nvcc)");
}

absl::Status ApplyGpuWait(GpuWait) { return absl::OkStatus(); }

absl::StatusOr<uint64_t> GpuMemoryInUse(int) { return absl::UnavailableError("this build has no CUDA support"); }

absl::StatusOr<uint64_t> DeviceMemoryLimit(int) {
  const uint64_t limit = GetRuntimeConfig().max_device_bytes;
  return limit != 0 ? limit : std::numeric_limits<uint64_t>::max();
}

absl::StatusOr<std::unique_ptr<GpuScorer>> CreateGpuScorer(int, const FrameGeometry&,
                                                           const std::vector<GpuMetricRequest>&) {
  return absl::UnavailableError("this build has no CUDA support");
}

}  // namespace exactq
