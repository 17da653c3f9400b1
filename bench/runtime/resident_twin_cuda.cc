#include <cuda_runtime_api.h>

#include "absl/strings/str_cat.h"
#include "bench/runtime/resident_twin.h"
#include "engine/metrics/gpu_metric.h"
#include "engine/metrics/registry.h"
#include "engine/platform/device_frame_buffer.h"

namespace exactq {
namespace bench {
namespace {

class CudaResidentTwin final : public ResidentTwin {
 public:
  CudaResidentTwin(int device, cudaStream_t stream) : stream_(stream), frame_(device) {}
  ~CudaResidentTwin() override {
    twin_.reset();
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
  absl::StatusOr<FrameScores> Score() override {
    if (absl::Status s = twin_->Enqueue(pair_, stream_); !s.ok()) return s;
    return twin_->Collect();
  }

  std::unique_ptr<GpuMetric> twin_;
  cudaStream_t stream_;
  DeviceFrameBuffer frame_;
  DeviceFramePair pair_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ResidentTwin>> CreateResidentTwin(int device, const std::string& metric,
                                                                 const MetricOptions& options, const Frame& reference,
                                                                 const Frame& distorted) {
  const GpuMetricFactory* factory = FindGpuMetricFactory(metric);
  if (factory == nullptr) return absl::UnimplementedError(absl::StrCat(metric, " has no CUDA twin"));
  if (cudaSetDevice(device) != cudaSuccess) return absl::UnavailableError("cudaSetDevice failed");
  cudaStream_t stream = nullptr;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
    return absl::UnavailableError("cudaStreamCreate failed");
  }
  auto resident = std::make_unique<CudaResidentTwin>(device, stream);
  absl::StatusOr<DeviceFramePair> pair =
      resident->frame_.Upload(reference, distorted, factory->planes_read(reference.geometry(), options), stream);
  if (!pair.ok()) return pair.status();
  if (cudaStreamSynchronize(stream) != cudaSuccess) return absl::InternalError("upload failed");
  resident->pair_ = *pair;
  // A twin that reads the previous reference (vmaf's motion) gets the distorted luma in
  // its place: the same work as a stream's later frames, on resident pictures.
  if (factory->reads_previous_reference) resident->pair_.previous_reference = pair->distorted;
  absl::StatusOr<std::unique_ptr<GpuMetric>> twin = factory->create(device, reference.geometry(), options);
  if (!twin.ok()) return twin.status();
  resident->twin_ = std::move(*twin);
  return std::unique_ptr<ResidentTwin>(std::move(resident));
}

}  // namespace bench
}  // namespace exactq
