// Ssimulacra2Cuda: the CUDA twin of `ssimulacra2`. Returns the CPU reference's bits
// (ssimulacra2_reference.h) for every frame: the same per-pixel arithmetic (the shared
// templates of ssimulacra2_math.h, device code without FMA contraction), the same blur
// walk along every row and column, and each of the 108 raster-order double sums
// reproduced exactly on the device by engine/exact's ordered sum. Both pictures' raw
// planes go to the device once; 864 bytes (the sums) come back; the score is
// ScoreFromSums, the host function every backend shares.
//
// Plain C++ (no device code), so g++ code can use it. One instance per worker thread and
// device; not thread-safe. Device buffers are sized for the frame geometry in use (about
// 290 bytes per pixel plus both frames: 2.4 GB at 3840x2160) and reallocated when the
// geometry changes; with use_graph the frame's launch sequence (upload, about 100 launches
// per scale, read-back) is captured once per geometry as a CUDA graph and replayed.
//
//   absl::StatusOr<std::unique_ptr<exactq::ssimulacra2::Ssimulacra2Cuda>> gpu =
//       exactq::ssimulacra2::Ssimulacra2Cuda::Create({/*device=*/0, YuvMatrix::kBt709Limited});
//   absl::StatusOr<FrameScores> scores = (*gpu)->Score(ref, dist);   // {"ssimulacra2", x}
//   absl::StatusOr<FrameSums> sums = (*gpu)->Sums(ref, dist);        // == ReferenceSums
//
// Errors from CUDA become absl statuses naming the call (INTERNAL; RESOURCE_EXHAUSTED when
// device or pinned memory runs out). After an INTERNAL error the instance should be
// retired and the frame scored on the CPU, which gives the same bits.
#ifndef EXACTQ_ENGINE_METRICS_SSIMULACRA2_CUDA_SSIMULACRA2_CUDA_H_
#define EXACTQ_ENGINE_METRICS_SSIMULACRA2_CUDA_SSIMULACRA2_CUDA_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/format/frame.h"
#include "engine/format/frame_geometry.h"
#include "engine/metrics/metric.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_math.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_score.h"

namespace exactq {
namespace ssimulacra2 {

struct Ssimulacra2CudaOptions {
  int device = 0;                                // CUDA device ordinal
  YuvMatrix yuv_matrix = YuvMatrix::kBt709Limited;
  bool use_graph = true;  // replay a captured CUDA graph per geometry (same bits either way)
};

class Ssimulacra2Cuda {
 public:
  // Creates a stream on `options.device` and uploads the EOTF table; frame buffers come
  // with the first frame. FAILED_PRECONDITION without a usable device, INVALID_ARGUMENT
  // for a bad device ordinal or yuv_matrix.
  static absl::StatusOr<std::unique_ptr<Ssimulacra2Cuda>> Create(const Ssimulacra2CudaOptions& options);
  ~Ssimulacra2Cuda();
  Ssimulacra2Cuda(const Ssimulacra2Cuda&) = delete;
  Ssimulacra2Cuda& operator=(const Ssimulacra2Cuda&) = delete;

  // The frame's 108 sums, bit for bit ReferenceSums(ref, dist, yuv_matrix). Waits for the
  // device. INVALID_ARGUMENT as CheckSsimulacra2Pair.
  absl::StatusOr<FrameSums> Sums(const Frame& ref, const Frame& dist);

  // Sums, then ScoreFromSums: {{"ssimulacra2", score}}.
  absl::StatusOr<FrameScores> Score(const Frame& ref, const Frame& dist);

  // Device time of the last frame, from the start of the upload to the end of the
  // read-back (CUDA events), in milliseconds.
  float last_device_ms() const { return last_device_ms_; }

  const Ssimulacra2CudaOptions& options() const { return options_; }

 private:
  struct State;
  explicit Ssimulacra2Cuda(const Ssimulacra2CudaOptions& options);
  absl::Status Init();
  absl::Status Reserve(const FrameGeometry& geometry);
  absl::Status Enqueue();
  absl::Status BuildGraph();

  Ssimulacra2CudaOptions options_;
  std::unique_ptr<State> state_;
  float last_device_ms_ = 0.0f;
};

// Whether a CUDA device can be used; `reason` says why not (for skips and logs).
bool Ssimulacra2CudaAvailable(std::string* reason);

}  // namespace ssimulacra2
}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_SSIMULACRA2_CUDA_SSIMULACRA2_CUDA_H_
