// ResidentTwin: CUDA twins over a frame pair uploaded once, for timing them on frames
// already resident on the device (no copy per frame): one metric alone, or a request's
// metrics together as the runtime runs them (every one enqueued before any is
// collected, on one stream). Builds without CUDA get UNAVAILABLE.
#ifndef EXACTQ_BENCH_RUNTIME_RESIDENT_TWIN_H_
#define EXACTQ_BENCH_RUNTIME_RESIDENT_TWIN_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/format/frame.h"
#include "engine/metrics/metric.h"

namespace exactq {
namespace bench {

class ResidentTwin {
 public:
  virtual ~ResidentTwin() = default;
  // Scores the resident pair once (enqueue every twin, then collect each), the outputs
  // in the order of the metrics given.
  virtual absl::StatusOr<FrameScores> Score() = 0;
};

struct ResidentMetric {
  std::string name;
  MetricOptions options;
};

absl::StatusOr<std::unique_ptr<ResidentTwin>> CreateResidentTwin(int device, const std::vector<ResidentMetric>& metrics,
                                                                 const Frame& reference, const Frame& distorted);

}  // namespace bench
}  // namespace exactq

#endif  // EXACTQ_BENCH_RUNTIME_RESIDENT_TWIN_H_
