#include "engine/runtime/frame_scorer.h"

#include <algorithm>
#include <atomic>
#include <iterator>
#include <optional>

#include "absl/strings/str_cat.h"
#include "engine/metrics/registry.h"
#include "engine/runtime/device_fault.h"
#include "engine/runtime/global_device_pool.h"
#include "engine/runtime/runtime_config.h"

namespace exactq {

const std::string FrameScorer::kCpuDevice = "cpu";

const char* BackendName(Backend backend) { return backend == Backend::kCuda ? "cuda" : "cpu"; }

absl::StatusOr<std::unique_ptr<FrameScorer>> FrameScorer::Create(const FrameGeometry& geometry,
                                                                 const std::vector<MetricSpec>& metrics,
                                                                 BackendPreference preference,
                                                                 const GpuEnvironment& environment) {
  if (absl::Status s = ValidateGeometry(geometry); !s.ok()) return s;
  std::unique_ptr<FrameScorer> scorer(new FrameScorer());
  scorer->geometry_ = geometry;
  scorer->preference_ = preference;
  scorer->pool_ = environment.pool != nullptr ? environment.pool : &GlobalDevicePool();
  scorer->create_gpu_ = environment.create_scorer ? environment.create_scorer : GpuScorerFactory(CreateGpuScorer);
  for (const MetricSpec& m : metrics) scorer->gpu_requests_.push_back({m.name, m.options});
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
      return absl::Status(metric.status().code(), absl::StrCat("header.metrics[", i, "]: ", metric.status().message()));
    }
    if (absl::Status s = (*metric)->CheckInput(geometry); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("header.metrics[", i, "] (", spec.name, "): ", s.message()));
    }
    for (const std::string& output : (*metric)->OutputNames(geometry)) scorer->output_names_.push_back(output);
    scorer->identities_.push_back({(*metric)->name(), (*metric)->definition_version()});
    scorer->metrics_.push_back(std::move(*metric));
  }
  if (preference != BackendPreference::kCpu) {
    if (absl::Status s = scorer->PlaceOnGpu(); !s.ok()) {
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

bool CountsSplit(const FrameScores& scores, const std::vector<size_t>& counts, size_t metrics) {
  size_t total = 0;
  for (size_t count : counts) total += count;
  return counts.size() == metrics && total == scores.size();
}

const char* FallbackReason(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kUnimplemented:
      return "unsupported_input";
    case absl::StatusCode::kResourceExhausted:
      return "out_of_memory";
    case absl::StatusCode::kUnavailable:
      return "no_gpu";
    default:
      return "device_error";
  }
}

}  // namespace

absl::StatusOr<std::vector<FrameScores>> SplitByMetric(FrameScores scores,
                                                       const std::vector<size_t>& outputs_per_metric, size_t metrics) {
  if (!CountsSplit(scores, outputs_per_metric, metrics)) {
    return absl::InternalError(
        absl::StrCat("a frame's ", scores.size(), " outputs are not split among its ", metrics, " metrics"));
  }
  std::vector<FrameScores> parts;
  parts.reserve(outputs_per_metric.size());
  auto begin = std::make_move_iterator(scores.begin());
  for (size_t count : outputs_per_metric) {
    parts.emplace_back(begin, begin + static_cast<std::ptrdiff_t>(count));
    begin += static_cast<std::ptrdiff_t>(count);
  }
  return parts;
}

absl::Status FrameScorer::PlaceOnGpu() {
  std::optional<GpuDevice> device = pool_->NextDevice();
  if (!device.has_value()) {
    const absl::Status status = absl::UnavailableError(pool_->UnavailableReason());
    // Devices cooling down come back; lost ones never do (usable() tells them apart).
    may_return_to_gpu_ = pool_->configured() > 0 && !pool_->AllLost();
    fallback_reason_ = FallbackReason(status);
    fallback_detail_ = std::string(status.message());
    return status;
  }
  return PlaceOn(*device);
}

absl::Status FrameScorer::PlaceOn(const GpuDevice& device) {
  absl::Status status;
  if (GetRuntimeConfig().faults.fail_gpu_allocations) {
    status = absl::ResourceExhaustedError("injected fault: GPU allocation failed (--fault_injection)");
    may_return_to_gpu_ = false;
  } else {
    absl::StatusOr<std::unique_ptr<GpuScorer>> gpu = create_gpu_(device.index, geometry_, gpu_requests_);
    if (gpu.ok()) {
      gpu_ = std::move(*gpu);
      gpu_index_ = device.index;
      device_ = device;
      gpu_device_ = absl::StrCat("cuda:", device.index, " (", device.name, ")");
      fallback_reason_.clear();
      fallback_detail_.clear();
      return absl::OkStatus();
    }
    status = gpu.status();
    const DeviceFault fault = DeviceFaultOf(status);
    pool_->ReportFailure(device.index, fault, std::string(status.message()));
    // Unsupported input and memory limits do not change from frame to frame.
    may_return_to_gpu_ = fault != DeviceFault::kNone;
  }
  fallback_reason_ = FallbackReason(status);
  fallback_detail_ = std::string(status.message());
  return status;
}

absl::StatusOr<std::unique_ptr<FrameScorer>> FrameScorer::CreateSibling() const {
  std::unique_ptr<FrameScorer> sibling(new FrameScorer());
  sibling->geometry_ = geometry_;
  sibling->preference_ = preference_;
  sibling->pool_ = pool_;
  sibling->create_gpu_ = create_gpu_;
  sibling->gpu_requests_ = gpu_requests_;
  sibling->identities_ = identities_;
  sibling->output_names_ = output_names_;
  for (const GpuMetricRequest& m : gpu_requests_) {
    absl::StatusOr<std::unique_ptr<Metric>> metric = CreateMetric(m.name, m.options);
    if (!metric.ok()) return metric.status();  // Create accepted the same spec: not expected
    sibling->metrics_.push_back(std::move(*metric));
  }
  if (gpu_ == nullptr) {
    // On the CPU: the sibling answers with the same reason and may return the same way.
    sibling->may_return_to_gpu_ = may_return_to_gpu_;
    sibling->fallback_reason_ = fallback_reason_;
    sibling->fallback_detail_ = fallback_detail_;
    return sibling;
  }
  // The same device, not the pool's next one: a stream stays on one GPU, and the pool's
  // turn over the devices is not moved by a stream's frames in flight.
  if (pool_->IsLost(gpu_index_)) {
    return absl::UnavailableError(absl::StrCat(gpu_device_, " was taken out of the pool"));
  }
  if (absl::Status s = sibling->PlaceOn(device_); !s.ok()) return s;
  return sibling;
}

absl::StatusOr<GpuFrameScores> FrameScorer::ScoreOnGpu(const Frame& reference, const Frame& distorted,
                                                       const Frame* previous_reference, GpuStageTimes* times) {
  // Injected faults count GPU frames over the whole process, like a device that fails
  // after a while whichever stream is on it. A frame takes its number when it starts,
  // so that with frames in flight the ones past the limit are those started last.
  static std::atomic<int64_t> gpu_frames{0};
  const FaultInjection& faults = GetRuntimeConfig().faults;
  const bool injecting = faults.lose_gpu_after_frames >= 0 || faults.fail_gpu_after_frames >= 0;
  const int64_t frame_number = injecting ? gpu_frames.fetch_add(1) : 0;
  absl::StatusOr<GpuFrameScores> scores;
  if (faults.lose_gpu_after_frames >= 0 && frame_number >= faults.lose_gpu_after_frames) {
    scores =
        WithDeviceFault(absl::InternalError("injected fault: cudaErrorIllegalAddress, the device's context is poisoned "
                                            "(--fault_injection)"),
                        DeviceFault::kPoisoned);
  } else if (faults.fail_gpu_after_frames >= 0 && frame_number >= faults.fail_gpu_after_frames) {
    scores = WithDeviceFault(absl::InternalError("injected fault: device failure (--fault_injection)"),
                             DeviceFault::kTransient);
  } else {
    scores = gpu_->Score(reference, distorted, previous_reference, times);
  }
  if (scores.ok()) {
    pool_->ReportSuccess(gpu_index_);
  } else {
    pool_->ReportFailure(gpu_index_, DeviceFaultOf(scores.status()), std::string(scores.status().message()));
  }
  return scores;
}

void FrameScorer::LeaveGpu(const absl::Status& why) {
  fallback_reason_ = "device_error";
  fallback_detail_ = std::string(why.message());
  may_return_to_gpu_ = true;
  gpu_.reset();
  gpu_index_ = -1;
}

absl::StatusOr<ScoredFrame> FrameScorer::ScoreOnCpu(const Frame& reference, const Frame& distorted,
                                                    const Frame* previous_reference) {
  ScoredFrame scored;
  scored.backend = Backend::kCpu;
  scored.device = "cpu";
  if (preference_ == BackendPreference::kAuto) {
    scored.fallback_reason = fallback_reason_;
    scored.fallback_detail = fallback_detail_;
  }
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<const Frame*> ref = HostReadable(reference, &host_scratch_[0]);
  if (!ref.ok()) return ref.status();
  absl::StatusOr<const Frame*> dist = HostReadable(distorted, &host_scratch_[1]);
  if (!dist.ok()) return dist.status();
  const Frame* previous = nullptr;
  if (previous_reference != nullptr) {
    absl::StatusOr<const Frame*> host = HostReadable(*previous_reference, &host_scratch_[2]);
    if (!host.ok()) return host.status();
    previous = *host;
  }
  for (const std::unique_ptr<Metric>& metric : metrics_) {
    absl::StatusOr<FrameScores> scores = metric->ScoreInStream(**ref, **dist, previous);
    if (!scores.ok()) return scores.status();
    scored.outputs_per_metric.push_back(scores->size());
    scored.scores.insert(scored.scores.end(), scores->begin(), scores->end());
  }
  scored.durations.compute = std::chrono::steady_clock::now() - start;
  return scored;
}

std::vector<std::unique_ptr<SequenceStage>> FrameScorer::CreateSequenceStages() const {
  std::vector<std::unique_ptr<SequenceStage>> stages;
  for (const std::unique_ptr<Metric>& metric : metrics_) stages.push_back(metric->CreateSequenceStage());
  return stages;
}

bool FrameScorer::reads_previous_reference() const {
  for (const std::unique_ptr<Metric>& metric : metrics_) {
    if (metric->reads_previous_reference()) return true;
  }
  return false;
}

absl::StatusOr<ScoredFrame> FrameScorer::Score(const Frame& reference, const Frame& distorted) {
  absl::StatusOr<ScoredFrame> scored = ScoreInStream(reference, distorted, nullptr);
  if (!scored.ok()) return scored;
  std::vector<std::unique_ptr<SequenceStage>> stages = CreateSequenceStages();
  if (std::all_of(stages.begin(), stages.end(), [](const auto& stage) { return stage == nullptr; })) return scored;
  // A stream of one frame: each stage takes the frame and ends.
  absl::StatusOr<std::vector<FrameScores>> parts =
      SplitByMetric(std::move(scored->scores), scored->outputs_per_metric, stages.size());
  if (!parts.ok()) return parts.status();
  FrameScores final_scores;
  for (size_t m = 0; m < stages.size(); ++m) {
    FrameScores& part = (*parts)[m];
    if (stages[m] != nullptr) {
      std::vector<FrameScores> done = stages[m]->Push(std::move(part));
      std::vector<FrameScores> rest = stages[m]->Finish();
      done.insert(done.end(), rest.begin(), rest.end());
      if (done.size() != 1) {
        return absl::InternalError(
            absl::StrCat("metric ", identities_[m].name, " answered ", done.size(), " frames for a stream of one"));
      }
      part = std::move(done[0]);
    }
    scored->outputs_per_metric[m] = part.size();
    final_scores.insert(final_scores.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
  }
  scored->scores = std::move(final_scores);
  return scored;
}

absl::StatusOr<ScoredFrame> FrameScorer::ScoreInStream(const Frame& reference, const Frame& distorted,
                                                       const Frame* previous_reference) {
  if (!(reference.geometry() == geometry_) || !(distorted.geometry() == geometry_)) {
    return absl::InvalidArgumentError(absl::StrCat("frames must be ", GeometryDescription(geometry_)));
  }
  // A stream that left a GPU for a device problem goes back when the pool has one.
  if (gpu_ == nullptr && may_return_to_gpu_ && preference_ == BackendPreference::kAuto && pool_->usable() > 0) {
    PlaceOnGpu().IgnoreError();  // on failure the reason is recorded for the answer
  }
  // Another stream found this device poisoned: do not touch its context again.
  if (gpu_ != nullptr && pool_->IsLost(gpu_index_)) {
    const absl::Status lost =
        absl::UnavailableError(absl::StrCat(gpu_device_, " was taken out of the pool: ", pool_->UnavailableReason()));
    if (preference_ == BackendPreference::kCuda)
      return absl::UnavailableError(absl::StrCat("backend cuda: ", lost.message()));
    LeaveGpu(lost);
  }
  if (gpu_ != nullptr) {
    GpuStageTimes times;
    absl::StatusOr<GpuFrameScores> scores = ScoreOnGpu(reference, distorted, previous_reference, &times);
    if (scores.ok() && !CountsSplit(scores->scores, scores->outputs_per_metric, metrics_.size())) {
      scores =
          absl::InternalError(absl::StrCat("the GPU scorer's ", scores->scores.size(),
                                           " outputs are not split among the request's ", metrics_.size(), " metrics"));
    }
    if (scores.ok()) {
      ScoredFrame scored;
      scored.scores = std::move(scores->scores);
      scored.outputs_per_metric = std::move(scores->outputs_per_metric);
      scored.backend = Backend::kCuda;
      scored.device = gpu_device_;
      scored.durations.host_to_device = std::chrono::nanoseconds(times.host_to_device_ns);
      scored.durations.compute = std::chrono::nanoseconds(times.compute_ns);
      scored.durations.device_to_host = std::chrono::nanoseconds(times.device_to_host_ns);
      scored.host_to_device_bytes = times.host_to_device_bytes;
      return scored;
    }
    if (preference_ == BackendPreference::kCuda) {
      return absl::UnavailableError(
          absl::StrCat("backend cuda: ", gpu_device_, " failed: ", scores.status().message()));
    }
    // Auto: this frame and the next go to the CPU until the pool has a GPU again.
    LeaveGpu(scores.status());
  }
  return ScoreOnCpu(reference, distorted, previous_reference);
}

}  // namespace exactq
