// ssimulacra2's GpuMetric: Ssimulacra2Cuda reading every plane of the request's device
// frame in place; its streams wait for the frame's upload.
#include "engine/metrics/ssimulacra2/cuda/ssimulacra2_cuda.h"
#include "engine/metrics/ssimulacra2/ssimulacra2.h"

namespace exactq {
namespace ssimulacra2 {
namespace {

class Ssimulacra2GpuMetric final : public GpuMetric {
 public:
  explicit Ssimulacra2GpuMetric(std::unique_ptr<Ssimulacra2Cuda> twin) : twin_(std::move(twin)) {}
  absl::Status Enqueue(const DeviceFramePair& frame, GpuStreamHandle) override { return twin_->EnqueueDevice(frame); }
  absl::StatusOr<FrameScores> Collect() override { return twin_->Collect(); }

 private:
  std::unique_ptr<Ssimulacra2Cuda> twin_;
};

int PlanesRead(const FrameGeometry& geometry, const MetricOptions&) { return geometry.plane_count(); }

// The twin's own count (about 3.1 GB at 3840x2160: pyramids, 18 term planes, 108 sum
// workspaces), plus room for the CUDA graphs and the streams.
uint64_t DeviceBytes(const FrameGeometry& geometry, const MetricOptions&) {
  return Ssimulacra2CudaDeviceBytes(geometry, /*own_frames=*/false) + (16u << 20);
}

absl::StatusOr<std::unique_ptr<GpuMetric>> Create(int device, const FrameGeometry&, const MetricOptions& options) {
  absl::StatusOr<Ssimulacra2Options> parsed = ParseSsimulacra2Options(options);
  if (!parsed.ok()) return parsed.status();
  Ssimulacra2CudaOptions cuda_options;
  cuda_options.device = device;
  cuda_options.yuv_matrix = parsed->yuv_matrix;
  absl::StatusOr<std::unique_ptr<Ssimulacra2Cuda>> twin = Ssimulacra2Cuda::Create(cuda_options);
  if (!twin.ok()) return twin.status();
  return std::unique_ptr<GpuMetric>(new Ssimulacra2GpuMetric(std::move(*twin)));
}

}  // namespace

const GpuMetricFactory& Ssimulacra2GpuMetricFactory() {
  static const GpuMetricFactory factory{&PlanesRead, &DeviceBytes, &Create, /*reads_previous_reference=*/false,
                                        /*wants_fixed_addresses=*/true};
  return factory;
}

}  // namespace ssimulacra2
}  // namespace exactq
