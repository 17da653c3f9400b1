// The GpuScorer of a CUDA build: one CUDA stream per scorer, the metrics' twins on it.
#include <cuda_runtime_api.h>

#include <chrono>

#include "absl/strings/str_cat.h"
#include "engine/metrics/psnr/cuda/psnr_cuda.h"
#include "engine/metrics/psnr/psnr.h"
#include "engine/metrics/ssim/cuda/ssim_cuda.h"
#include "engine/metrics/ssim/ssim.h"
#include "engine/runtime/gpu_scorer.h"

namespace exactq {

namespace {

absl::Status FromCuda(cudaError_t error, const char* call) {
  if (error == cudaSuccess) return absl::OkStatus();
  const std::string message = absl::StrCat(call, ": ", cudaGetErrorName(error), " (", cudaGetErrorString(error), ")");
  if (error == cudaErrorMemoryAllocation) return absl::ResourceExhaustedError(message);
  if (error == cudaErrorNoDevice || error == cudaErrorInsufficientDriver) return absl::UnavailableError(message);
  return absl::InternalError(message);
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

// SsimCuda keeps its own streams on the device; one frame at a time here (the
// stream session holds one frame in flight).
class SsimGpuMetric final : public GpuMetric {
 public:
  explicit SsimGpuMetric(std::unique_ptr<ssim::SsimCuda> ssim) : ssim_(std::move(ssim)) {}
  absl::StatusOr<FrameScores> Score(const Frame& reference, const Frame& distorted) override {
    return ssim_->Score(reference, distorted);
  }

 private:
  std::unique_ptr<ssim::SsimCuda> ssim_;
};

class CudaGpuScorer final : public GpuScorer {
 public:
  CudaGpuScorer(int device, cudaStream_t stream) : device_(device), stream_(stream) {}
  ~CudaGpuScorer() override {
    metrics_.clear();  // the twins free their buffers before the stream goes
    cudaSetDevice(device_);
    cudaStreamDestroy(stream_);
  }

  absl::StatusOr<FrameScores> Score(const Frame& reference, const Frame& distorted, GpuStageTimes* times) override {
    if (absl::Status s = FromCuda(cudaSetDevice(device_), "cudaSetDevice"); !s.ok()) return s;
    const auto start = std::chrono::steady_clock::now();
    FrameScores all;
    for (const std::unique_ptr<GpuMetric>& metric : metrics_) {
      absl::StatusOr<FrameScores> scores = metric->Score(reference, distorted);
      if (!scores.ok()) return scores.status();
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
  (void)geometry;
  // Decide before touching the device whether every metric has a twin.
  for (const GpuMetricRequest& m : metrics) {
    if (m.name != "psnr" && m.name != "ssim") {
      return absl::UnimplementedError(absl::StrCat("metric ", m.name, " has no CUDA twin in this build"));
    }
  }
  if (absl::Status s = FromCuda(cudaSetDevice(device), "cudaSetDevice"); !s.ok()) return s;
  cudaStream_t stream = nullptr;
  if (absl::Status s = FromCuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
      !s.ok()) {
    return s;
  }
  auto scorer = std::make_unique<CudaGpuScorer>(device, stream);
  for (const GpuMetricRequest& m : metrics) {
    if (m.name == "psnr") {
      absl::StatusOr<PsnrOptions> options = ParsePsnrOptions(m.options);
      if (!options.ok()) return options.status();
      scorer->metrics_.push_back(std::make_unique<PsnrGpuMetric>(*options, stream));
    } else {
      absl::StatusOr<ssim::SsimOptions> options = ParseSsimOptions(m.options);
      if (!options.ok()) return options.status();
      ssim::SsimCudaOptions cuda_options;
      cuda_options.device = device;
      cuda_options.frames_in_flight = 1;
      cuda_options.outputs = *options;
      absl::StatusOr<std::unique_ptr<ssim::SsimCuda>> twin = ssim::SsimCuda::Create(cuda_options);
      if (!twin.ok()) return twin.status();
      scorer->metrics_.push_back(std::make_unique<SsimGpuMetric>(std::move(*twin)));
    }
  }
  return scorer;
}

}  // namespace exactq
