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
  CudaResidentTwin(int device, cudaStream_t stream, PairUpload upload, const Frame& reference, const Frame& distorted)
      : stream_(stream), upload_(upload), reference_(reference), distorted_(distorted), frame_(device) {}
  ~CudaResidentTwin() override {
    twins_.clear();
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
    if (upload_stream_ != nullptr) {
      cudaStreamSynchronize(upload_stream_);
      cudaStreamDestroy(upload_stream_);
    }
    if (uploaded_ != nullptr) cudaEventDestroy(uploaded_);
    if (copied_ != nullptr) cudaEventDestroy(copied_);
    cudaFree(ahead_);
  }

  // The second device pair and its stream, for PairUpload::kAhead.
  absl::Status MakeAhead() {
    if (cudaStreamCreateWithFlags(&upload_stream_, cudaStreamNonBlocking) != cudaSuccess ||
        cudaEventCreateWithFlags(&uploaded_, cudaEventDisableTiming) != cudaSuccess ||
        cudaEventCreateWithFlags(&copied_, cudaEventDisableTiming) != cudaSuccess ||
        cudaMalloc(reinterpret_cast<void**>(&ahead_), 2 * bytes_) != cudaSuccess) {
      return absl::ResourceExhaustedError("upload ahead: stream, events or device pair");
    }
    return absl::OkStatus();
  }

  absl::Status UploadAhead() {
    if (cudaMemcpyAsync(ahead_, reference_.bytes(), bytes_, cudaMemcpyHostToDevice, upload_stream_) != cudaSuccess ||
        cudaMemcpyAsync(ahead_ + bytes_, distorted_.bytes(), bytes_, cudaMemcpyHostToDevice, upload_stream_) !=
            cudaSuccess ||
        cudaEventRecord(uploaded_, upload_stream_) != cudaSuccess) {
      return absl::InternalError("upload ahead: copy");
    }
    ahead_pending_ = true;
    return absl::OkStatus();
  }

  // The frame's pair: where it already is, copied before the kernels, or moved from the
  // pair uploaded during the previous frame (whose successor's copy starts now).
  absl::Status PreparePair() {
    if (upload_ == PairUpload::kOnce) return absl::OkStatus();
    if (upload_ == PairUpload::kEachFrame) {
      absl::StatusOr<DeviceFramePair> pair = frame_.Upload(reference_, distorted_, pair_.planes, stream_);
      if (!pair.ok()) return pair.status();
      const bool reads_previous = pair_.previous_reference != nullptr;
      pair_ = *pair;
      if (reads_previous) pair_.previous_reference = pair_.distorted;
      return absl::OkStatus();
    }
    if (!ahead_pending_) {
      if (absl::Status s = UploadAhead(); !s.ok()) return s;
    }
    uint8_t* const reference = const_cast<uint8_t*>(pair_.reference);
    uint8_t* const distorted = const_cast<uint8_t*>(pair_.distorted);
    if (cudaStreamWaitEvent(stream_, uploaded_, 0) != cudaSuccess ||
        cudaMemcpyAsync(reference, ahead_, bytes_, cudaMemcpyDeviceToDevice, stream_) != cudaSuccess ||
        cudaMemcpyAsync(distorted, ahead_ + bytes_, bytes_, cudaMemcpyDeviceToDevice, stream_) != cudaSuccess ||
        cudaEventRecord(copied_, stream_) != cudaSuccess ||
        cudaStreamWaitEvent(upload_stream_, copied_, 0) != cudaSuccess) {
      return absl::InternalError("upload ahead: device copy");
    }
    pair_.ready = copied_;
    return UploadAhead();
  }

  absl::StatusOr<FrameScores> Score() override {
    if (absl::Status s = PreparePair(); !s.ok()) return s;
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
  PairUpload upload_;
  const Frame& reference_;
  const Frame& distorted_;
  DeviceFrameBuffer frame_;
  DeviceFramePair pair_;
  size_t bytes_ = 0;  // of each picture's planes the twins read
  cudaStream_t upload_stream_ = nullptr;
  cudaEvent_t uploaded_ = nullptr;
  cudaEvent_t copied_ = nullptr;
  uint8_t* ahead_ = nullptr;  // kAhead: the next frame's pair, reference then distorted
  bool ahead_pending_ = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ResidentTwin>> CreateResidentTwin(int device, const std::vector<ResidentMetric>& metrics,
                                                                 const Frame& reference, const Frame& distorted,
                                                                 PairUpload upload) {
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
  auto resident = std::make_unique<CudaResidentTwin>(device, stream, upload, reference, distorted);
  absl::StatusOr<DeviceFramePair> pair = resident->frame_.Upload(reference, distorted, planes, stream);
  if (!pair.ok()) return pair.status();
  if (cudaStreamSynchronize(stream) != cudaSuccess) return absl::InternalError("upload failed");
  resident->pair_ = *pair;
  resident->bytes_ = reference.geometry().plane_offset(planes);  // the planes lead the picture
  if (upload == PairUpload::kAhead) {
    if (absl::Status s = resident->MakeAhead(); !s.ok()) return s;
  }
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
