// The metric registry: create a metric by name, list what the engine can compute.
//
// Every metric the engine offers is one line in registry.cc pointing at its info, its
// CPU factory and, where it has a CUDA twin, its GPU factory; the server builds its
// capability listing from ListMetrics(), the runtime its CPU scorers from CreateMetric()
// and its GPU scorers from FindGpuMetricFactory().
//
//   absl::StatusOr<std::unique_ptr<Metric>> metric =
//       CreateMetric("psnr", {{"enable_chroma", "false"}});
//   for (const MetricInfo& info : ListMetrics()) ...

#ifndef EXACTQ_ENGINE_METRICS_REGISTRY_H_
#define EXACTQ_ENGINE_METRICS_REGISTRY_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/metrics/gpu_metric.h"
#include "engine/metrics/metric.h"

namespace exactq {

// InvalidArgument for an unknown metric name (listing the known ones) or a bad option.
absl::StatusOr<std::unique_ptr<Metric>> CreateMetric(absl::string_view name, const MetricOptions& options);

// The metric's CUDA twin (gpu_metric.h), or null when it has none in this build (no
// twin, an unknown name, or a build without CUDA).
const GpuMetricFactory* FindGpuMetricFactory(absl::string_view name);

// Every registered metric, in registration order.
std::vector<MetricInfo> ListMetrics();

// The metrics, their outputs, definition versions and options, as `--help` lists them.
std::string MetricsHelp();

}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_REGISTRY_H_
