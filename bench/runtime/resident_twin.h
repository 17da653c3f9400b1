// ResidentTwin: one metric's CUDA twin over a frame pair uploaded once, for timing the
// twin alone on frames already resident on the device (no copy per frame). Builds
// without CUDA get UNAVAILABLE.
#ifndef EXACTQ_BENCH_RUNTIME_RESIDENT_TWIN_H_
#define EXACTQ_BENCH_RUNTIME_RESIDENT_TWIN_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "engine/format/frame.h"
#include "engine/metrics/metric.h"

namespace exactq {
namespace bench {

class ResidentTwin {
 public:
  virtual ~ResidentTwin() = default;
  // Scores the resident pair once (enqueue, then collect).
  virtual absl::StatusOr<FrameScores> Score() = 0;
};

absl::StatusOr<std::unique_ptr<ResidentTwin>> CreateResidentTwin(int device, const std::string& metric,
                                                                 const MetricOptions& options, const Frame& reference,
                                                                 const Frame& distorted);

}  // namespace bench
}  // namespace exactq

#endif  // EXACTQ_BENCH_RUNTIME_RESIDENT_TWIN_H_
