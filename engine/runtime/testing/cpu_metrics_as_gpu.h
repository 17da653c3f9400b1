// Test support: what a stand-in GPU scorer computes. The runtime's tests replace the
// device with stand-ins (to fail a frame, hold it, count calls); their scores come from
// the CPU metrics, laid out as a real GpuScorer lays them out.
#ifndef EXACTQ_ENGINE_RUNTIME_TESTING_CPU_METRICS_AS_GPU_H_
#define EXACTQ_ENGINE_RUNTIME_TESTING_CPU_METRICS_AS_GPU_H_

#include <memory>
#include <vector>

#include "engine/format/frame.h"
#include "engine/metrics/metric.h"
#include "engine/runtime/gpu_device.h"
#include "engine/runtime/gpu_scorer.h"

namespace exactq::stand_in {

// The request's metrics on the CPU: each metric's per-frame outputs in request order,
// with its count (as the twins give them: a sequence stage's answer is not among them).
class CpuMetricsAsGpu {
 public:
  explicit CpuMetricsAsGpu(const std::vector<GpuMetricRequest>& metrics);
  GpuFrameScores Score(const Frame& reference, const Frame& distorted, const Frame* previous_reference) const;

 private:
  std::vector<std::unique_ptr<Metric>> metrics_;
};

// `n` stand-in GPUs, numbered from 0, each with 1 GiB.
std::vector<GpuDevice> Devices(int n);

}  // namespace exactq::stand_in

#endif  // EXACTQ_ENGINE_RUNTIME_TESTING_CPU_METRICS_AS_GPU_H_
