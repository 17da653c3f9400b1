// ssim's GpuMetric: SsimCuda (one frame in flight) reading the luma planes of the
// request's device frame in place; its own stream waits for the frame's upload.
#include "engine/metrics/ssim/cuda/ssim_cuda.h"
#include "engine/metrics/ssim/ssim.h"

namespace exactq {
namespace ssim {
namespace {

class SsimGpuMetric final : public GpuMetric {
 public:
  explicit SsimGpuMetric(std::unique_ptr<SsimCuda> twin) : twin_(std::move(twin)) {}
  absl::Status Enqueue(const DeviceFramePair& frame, GpuStreamHandle) override { return twin_->SubmitDevice(frame); }
  absl::StatusOr<FrameScores> Collect() override {
    absl::StatusOr<SsimCudaFrame> frame = twin_->Collect();
    if (!frame.ok()) return frame.status();
    return std::move(frame->scores);
  }

 private:
  std::unique_ptr<SsimCuda> twin_;
};

int PlanesRead(const FrameGeometry&, const MetricOptions&) { return 1; }

uint64_t DeviceBytes(const FrameGeometry& geometry, const MetricOptions&) {
  return SsimCudaDeviceBytes(geometry) + (1u << 20);  // and the ordered sum's small buffers
}

absl::StatusOr<std::unique_ptr<GpuMetric>> Create(int device, const FrameGeometry&, const MetricOptions& options) {
  absl::StatusOr<SsimOptions> outputs = ParseSsimOptions(options);
  if (!outputs.ok()) return outputs.status();
  SsimCudaOptions cuda_options;
  cuda_options.device = device;
  cuda_options.frames_in_flight = 1;
  cuda_options.outputs = *outputs;
  absl::StatusOr<std::unique_ptr<SsimCuda>> twin = SsimCuda::Create(cuda_options);
  if (!twin.ok()) return twin.status();
  return std::unique_ptr<GpuMetric>(new SsimGpuMetric(std::move(*twin)));
}

}  // namespace

const GpuMetricFactory& SsimGpuMetricFactory() {
  static const GpuMetricFactory factory{&PlanesRead, &DeviceBytes, &Create};
  return factory;
}

}  // namespace ssim
}  // namespace exactq
