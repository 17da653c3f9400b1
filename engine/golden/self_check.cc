#include "engine/golden/self_check.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "engine/metrics/registry.h"
#include "engine/runtime/gpu_scorer.h"

namespace exactq::golden {

int DefinitionVersion(const std::string& metric) {
  for (const MetricInfo& info : ListMetrics()) {
    if (info.name == metric) return info.definition_version;
  }
  return 0;
}

CheckReport RunCheck(const std::string& where, const PairScorer& scorer) {
  CheckReport report;
  report.where = where;
  const auto start = std::chrono::steady_clock::now();
  for (const GoldenPair& pair : GoldenPairs()) {
    const Frame reference = MakePicture(pair, false);
    const Frame distorted = MakePicture(pair, true);
    for (const GoldenMetric& metric : pair.metrics) {
      absl::StatusOr<std::vector<NamedScore>> scores = scorer(pair, metric, reference, distorted);
      if (!scores.ok()) {
        if (absl::IsUnimplemented(scores.status()) || absl::IsInvalidArgument(scores.status())) {
          ++report.skipped;
          continue;
        }
        report.error = absl::Status(scores.status().code(),
                                    absl::StrCat(pair.name, " ", metric.name, ": ", scores.status().message()));
        report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return report;
      }
      report.outputs += Compare(pair, metric.name, DefinitionVersion(metric.name), *scores, where, &report.differences);
    }
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

CheckReport CheckCpu() {
  CheckReport report = RunCheck("cpu",
                                [](const GoldenPair&, const GoldenMetric& metric, const Frame& reference,
                                   const Frame& distorted) -> absl::StatusOr<std::vector<NamedScore>> {
                                  absl::StatusOr<std::unique_ptr<Metric>> m = CreateMetric(metric.name, metric.options);
                                  if (!m.ok())
                                    return absl::InternalError(std::string(m.status().message()));  // never skipped
                                  return (*m)->Score(reference, distorted);
                                });
  // The CPU is the reference: nothing may be skipped there.
  if (report.error.ok() && report.skipped > 0) {
    report.error = absl::InternalError(absl::StrCat(report.skipped, " golden checks refused by the CPU engine"));
  }
  return report;
}

CheckReport CheckGpu(int device) {
  return RunCheck(absl::StrCat("cuda:", device),
                  [device](const GoldenPair& pair, const GoldenMetric& metric, const Frame& reference,
                           const Frame& distorted) -> absl::StatusOr<std::vector<NamedScore>> {
                    absl::StatusOr<std::unique_ptr<GpuScorer>> scorer =
                        CreateGpuScorer(device, pair.geometry, {GpuMetricRequest{metric.name, metric.options}});
                    if (!scorer.ok()) return scorer.status();
                    GpuStageTimes times;
                    absl::StatusOr<GpuFrameScores> scored = (*scorer)->Score(reference, distorted, nullptr, &times);
                    if (!scored.ok()) return scored.status();
                    return scored->scores;
                  });
}

}  // namespace exactq::golden
