// The GpuScorer of a build without CUDA: no GPU is ever usable.
#include "engine/runtime/gpu_scorer.h"

namespace exactq {

absl::StatusOr<std::vector<GpuDevice>> ListGpuDevices() {
  return absl::UnavailableError("this build has no CUDA support (built with --config=nocuda or without nvcc)");
}

absl::Status ApplyGpuWait(GpuWait) { return absl::OkStatus(); }

absl::StatusOr<uint64_t> GpuMemoryInUse(int) { return absl::UnavailableError("this build has no CUDA support"); }

absl::StatusOr<std::unique_ptr<GpuScorer>> CreateGpuScorer(int, const FrameGeometry&,
                                                           const std::vector<GpuMetricRequest>&) {
  return absl::UnavailableError("this build has no CUDA support");
}

}  // namespace exactq
