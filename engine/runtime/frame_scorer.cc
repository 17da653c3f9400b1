#include "engine/runtime/frame_scorer.h"

#include "absl/strings/str_cat.h"
#include "engine/metrics/registry.h"

namespace exactq {

const char* BackendName(Backend backend) { return backend == Backend::kCuda ? "cuda" : "cpu"; }

absl::StatusOr<std::unique_ptr<FrameScorer>> FrameScorer::Create(const FrameGeometry& geometry,
                                                                 const std::vector<MetricSpec>& metrics,
                                                                 BackendPreference preference) {
  if (absl::Status s = ValidateGeometry(geometry); !s.ok()) return s;
  if (preference == BackendPreference::kCuda) {
    // The CUDA engine is not part of this build yet: a forced cuda never falls back.
    return absl::FailedPreconditionError(
        "backend cuda: no usable CUDA device in this server (the CUDA engine is not available); "
        "use backend auto or cpu");
  }
  std::unique_ptr<FrameScorer> scorer(new FrameScorer());
  scorer->geometry_ = geometry;
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
  return scorer;
}

absl::StatusOr<ScoredFrame> FrameScorer::Score(const Frame& reference, const Frame& distorted) {
  if (!(reference.geometry() == geometry_) || !(distorted.geometry() == geometry_)) {
    return absl::InvalidArgumentError(absl::StrCat("frames must be ", GeometryDescription(geometry_)));
  }
  ScoredFrame scored;
  scored.backend = Backend::kCpu;
  scored.device = "cpu";
  const auto start = std::chrono::steady_clock::now();
  for (const std::unique_ptr<Metric>& metric : metrics_) {
    absl::StatusOr<FrameScores> scores = metric->Score(reference, distorted);
    if (!scores.ok()) return scores.status();
    scored.scores.insert(scored.scores.end(), scores->begin(), scores->end());
  }
  scored.durations.compute = std::chrono::steady_clock::now() - start;
  return scored;
}

}  // namespace exactq
