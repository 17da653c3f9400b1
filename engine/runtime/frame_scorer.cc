#include "engine/runtime/frame_scorer.h"

#include <algorithm>
#include <atomic>

#include "absl/strings/str_cat.h"
#include "engine/metrics/registry.h"
#include "engine/runtime/runtime_config.h"

namespace exactq {

const std::string FrameScorer::kCpuDevice = "cpu";

const char* BackendName(Backend backend) { return backend == Backend::kCuda ? "cuda" : "cpu"; }

absl::StatusOr<std::unique_ptr<FrameScorer>> FrameScorer::Create(const FrameGeometry& geometry,
                                                                 const std::vector<MetricSpec>& metrics,
                                                                 BackendPreference preference) {
  if (absl::Status s = ValidateGeometry(geometry); !s.ok()) return s;
  std::unique_ptr<FrameScorer> scorer(new FrameScorer());
  scorer->geometry_ = geometry;
  scorer->preference_ = preference;
  for (size_t i = 0; i < metrics.size(); ++i) {
    const MetricSpec& spec = metrics[i];
    for (size_t j = 0; j < i; ++j) {
      if (metrics[j].name == spec.name) {
        return absl::InvalidArgumentError(
            absl::StrCat("header.metrics[", i, "].name: metric ", spec.name, " is requested twice"));
      }
    }
    absl::StatusOr<std::unique_ptr<Metric>> metric = CreateMetric(spec.name, spec.options);
    if (!metric.ok()) {
      return absl::Status(metric.status().code(),
                          absl::StrCat("header.metrics[", i, "]: ", metric.status().message()));
    }
    if (absl::Status s = (*metric)->CheckInput(geometry); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("header.metrics[", i, "] (", spec.name, "): ", s.message()));
    }
    for (const std::string& output : (*metric)->OutputNames(geometry)) scorer->output_names_.push_back(output);
    scorer->identities_.push_back({(*metric)->name(), (*metric)->definition_version()});
    scorer->metrics_.push_back(std::move(*metric));
  }
  if (preference != BackendPreference::kCpu) {
    if (absl::Status s = scorer->PlaceOnGpu(metrics); !s.ok()) {
      if (preference == BackendPreference::kCuda) {
        // Over a limit stays RESOURCE_EXHAUSTED (naming the limit); anything else means no
        // usable GPU for this input.
        const absl::StatusCode code = s.code() == absl::StatusCode::kResourceExhausted
                                          ? absl::StatusCode::kResourceExhausted
                                          : absl::StatusCode::kFailedPrecondition;
        return absl::Status(code, absl::StrCat("backend cuda: ", s.message(), "; use backend auto or cpu"));
      }
    }
  }
  return scorer;
}

namespace {

const char* FallbackReason(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kUnimplemented: return "unsupported_input";
    case absl::StatusCode::kResourceExhausted: return "out_of_memory";
    case absl::StatusCode::kUnavailable: return "no_gpu";
    default: return "device_error";
  }
}

}  // namespace

absl::Status FrameScorer::PlaceOnGpu(const std::vector<MetricSpec>& metrics) {
  const RuntimeConfig& config = GetRuntimeConfig();
  absl::StatusOr<std::vector<GpuDevice>> devices = ListGpuDevices();
  if (devices.ok() && config.gpus.has_value()) {
    std::vector<GpuDevice> allowed;
    for (const GpuDevice& d : *devices) {
      if (std::find(config.gpus->begin(), config.gpus->end(), d.index) != config.gpus->end()) allowed.push_back(d);
    }
    if (allowed.empty()) devices = absl::UnavailableError("no usable GPU: --gpus excludes every visible device");
    else devices = std::move(allowed);
  }
  absl::Status status = devices.status();
  if (devices.ok() && config.faults.fail_gpu_allocations) {
    status = absl::ResourceExhaustedError("injected fault: GPU allocation failed (--fault_injection)");
  } else if (devices.ok()) {
    // Streams spread over the GPUs in turn.
    static std::atomic<unsigned> next_device{0};
    const GpuDevice& device = (*devices)[next_device.fetch_add(1) % devices->size()];
    std::vector<GpuMetricRequest> requests;
    for (const MetricSpec& m : metrics) requests.push_back({m.name, m.options});
    absl::StatusOr<std::unique_ptr<GpuScorer>> gpu = CreateGpuScorer(device.index, geometry_, requests);
    if (gpu.ok()) {
      gpu_ = std::move(*gpu);
      gpu_device_ = absl::StrCat("cuda:", device.index, " (", device.name, ")");
      return absl::OkStatus();
    }
    status = gpu.status();
  }
  fallback_reason_ = FallbackReason(status);
  fallback_detail_ = std::string(status.message());
  return status;
}

absl::StatusOr<ScoredFrame> FrameScorer::ScoreOnCpu(const Frame& reference, const Frame& distorted) {
  ScoredFrame scored;
  scored.backend = Backend::kCpu;
  scored.device = "cpu";
  if (preference_ == BackendPreference::kAuto) {
    scored.fallback_reason = fallback_reason_;
    scored.fallback_detail = fallback_detail_;
  }
  const auto start = std::chrono::steady_clock::now();
  for (const std::unique_ptr<Metric>& metric : metrics_) {
    absl::StatusOr<FrameScores> scores = metric->Score(reference, distorted);
    if (!scores.ok()) return scores.status();
    scored.scores.insert(scored.scores.end(), scores->begin(), scores->end());
  }
  scored.durations.compute = std::chrono::steady_clock::now() - start;
  return scored;
}

absl::StatusOr<ScoredFrame> FrameScorer::Score(const Frame& reference, const Frame& distorted) {
  if (!(reference.geometry() == geometry_) || !(distorted.geometry() == geometry_)) {
    return absl::InvalidArgumentError(absl::StrCat("frames must be ", GeometryDescription(geometry_)));
  }
  if (gpu_ != nullptr) {
    GpuStageTimes times;
    static std::atomic<int64_t> gpu_frames{0};
    const int fail_after = GetRuntimeConfig().faults.fail_gpu_after_frames;
    absl::StatusOr<FrameScores> scores =
        fail_after >= 0 && gpu_frames.load() >= fail_after
            ? absl::StatusOr<FrameScores>(absl::InternalError("injected fault: device failure (--fault_injection)"))
            : gpu_->Score(reference, distorted, &times);
    if (scores.ok()) gpu_frames.fetch_add(1);
    if (scores.ok()) {
      ScoredFrame scored;
      scored.scores = std::move(*scores);
      scored.backend = Backend::kCuda;
      scored.device = gpu_device_;
      scored.durations.host_to_device = std::chrono::nanoseconds(times.host_to_device_ns);
      scored.durations.compute = std::chrono::nanoseconds(times.compute_ns);
      scored.durations.device_to_host = std::chrono::nanoseconds(times.device_to_host_ns);
      return scored;
    }
    if (preference_ == BackendPreference::kCuda) {
      return absl::UnavailableError(absl::StrCat("backend cuda: ", gpu_device_, " failed: ", scores.status().message()));
    }
    // Auto: this stream leaves the GPU; this frame and the rest go to the CPU.
    fallback_reason_ = FallbackReason(scores.status());
    if (fallback_reason_ == "no_gpu" || fallback_reason_ == "unsupported_input") fallback_reason_ = "device_error";
    fallback_detail_ = std::string(scores.status().message());
    gpu_.reset();
  }
  return ScoreOnCpu(reference, distorted);
}

}  // namespace exactq
