// GpuScorer: one stream's metrics on one GPU. Built with CUDA it uploads each frame pair
// once into a device frame and runs the metrics' CUDA twins on it, each found through
// the metric registry (gpu_metric.h; gpu_scorer_cuda.cc); built without, every call
// says so (gpu_scorer_none.cc), so FrameScorer places everything on the CPU.
//
// The twins return the CPU reference's bits; a GpuScorer therefore changes where a
// frame is scored, never its scores.
#ifndef EXACTQ_ENGINE_RUNTIME_GPU_SCORER_H_
#define EXACTQ_ENGINE_RUNTIME_GPU_SCORER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/format/frame.h"
#include "engine/metrics/metric.h"
#include "engine/runtime/gpu_device.h"
#include "engine/runtime/runtime_config.h"

namespace exactq {

// The GPUs this process may use (CUDA_VISIBLE_DEVICES applies), or an error saying why
// none can be used (no driver, no device, built without CUDA).
absl::StatusOr<std::vector<GpuDevice>> ListGpuDevices();

// Sets how host threads wait for the work of the GPUs the runtime may use
// (RuntimeConfig::gpus; set it first), for the whole process, the GPU decoders' waits
// included (they share the devices' primary contexts). OK and nothing done without CUDA.
absl::Status ApplyGpuWait(GpuWait wait);

// Device memory in use on one GPU (total minus free, all processes), for /metrics.
absl::StatusOr<uint64_t> GpuMemoryInUse(int device);

// Device memory the runtime admits on one GPU for all its streams together
// (RuntimeConfig::max_device_bytes; 0: 90% of the device's memory). Without CUDA:
// max_device_bytes, or no limit when 0 (nothing of the runtime's is on a device).
absl::StatusOr<uint64_t> DeviceMemoryLimit(int device);

struct GpuStageTimes {
  int64_t host_to_device_ns = 0;  // device time of the frame's upload
  int64_t compute_ns = 0;         // the rest of the round trip: the twins and their read-backs
  int64_t device_to_host_ns = 0;
  uint64_t host_to_device_bytes = 0;  // bytes the frame's upload copied (counted where they are copied)
};

// One frame's outputs from the twins, in request order, and how many each twin gave: a
// metric with a sequence stage (vmaf) gives its per-frame outputs, which its stage turns
// into the answer, so the counts are not the metrics' OutputNames().
struct GpuFrameScores {
  FrameScores scores;
  std::vector<size_t> outputs_per_metric;
};

class GpuScorer {
 public:
  virtual ~GpuScorer() = default;
  // Scores one pair; the frames have the geometry given at creation. `previous_reference`
  // is the stream's previous reference (null for the first frame), read where a metric
  // reads it.
  virtual absl::StatusOr<GpuFrameScores> Score(const Frame& reference, const Frame& distorted,
                                               const Frame* previous_reference, GpuStageTimes* times) = 0;
};

struct GpuMetricRequest {
  std::string name;
  MetricOptions options;
};

// UNIMPLEMENTED when a metric has no CUDA twin or the twin cannot take this input
// (the caller falls back to the CPU); UNAVAILABLE / RESOURCE_EXHAUSTED / INTERNAL for
// device problems, with the CUDA call named.
absl::StatusOr<std::unique_ptr<GpuScorer>> CreateGpuScorer(int device, const FrameGeometry& geometry,
                                                           const std::vector<GpuMetricRequest>& metrics);

}  // namespace exactq

#endif  // EXACTQ_ENGINE_RUNTIME_GPU_SCORER_H_
