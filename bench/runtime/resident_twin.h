// ResidentTwin: CUDA twins over a frame pair uploaded once, for timing them on frames
// already resident on the device (no copy per frame): one metric alone, or a request's
// metrics together as the runtime runs them (every one enqueued before any is
// collected, on one stream). With an upload mode, the pair is copied from page-locked
// host memory every frame instead: before the frame's kernels (as the runtime's scorer
// does), or the next frame's copy beside this frame's kernels, into a second device
// pair copied on the device into the twins' fixed one when its frame starts. Builds
// without CUDA get UNAVAILABLE.
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

enum class PairUpload {
  kOnce,       // resident: uploaded at creation only
  kEachFrame,  // every frame, then its kernels
  kAhead,      // every frame, the next one's copy beside this one's kernels
};

// `reference` and `distorted` must be page-locked and outlive the twin for the upload modes.
absl::StatusOr<std::unique_ptr<ResidentTwin>> CreateResidentTwin(int device, const std::vector<ResidentMetric>& metrics,
                                                                 const Frame& reference, const Frame& distorted,
                                                                 PairUpload upload = PairUpload::kOnce);

}  // namespace bench
}  // namespace exactq

#endif  // EXACTQ_BENCH_RUNTIME_RESIDENT_TWIN_H_
