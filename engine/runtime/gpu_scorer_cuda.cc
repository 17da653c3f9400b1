// The GpuScorer of a CUDA build: one CUDA stream per scorer, the metrics' twins on it.
#include <cuda_runtime_api.h>

#include <chrono>
#include <map>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "engine/metrics/cuda/page_locked.h"
#include "engine/metrics/psnr/cuda/psnr_cuda.h"
#include "engine/metrics/psnr/psnr.h"
#include "engine/metrics/ssim/cuda/ssim_cuda.h"
#include "engine/metrics/ssim/ssim.h"
#include "engine/metrics/ssimulacra2/cuda/ssimulacra2_cuda.h"
#include "engine/metrics/ssimulacra2/ssimulacra2.h"
#include "engine/runtime/device_fault.h"
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

// One metric's twin on the scorer's stream.
class GpuMetric {
 public:
  virtual ~GpuMetric() = default;
  virtual absl::StatusOr<FrameScores> Score(const Frame& reference, const Frame& distorted) = 0;
};

class PsnrGpuMetric final : public GpuMetric {
 public:
  PsnrGpuMetric(PsnrOptions options, cudaStream_t stream) : psnr_(options, stream) {}
  absl::StatusOr<FrameScores> Score(const Frame& reference, const Frame& distorted) override {
    return psnr_.Score(reference, distorted);
  }

 private:
  PsnrCuda psnr_;
};

// SsimCuda keeps its own streams on the device; one frame at a time here (each scorer
// of a stream's pipeline has its own twin).
class SsimGpuMetric final : public GpuMetric {
 public:
  explicit SsimGpuMetric(std::unique_ptr<ssim::SsimCuda> ssim) : ssim_(std::move(ssim)) {}
  absl::StatusOr<FrameScores> Score(const Frame& reference, const Frame& distorted) override {
    const size_t luma = reference.geometry().plane_bytes(0);
    // Page-locked luma planes go to the device as they are (the twin's Submit would
    // copy them into its staging first); the frames outlive the Collect below.
    if (reference.geometry() == distorted.geometry() && luma > 0 && ssim_->in_flight() == 0 &&
        gpu_host::IsPageLocked(reference.plane_bytes(0), luma) && gpu_host::IsPageLocked(distorted.plane_bytes(0), luma)) {
      if (absl::Status s = ssim_->SubmitLuma(reference.geometry(), reference.plane_bytes(0), distorted.plane_bytes(0));
          !s.ok()) {
        return s;
      }
      absl::StatusOr<ssim::SsimCudaFrame> frame = ssim_->Collect();
      if (!frame.ok()) return frame.status();
      return std::move(frame->scores);
    }
    return ssim_->Score(reference, distorted);
  }

 private:
  std::unique_ptr<ssim::SsimCuda> ssim_;
};

// Device memory admitted per GPU, so that streams never ask a device for more than the
// operator allowed (RuntimeConfig::max_device_bytes).
class DeviceAdmission {
 public:
  static DeviceAdmission& Get() {
    static DeviceAdmission admission;
    return admission;
  }
  absl::Status Reserve(int device, uint64_t bytes, uint64_t limit) {
    std::lock_guard<std::mutex> lock(mutex_);
    uint64_t& reserved = reserved_[device];
    if (bytes > limit || reserved > limit - bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "device memory: this stream needs about ", bytes, " bytes on cuda:", device, ", ", reserved,
          " are admitted already, limit max_device_bytes=", limit));
    }
    reserved += bytes;
    return absl::OkStatus();
  }
  void Release(int device, uint64_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    reserved_[device] -= bytes;
  }

 private:
  std::mutex mutex_;
  std::map<int, uint64_t> reserved_;
};

// What a stream's twins allocate on the device, from the geometry: psnr keeps both
// pictures; ssim both luma planes, one fp64 term per pixel and the ordered sum's
// workspace (about 530 bytes per 1024 terms), rounded up.
uint64_t EstimateDeviceBytes(const FrameGeometry& g, const std::vector<GpuMetricRequest>& metrics) {
  uint64_t bytes = 0;
  const uint64_t pixels = static_cast<uint64_t>(g.width) * static_cast<uint64_t>(g.height);
  for (const GpuMetricRequest& m : metrics) {
    if (m.name == "psnr") bytes += 2 * static_cast<uint64_t>(g.frame_bytes());
    if (m.name == "ssim") bytes += 2 * static_cast<uint64_t>(g.plane_bytes(0)) + 8 * pixels + pixels + (1u << 20);
    // The twin's own count (about 3.1 GB at 3840x2160: pyramids, 18 term planes, 108 sum
    // workspaces), plus room for the CUDA graph and the streams.
    if (m.name == "ssimulacra2") bytes += ssimulacra2::Ssimulacra2CudaDeviceBytes(g) + (16u << 20);
  }
  return bytes;
}

class Ssimulacra2GpuMetric final : public GpuMetric {
 public:
  explicit Ssimulacra2GpuMetric(std::unique_ptr<ssimulacra2::Ssimulacra2Cuda> twin) : twin_(std::move(twin)) {}
  absl::StatusOr<FrameScores> Score(const Frame& reference, const Frame& distorted) override {
    return twin_->Score(reference, distorted);
  }

 private:
  std::unique_ptr<ssimulacra2::Ssimulacra2Cuda> twin_;
};

class CudaGpuScorer final : public GpuScorer {
 public:
  CudaGpuScorer(int device, cudaStream_t stream, uint64_t admitted_bytes)
      : device_(device), stream_(stream), admitted_bytes_(admitted_bytes) {}
  ~CudaGpuScorer() override {
    metrics_.clear();  // the twins free their buffers before the stream goes
    cudaSetDevice(device_);
    cudaStreamDestroy(stream_);
    DeviceAdmission::Get().Release(device_, admitted_bytes_);
  }

  absl::StatusOr<FrameScores> Score(const Frame& reference, const Frame& distorted, GpuStageTimes* times) override {
    if (absl::Status s = FromCuda(cudaSetDevice(device_), "cudaSetDevice"); !s.ok()) return s;
    const auto start = std::chrono::steady_clock::now();
    FrameScores all;
    for (const std::unique_ptr<GpuMetric>& metric : metrics_) {
      absl::StatusOr<FrameScores> scores = metric->Score(reference, distorted);
      if (!scores.ok()) return ClassifyTwinFailure(device_, scores.status());
      all.insert(all.end(), scores->begin(), scores->end());
    }
    // The twins copy, compute and read back on one stream; their split is not timed
    // apart yet, so the whole device round trip is reported as compute.
    if (times != nullptr) {
      times->compute_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
                              .count();
    }
    for (NamedScore& s : all) s.value = CanonicalizeNan(s.value);
    return all;
  }

  std::vector<std::unique_ptr<GpuMetric>> metrics_;

 private:
  int device_;
  cudaStream_t stream_;
  uint64_t admitted_bytes_;
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

absl::StatusOr<uint64_t> GpuMemoryInUse(int device) {
  int current = 0;
  if (absl::Status s = FromCuda(cudaGetDevice(&current), "cudaGetDevice"); !s.ok()) return s;
  if (absl::Status s = FromCuda(cudaSetDevice(device), "cudaSetDevice"); !s.ok()) return s;
  size_t free_bytes = 0, total_bytes = 0;
  absl::Status s = FromCuda(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  cudaSetDevice(current);
  if (!s.ok()) return s;
  return static_cast<uint64_t>(total_bytes - free_bytes);
}

absl::StatusOr<std::unique_ptr<GpuScorer>> CreateGpuScorer(int device, const FrameGeometry& geometry,
                                                           const std::vector<GpuMetricRequest>& metrics) {
  // Decide before touching the device whether every metric has a twin.
  for (const GpuMetricRequest& m : metrics) {
    if (m.name != "psnr" && m.name != "ssim" && m.name != "ssimulacra2") {
      return absl::UnimplementedError(absl::StrCat("metric ", m.name, " has no CUDA twin in this build"));
    }
  }
  if (absl::Status s = FromCuda(cudaSetDevice(device), "cudaSetDevice"); !s.ok()) return s;
  uint64_t limit = GetRuntimeConfig().max_device_bytes;
  if (limit == 0) {
    size_t free_bytes = 0, total_bytes = 0;
    if (absl::Status s = FromCuda(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo"); !s.ok()) return s;
    limit = total_bytes / 10 * 9;
  }
  const uint64_t admitted = EstimateDeviceBytes(geometry, metrics);
  if (absl::Status s = DeviceAdmission::Get().Reserve(device, admitted, limit); !s.ok()) return s;
  cudaStream_t stream = nullptr;
  if (absl::Status s = FromCuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
      !s.ok()) {
    DeviceAdmission::Get().Release(device, admitted);
    return s;
  }
  auto scorer = std::make_unique<CudaGpuScorer>(device, stream, admitted);
  for (const GpuMetricRequest& m : metrics) {
    if (m.name == "psnr") {
      absl::StatusOr<PsnrOptions> options = ParsePsnrOptions(m.options);
      if (!options.ok()) return options.status();
      scorer->metrics_.push_back(std::make_unique<PsnrGpuMetric>(*options, stream));
    } else if (m.name == "ssimulacra2") {
      absl::StatusOr<Ssimulacra2Options> options = ParseSsimulacra2Options(m.options);
      if (!options.ok()) return options.status();
      ssimulacra2::Ssimulacra2CudaOptions cuda_options;
      cuda_options.device = device;
      cuda_options.yuv_matrix = options->yuv_matrix;
      absl::StatusOr<std::unique_ptr<ssimulacra2::Ssimulacra2Cuda>> twin =
          ssimulacra2::Ssimulacra2Cuda::Create(cuda_options);
      if (!twin.ok()) return ClassifyTwinFailure(device, twin.status());
      scorer->metrics_.push_back(std::make_unique<Ssimulacra2GpuMetric>(std::move(*twin)));
    } else {
      absl::StatusOr<ssim::SsimOptions> options = ParseSsimOptions(m.options);
      if (!options.ok()) return options.status();
      ssim::SsimCudaOptions cuda_options;
      cuda_options.device = device;
      cuda_options.frames_in_flight = 1;
      cuda_options.outputs = *options;
      absl::StatusOr<std::unique_ptr<ssim::SsimCuda>> twin = ssim::SsimCuda::Create(cuda_options);
      if (!twin.ok()) return ClassifyTwinFailure(device, twin.status());
      scorer->metrics_.push_back(std::make_unique<SsimGpuMetric>(std::move(*twin)));
    }
  }
  return scorer;
}

}  // namespace exactq
