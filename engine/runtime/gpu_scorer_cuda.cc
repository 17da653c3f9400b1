// The GpuScorer of a CUDA build: one CUDA stream and one device frame per scorer, the
// request's twins (found in the metric registry, never by name here) reading it.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/metrics/gpu_metric.h"
#include "engine/metrics/registry.h"
#include "engine/platform/device_frame_buffer.h"
#include "engine/platform/host_wait_event.h"
#include "engine/runtime/device_fault.h"
#include "engine/runtime/device_memory_ledger.h"
#include "engine/runtime/gpu_scorer.h"
#include "engine/runtime/runtime_config.h"

namespace exactq {

namespace {

// CUDA's sticky errors: after one, every call in this process's context on the device
// fails the same way (CUDA programming guide, "Error Checking"), so the device cannot
// be used again until the process exits.
bool IsStickyCudaError(cudaError_t error) {
  switch (error) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorContextIsDestroyed:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorECCUncorrectable:
    case cudaErrorNvlinkUncorrectable:
    case cudaErrorExternalDevice:
    case cudaErrorDevicesUnavailable:
      return true;
    default:
      return false;
  }
}

DeviceFault FaultOfCudaError(cudaError_t error) {
  if (error == cudaSuccess || error == cudaErrorMemoryAllocation) return DeviceFault::kNone;
  return IsStickyCudaError(error) ? DeviceFault::kPoisoned : DeviceFault::kTransient;
}

absl::Status FromCuda(cudaError_t error, const char* call) {
  if (error == cudaSuccess) return absl::OkStatus();
  const std::string message = absl::StrCat(call, ": ", cudaGetErrorName(error), " (", cudaGetErrorString(error), ")");
  if (error == cudaErrorMemoryAllocation) return absl::ResourceExhaustedError(message);
  if (error == cudaErrorNoDevice || error == cudaErrorInsufficientDriver) {
    return WithDeviceFault(absl::UnavailableError(message), DeviceFault::kTransient);
  }
  return WithDeviceFault(absl::InternalError(message), FaultOfCudaError(error));
}

// A twin failed and reported it as text: find out what it means for the device. A
// sticky error shows again on the next call that waits for the device; anything else
// is cleared so it does not surface in an unrelated call later.
absl::Status ClassifyTwinFailure(int device, absl::Status status) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kFailedPrecondition:
      return status;  // the input, not the device
    default:
      break;
  }
  cudaSetDevice(device);
  const cudaError_t last = cudaGetLastError();
  // Device memory taken by others is not the device's fault (the fallback reason says
  // out_of_memory); the admission limit keeps our own streams from causing it.
  if (status.code() == absl::StatusCode::kResourceExhausted && !IsStickyCudaError(last)) return status;
  const cudaError_t sync = cudaDeviceSynchronize();
  const bool sticky = IsStickyCudaError(last) || IsStickyCudaError(sync);
  return WithDeviceFault(std::move(status), sticky ? DeviceFault::kPoisoned : DeviceFault::kTransient);
}

// A stream's twins on one device: the frame pair uploaded once into the scorer's device
// frame (on a copy stream of its own), then every metric enqueued on it before any is
// collected.
class CudaGpuScorer final : public GpuScorer {
 public:
  CudaGpuScorer(int device, cudaStream_t stream, cudaStream_t upload_stream, DeviceMemoryReservation admitted,
                int planes, bool reads_previous, bool fixed_addresses)
      : device_(device),
        stream_(stream),
        upload_stream_(upload_stream),
        admitted_(std::move(admitted)),
        planes_(planes),
        reads_previous_(reads_previous),
        frame_(device) {
    frame_.set_fixed_addresses(fixed_addresses);
  }
  ~CudaGpuScorer() override {
    metrics_.clear();  // the twins free their buffers before the stream goes
    cudaSetDevice(device_);
    cudaStreamSynchronize(stream_);
    cudaStreamSynchronize(upload_stream_);
    if (uploaded_ != nullptr) cudaEventDestroy(uploaded_);
    if (start_ != nullptr) cudaEventDestroy(start_);
    cudaStreamDestroy(upload_stream_);
    cudaStreamDestroy(stream_);
  }

  absl::Status Init() {
    if (absl::Status s = FromCuda(cudaEventCreate(&start_), "cudaEventCreate"); !s.ok()) return s;
    return FromCuda(CreateHostWaitEvent(&uploaded_, /*timing=*/true), "CreateHostWaitEvent");
  }

  absl::StatusOr<GpuFrameScores> Score(const Frame& reference, const Frame& distorted, const Frame* previous_reference,
                                       GpuStageTimes* times) override {
    if (absl::Status s = FromCuda(cudaSetDevice(device_), "cudaSetDevice"); !s.ok()) return s;
    const auto begin = std::chrono::steady_clock::now();
    // The copies and the events that time them go on a stream of their own: with the
    // timing event recorded on stream_ before the copies, a three-metric request took
    // 1.14x its metrics' time on resident frames, on the copy stream 1.005x (why was not
    // found: bench/results/runtime.md). The previous frame's readers are collected, so
    // nothing else is waited for; stream_ and the twins' streams wait for the upload.
    if (absl::Status s = FromCuda(cudaEventRecord(start_, upload_stream_), "cudaEventRecord"); !s.ok()) return s;
    const uint64_t bytes_before = frame_.uploaded_bytes();
    absl::StatusOr<DeviceFramePair> pair =
        frame_.Upload(reference, distorted, planes_, upload_stream_, reads_previous_ ? previous_reference : nullptr);
    if (!pair.ok()) return ClassifyTwinFailure(device_, pair.status());
    if (absl::Status s = FromCuda(cudaEventRecord(uploaded_, upload_stream_), "cudaEventRecord"); !s.ok()) return s;
    if (absl::Status s = FromCuda(cudaStreamWaitEvent(stream_, uploaded_, 0), "cudaStreamWaitEvent"); !s.ok()) {
      return s;
    }
    // Every twin starts before any is waited for, so one frame's metrics share the device.
    size_t enqueued = 0;
    absl::Status failure;
    for (; enqueued < metrics_.size(); ++enqueued) {
      failure = metrics_[enqueued]->Enqueue(*pair, stream_);
      if (!failure.ok()) break;
    }
    GpuFrameScores all;
    for (size_t i = 0; i < enqueued; ++i) {
      absl::StatusOr<FrameScores> scores = metrics_[i]->Collect();  // also after a failure: the frame is read
      if (!scores.ok()) {
        if (failure.ok()) failure = scores.status();
        continue;
      }
      all.outputs_per_metric.push_back(scores->size());
      all.scores.insert(all.scores.end(), scores->begin(), scores->end());
    }
    if (!failure.ok()) return ClassifyTwinFailure(device_, failure);
    if (times != nullptr) {
      float upload_ms = 0.0f;
      // The twins waited for the upload, not always for this marker after it.
      if (cudaEventSynchronize(uploaded_) == cudaSuccess) cudaEventElapsedTime(&upload_ms, start_, uploaded_);
      const int64_t total_ns =
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - begin).count();
      times->host_to_device_ns = std::min<int64_t>(total_ns, static_cast<int64_t>(upload_ms * 1e6));
      times->compute_ns = total_ns - times->host_to_device_ns;  // the twins' kernels and read-backs
      times->host_to_device_bytes = frame_.uploaded_bytes() - bytes_before;
    }
    for (NamedScore& s : all.scores) s.value = CanonicalizeNan(s.value);
    return all;
  }

  std::vector<std::unique_ptr<GpuMetric>> metrics_;

 private:
  int device_;
  cudaStream_t stream_;               // the twins' work on the frame (those that take a stream)
  cudaStream_t upload_stream_;        // the frame's copies to the device, and only those
  DeviceMemoryReservation admitted_;  // given back after the twins and the stream are gone
  int planes_;                        // leading planes the request's twins read
  bool reads_previous_;               // a twin reads the previous reference's first plane
  DeviceFrameBuffer frame_;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t uploaded_ = nullptr;
};

}  // namespace

absl::StatusOr<std::vector<GpuDevice>> ListGpuDevices() {
  int count = 0;
  if (absl::Status s = FromCuda(cudaGetDeviceCount(&count), "cudaGetDeviceCount"); !s.ok()) {
    return absl::UnavailableError(absl::StrCat("no usable GPU: ", s.message()));
  }
  if (count == 0) return absl::UnavailableError("no usable GPU: no CUDA device is visible");
  std::vector<GpuDevice> devices;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop;
    if (absl::Status s = FromCuda(cudaGetDeviceProperties(&prop, i), "cudaGetDeviceProperties"); !s.ok()) return s;
    devices.push_back({i, prop.name, absl::StrCat(prop.major, ".", prop.minor), prop.totalGlobalMem});
  }
  return devices;
}

absl::Status ApplyGpuWait(GpuWait wait) {
  // Events wait as the streams do (yield has no event form: those block).
  SetHostWaitsBlock(wait != GpuWait::kSpin);
  unsigned int flags = cudaDeviceScheduleSpin;
  if (wait == GpuWait::kYield) flags = cudaDeviceScheduleYield;
  if (wait == GpuWait::kBlock) flags = cudaDeviceScheduleBlockingSync;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return absl::OkStatus();  // no usable GPU: nothing waits for one
  }
  // Only the GPUs the runtime may use: setting a device starts its context.
  std::vector<int> devices;
  const std::optional<std::vector<int>>& configured = GetRuntimeConfig().gpus;
  for (int i = 0; i < count; ++i) {
    if (!configured.has_value() || std::find(configured->begin(), configured->end(), i) != configured->end()) {
      devices.push_back(i);
    }
  }
  if (devices.empty()) return absl::OkStatus();
  int current = 0;
  if (absl::Status s = FromCuda(cudaGetDevice(&current), "cudaGetDevice"); !s.ok()) return s;
  for (int i : devices) {
    if (absl::Status s = FromCuda(cudaSetDevice(i), "cudaSetDevice"); !s.ok()) return s;
    if (absl::Status s = FromCuda(cudaSetDeviceFlags(flags), "cudaSetDeviceFlags"); !s.ok()) return s;
  }
  return FromCuda(cudaSetDevice(current), "cudaSetDevice");
}

namespace {

// cudaMemGetInfo of `device`, the calling thread's current device left as it was.
absl::Status DeviceMemoryInfo(int device, size_t* free_bytes, size_t* total_bytes) {
  int current = 0;
  if (absl::Status s = FromCuda(cudaGetDevice(&current), "cudaGetDevice"); !s.ok()) return s;
  if (absl::Status s = FromCuda(cudaSetDevice(device), "cudaSetDevice"); !s.ok()) return s;
  absl::Status s = FromCuda(cudaMemGetInfo(free_bytes, total_bytes), "cudaMemGetInfo");
  cudaSetDevice(current);
  return s;
}

}  // namespace

absl::StatusOr<uint64_t> GpuMemoryInUse(int device) {
  size_t free_bytes = 0, total_bytes = 0;
  if (absl::Status s = DeviceMemoryInfo(device, &free_bytes, &total_bytes); !s.ok()) return s;
  return static_cast<uint64_t>(total_bytes - free_bytes);
}

absl::StatusOr<uint64_t> DeviceMemoryLimit(int device) {
  if (const uint64_t limit = GetRuntimeConfig().max_device_bytes; limit != 0) return limit;
  size_t free_bytes = 0, total_bytes = 0;
  if (absl::Status s = DeviceMemoryInfo(device, &free_bytes, &total_bytes); !s.ok()) return s;
  return static_cast<uint64_t>(total_bytes) / 10 * 9;
}

absl::StatusOr<std::unique_ptr<GpuScorer>> CreateGpuScorer(int device, const FrameGeometry& geometry,
                                                           const std::vector<GpuMetricRequest>& metrics) {
  // Decide before touching the device whether every metric has a twin.
  std::vector<const GpuMetricFactory*> factories;
  int planes = 1;
  bool reads_previous = false;
  bool fixed_addresses = false;
  uint64_t admitted = 0;
  for (const GpuMetricRequest& m : metrics) {
    const GpuMetricFactory* factory = FindGpuMetricFactory(m.name);
    if (factory == nullptr) {
      return absl::UnimplementedError(absl::StrCat("metric ", m.name, " has no CUDA twin in this build"));
    }
    factories.push_back(factory);
    planes = std::max(planes, factory->planes_read(geometry, m.options));
    reads_previous = reads_previous || factory->reads_previous_reference;
    fixed_addresses = fixed_addresses || factory->wants_fixed_addresses;
    admitted += factory->device_bytes(geometry, m.options);
  }
  admitted += DeviceFrameBuffer::DeviceBytes(geometry, planes, reads_previous);
  if (absl::Status s = FromCuda(cudaSetDevice(device), "cudaSetDevice"); !s.ok()) return s;
  absl::StatusOr<uint64_t> limit = DeviceMemoryLimit(device);
  if (!limit.ok()) return limit.status();
  absl::StatusOr<DeviceMemoryReservation> reservation =
      ReserveDeviceMemoryWithin(device, admitted, *limit, "this stream's scorer");
  if (!reservation.ok()) return reservation.status();
  cudaStream_t stream = nullptr;
  if (absl::Status s = FromCuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
      !s.ok()) {
    return s;
  }
  cudaStream_t upload_stream = nullptr;
  if (absl::Status s = FromCuda(cudaStreamCreateWithFlags(&upload_stream, cudaStreamNonBlocking), "cudaStreamCreate");
      !s.ok()) {
    cudaStreamDestroy(stream);
    return s;
  }
  auto scorer = std::make_unique<CudaGpuScorer>(device, stream, upload_stream, *std::move(reservation), planes,
                                                reads_previous, fixed_addresses);
  if (absl::Status s = scorer->Init(); !s.ok()) return s;
  for (size_t i = 0; i < metrics.size(); ++i) {
    absl::StatusOr<std::unique_ptr<GpuMetric>> twin = factories[i]->create(device, geometry, metrics[i].options);
    if (!twin.ok()) return ClassifyTwinFailure(device, twin.status());
    scorer->metrics_.push_back(std::move(*twin));
  }
  return scorer;
}

}  // namespace exactq
