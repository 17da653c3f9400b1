// vmaf's GpuMetric: VmafCuda on the runtime's stream, over the request's device frame
// and the previous reference's luma; it answers the per-frame outputs, and VmafMetric's
// sequence stage (the same for both backends) turns them into vmaf.
#include <memory>

#include "engine/metrics/vmaf/cuda/vmaf_cuda.h"
#include "engine/metrics/vmaf/vmaf.h"

namespace exactq {
namespace vmaf {
namespace {

class VmafGpuMetric final : public GpuMetric {
 public:
  explicit VmafGpuMetric(std::unique_ptr<VmafCuda> twin) : twin_(std::move(twin)) {}
  absl::Status Enqueue(const DeviceFramePair& frame, GpuStreamHandle stream) override {
    return twin_->Enqueue(frame, static_cast<cudaStream_t>(stream));
  }
  absl::StatusOr<FrameScores> Collect() override {
    absl::StatusOr<VmafFeatures> features = twin_->CollectFeatures();
    if (!features.ok()) return features.status();
    return VmafPerFrameScores(*features);
  }

 private:
  std::unique_ptr<VmafCuda> twin_;
};

int PlanesRead(const FrameGeometry&, const MetricOptions&) { return 1; }

uint64_t DeviceBytes(const FrameGeometry& geometry, const MetricOptions&) { return VmafCuda::DeviceBytes(geometry); }

absl::StatusOr<std::unique_ptr<GpuMetric>> Create(int device, const FrameGeometry& geometry,
                                                  const MetricOptions& options) {
  // The CPU metric parses the options, so both backends accept and refuse the same ones.
  absl::StatusOr<std::unique_ptr<Metric>> metric = CreateVmafMetric(options);
  if (!metric.ok()) return metric.status();
  const VmafModelId model = static_cast<const VmafMetric&>(**metric).model();
  absl::StatusOr<std::unique_ptr<VmafCuda>> twin = VmafCuda::Create(device, geometry, model);
  if (!twin.ok()) return twin.status();
  return std::unique_ptr<GpuMetric>(new VmafGpuMetric(*std::move(twin)));
}

}  // namespace

const GpuMetricFactory& VmafGpuMetricFactory() {
  static const GpuMetricFactory factory{&PlanesRead, &DeviceBytes, &Create, /*reads_previous_reference=*/true};
  return factory;
}

}  // namespace vmaf
}  // namespace exactq
