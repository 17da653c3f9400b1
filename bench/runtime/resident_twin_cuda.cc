#include <cuda_runtime_api.h>

#include <algorithm>
#include <vector>

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
    twins_.clear();
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
  absl::StatusOr<FrameScores> Score() override {
    size_t enqueued = 0;
    absl::Status failure;
    for (; enqueued < twins_.size(); ++enqueued) {
      failure = twins_[enqueued]->Enqueue(pair_, stream_);
      if (!failure.ok()) break;  // the twin that failed has nothing to collect
    }
    FrameScores all;
    for (size_t i = 0; i < enqueued; ++i) {
      absl::StatusOr<FrameScores> scores = twins_[i]->Collect();  // also after a failure: the pair is read
      if (!scores.ok()) {
        if (failure.ok()) failure = scores.status();
        continue;
      }
      all.insert(all.end(), scores->begin(), scores->end());
    }
    if (!failure.ok()) return failure;
    return all;
  }

  std::vector<std::unique_ptr<GpuMetric>> twins_;
  cudaStream_t stream_;
  DeviceFrameBuffer frame_;
  DeviceFramePair pair_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ResidentTwin>> CreateResidentTwin(int device, const std::vector<ResidentMetric>& metrics,
                                                                 const Frame& reference, const Frame& distorted) {
  std::vector<const GpuMetricFactory*> factories;
  int planes = 1;
  bool reads_previous_reference = false;
  for (const ResidentMetric& metric : metrics) {
    const GpuMetricFactory* factory = FindGpuMetricFactory(metric.name);
    if (factory == nullptr) return absl::UnimplementedError(absl::StrCat(metric.name, " has no CUDA twin"));
    factories.push_back(factory);
    planes = std::max(planes, factory->planes_read(reference.geometry(), metric.options));
    reads_previous_reference = reads_previous_reference || factory->reads_previous_reference;
  }
  if (cudaSetDevice(device) != cudaSuccess) return absl::UnavailableError("cudaSetDevice failed");
  cudaStream_t stream = nullptr;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
    return absl::UnavailableError("cudaStreamCreate failed");
  }
  auto resident = std::make_unique<CudaResidentTwin>(device, stream);
  absl::StatusOr<DeviceFramePair> pair = resident->frame_.Upload(reference, distorted, planes, stream);
  if (!pair.ok()) return pair.status();
  if (cudaStreamSynchronize(stream) != cudaSuccess) return absl::InternalError("upload failed");
  resident->pair_ = *pair;
  // A twin that reads the previous reference (vmaf's motion) gets the distorted luma in
  // its place: the same work as a stream's later frames, on resident pictures.
  if (reads_previous_reference) resident->pair_.previous_reference = pair->distorted;
  for (size_t i = 0; i < metrics.size(); ++i) {
    absl::StatusOr<std::unique_ptr<GpuMetric>> twin =
        factories[i]->create(device, reference.geometry(), metrics[i].options);
    if (!twin.ok()) return twin.status();
    resident->twins_.push_back(std::move(*twin));
  }
  return std::unique_ptr<ResidentTwin>(std::move(resident));
}

}  // namespace bench
}  // namespace exactq
