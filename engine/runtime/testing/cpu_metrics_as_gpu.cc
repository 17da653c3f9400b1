#include "engine/runtime/testing/cpu_metrics_as_gpu.h"

#include <utility>

#include "engine/metrics/registry.h"

namespace exactq::stand_in {

CpuMetricsAsGpu::CpuMetricsAsGpu(const std::vector<GpuMetricRequest>& metrics) {
  for (const GpuMetricRequest& m : metrics) metrics_.push_back(*CreateMetric(m.name, m.options));
}

GpuFrameScores CpuMetricsAsGpu::Score(const Frame& reference, const Frame& distorted,
                                      const Frame* previous_reference) const {
  GpuFrameScores all;
  for (const auto& metric : metrics_) {
    FrameScores scores = *metric->ScoreInStream(reference, distorted, previous_reference);
    all.outputs_per_metric.push_back(scores.size());
    all.scores.insert(all.scores.end(), std::make_move_iterator(scores.begin()), std::make_move_iterator(scores.end()));
  }
  return all;
}

std::vector<GpuDevice> Devices(int n) {
  std::vector<GpuDevice> out;
  for (int i = 0; i < n; ++i) out.push_back({i, "Stand-in", "9.0", 1ull << 30});
  return out;
}

}  // namespace exactq::stand_in
