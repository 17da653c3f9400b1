// psnr's GpuMetric: PsnrCuda on the runtime's stream, over the request's device frame.
#include "engine/metrics/psnr/cuda/psnr_cuda.h"

#include "engine/platform/cuda_status.h"

namespace exactq {
namespace {

class PsnrGpuMetric final : public GpuMetric {
 public:
  explicit PsnrGpuMetric(const PsnrOptions& options) : twin_(options) {}
  absl::Status Enqueue(const DeviceFramePair& frame, GpuStreamHandle stream) override {
    return twin_.EnqueueSse(frame, static_cast<cudaStream_t>(stream));
  }
  absl::StatusOr<FrameScores> Collect() override { return twin_.Collect(); }

 private:
  PsnrCuda twin_;
};

int PlanesRead(const FrameGeometry& geometry, const MetricOptions& options) {
  absl::StatusOr<PsnrOptions> parsed = ParsePsnrOptions(options);
  return parsed.ok() ? PsnrScoredPlanes(*parsed, geometry) : geometry.plane_count();
}

// Three counters on the device; the pictures are the device frame's.
uint64_t DeviceBytes(const FrameGeometry&, const MetricOptions&) { return 4096; }

absl::StatusOr<std::unique_ptr<GpuMetric>> Create(int device, const FrameGeometry&, const MetricOptions& options) {
  absl::StatusOr<PsnrOptions> parsed = ParsePsnrOptions(options);
  if (!parsed.ok()) return parsed.status();
  EXACTQ_RETURN_IF_CUDA_ERROR("PsnrCuda", cudaSetDevice(device));
  return std::unique_ptr<GpuMetric>(new PsnrGpuMetric(*parsed));
}

}  // namespace

const GpuMetricFactory& PsnrGpuMetricFactory() {
  static const GpuMetricFactory factory{&PlanesRead, &DeviceBytes, &Create};
  return factory;
}

}  // namespace exactq
