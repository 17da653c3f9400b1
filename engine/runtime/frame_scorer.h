// FrameScorer: scores frame pairs of one geometry with a set of metrics, placing the
// work on a backend. This is the engine's entry point for the server; it keeps no
// gRPC types.
//
// Placement: `cpu` scores on the CPU paths; `cuda` on a GPU through the metrics' CUDA
// twins and never falls back (no usable GPU, or a metric without a twin, is an error
// naming the cause); `auto` uses a GPU when one can take the input and otherwise the
// CPU, saying why (fallback reasons: no_gpu, unsupported_input, out_of_memory,
// device_error). A GPU that fails mid-stream is left and the frame is scored again on
// the CPU: no frame is lost or scored twice in the answers, and the bits are the same
// either way. Devices come from a DevicePool (the process's, unless a test gives its
// own): every GPU failure is reported to it, so a failed device is taken out for new
// streams and retried later, and a poisoned one stays out; a stream on a device that
// another stream found poisoned leaves it before its next frame. A stream that left a
// GPU for a device problem returns to a GPU when the pool has one again.
//
//   absl::StatusOr<std::unique_ptr<FrameScorer>> scorer = FrameScorer::Create(
//       geometry, {{metric_name, options}}, BackendPreference::kAuto);
//   absl::StatusOr<ScoredFrame> scored = (*scorer)->Score(ref, dist);
#ifndef EXACTQ_ENGINE_RUNTIME_FRAME_SCORER_H_
#define EXACTQ_ENGINE_RUNTIME_FRAME_SCORER_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/format/frame.h"
#include "engine/format/frame_geometry.h"
#include "engine/metrics/metric.h"
#include "engine/runtime/device_pool.h"
#include "engine/runtime/gpu_scorer.h"

namespace exactq {

enum class BackendPreference { kAuto, kCuda, kCpu };
enum class Backend { kCpu, kCuda };

const char* BackendName(Backend backend);  // "cpu", "cuda"

struct MetricSpec {
  std::string name;
  MetricOptions options;
};

struct StageDurations {
  std::chrono::nanoseconds host_to_device{0};
  std::chrono::nanoseconds compute{0};
  std::chrono::nanoseconds device_to_host{0};
};

struct ScoredFrame {
  FrameScores scores;  // metrics in request order, each metric's outputs in order
  Backend backend = Backend::kCpu;
  std::string device;           // "cpu" or "cuda:N (name)"
  std::string fallback_reason;  // why auto placement chose the CPU; empty otherwise
  std::string fallback_detail;  // the underlying error, for logs
  StageDurations durations;
  uint64_t host_to_device_bytes = 0;  // on a GPU: the bytes uploaded for this frame
  // How many of `scores` each metric gave, in request order (ScoreInStream's outputs
  // are per-frame ones for metrics with a SequenceStage).
  std::vector<size_t> outputs_per_metric;
};

// A frame's outputs, moved into one FrameScores per metric in request order; INTERNAL
// when `outputs_per_metric` does not split `scores` among `metrics` metrics (one count
// each, summing to the number of scores).
absl::StatusOr<std::vector<FrameScores>> SplitByMetric(FrameScores scores,
                                                       const std::vector<size_t>& outputs_per_metric, size_t metrics);

struct MetricIdentity {
  std::string name;
  int definition_version;
};

using GpuScorerFactory = std::function<absl::StatusOr<std::unique_ptr<GpuScorer>>(
    int device, const FrameGeometry& geometry, const std::vector<GpuMetricRequest>& metrics)>;

// Where a FrameScorer finds GPUs. The defaults are the process's: GlobalDevicePool()
// and CreateGpuScorer. Tests of the placement rules on machines without a GPU give a
// pool of their own and a factory.
struct GpuEnvironment {
  DevicePool* pool = nullptr;
  GpuScorerFactory create_scorer;
};

class FrameScorer {
 public:
  // InvalidArgument for a bad geometry, an unknown metric or option, or input a metric
  // cannot take; FailedPrecondition when `cuda` is forced and no GPU can serve.
  static absl::StatusOr<std::unique_ptr<FrameScorer>> Create(const FrameGeometry& geometry,
                                                             const std::vector<MetricSpec>& metrics,
                                                             BackendPreference preference,
                                                             const GpuEnvironment& environment = {});

  // Both frames must have the geometry given to Create (checked). Not thread-safe:
  // metrics keep scratch buffers; use one FrameScorer per stream. A stream of one frame:
  // the final outputs of every metric.
  absl::StatusOr<ScoredFrame> Score(const Frame& reference, const Frame& distorted);

  // Frame n of a stream (FramePipeline): `previous_reference` is frame n - 1's
  // reference, or null for frame 0; metrics with a SequenceStage give their per-frame
  // outputs, which the stream's stages (CreateSequenceStages) turn into final ones.
  absl::StatusOr<ScoredFrame> ScoreInStream(const Frame& reference, const Frame& distorted,
                                            const Frame* previous_reference);

  // One stage per metric of the request, in order; null for metrics whose outputs are
  // per frame. All null: ScoreInStream's outputs are final.
  std::vector<std::unique_ptr<SequenceStage>> CreateSequenceStages() const;
  // Whether any metric reads the previous frame's reference.
  bool reads_previous_reference() const;

  // Another scorer for the same stream, for a second frame in flight (FramePipeline):
  // same geometry, metrics and preference, its own scratch and GPU buffers, on this
  // scorer's GPU (not the pool's next device), or on the CPU with this scorer's
  // fallback reason when this one is there. An error (the device has no room, failed,
  // or was lost) means the stream keeps fewer frames in flight. Call it while this
  // scorer is idle: it reads the placement that Score changes.
  absl::StatusOr<std::unique_ptr<FrameScorer>> CreateSibling() const;

  const std::vector<MetricIdentity>& metric_identities() const { return identities_; }
  // Every output name, in the order Score returns them.
  const std::vector<std::string>& output_names() const { return output_names_; }
  // Where frames go now: "cuda:N (name)" or "cpu".
  const std::string& placement() const { return gpu_ != nullptr ? gpu_device_ : kCpuDevice; }
  // The CUDA ordinal frames go to now, or -1 on the CPU (a decoder that makes pictures
  // on this GPU saves their upload: Frame::device_picture).
  int gpu() const { return gpu_ != nullptr ? gpu_index_ : -1; }

  static const std::string kCpuDevice;

 private:
  FrameScorer() = default;

  // Tries to give this stream a GPU from the pool; on failure records why (for auto's
  // fallback) and whether trying again later makes sense.
  absl::Status PlaceOnGpu();
  // Places this stream on `device`; on failure records why, as PlaceOnGpu does.
  absl::Status PlaceOn(const GpuDevice& device);
  // Scores on the stream's GPU; a failure is reported to the pool.
  absl::StatusOr<GpuFrameScores> ScoreOnGpu(const Frame& reference, const Frame& distorted,
                                            const Frame* previous_reference, GpuStageTimes* times);
  // Auto: drops the GPU after a device problem; the stream may come back to a GPU.
  void LeaveGpu(const absl::Status& why);
  // Scores on the CPU paths, with the fallback reason when auto placement chose them.
  // Pictures held on a GPU only are copied to the host first.
  absl::StatusOr<ScoredFrame> ScoreOnCpu(const Frame& reference, const Frame& distorted,
                                         const Frame* previous_reference);

  FrameGeometry geometry_;
  BackendPreference preference_ = BackendPreference::kAuto;
  std::vector<std::unique_ptr<Metric>> metrics_;
  std::vector<GpuMetricRequest> gpu_requests_;
  DevicePool* pool_ = nullptr;
  GpuScorerFactory create_gpu_;
  std::unique_ptr<GpuScorer> gpu_;
  int gpu_index_ = -1;
  GpuDevice device_;                // the GPU of gpu_, for siblings
  std::string gpu_device_;          // "cuda:0 (NVIDIA H200)"
  bool may_return_to_gpu_ = false;  // left a GPU (or found none) for a device problem
  std::string fallback_reason_;     // why frames go to the CPU under auto
  std::string fallback_detail_;
  std::vector<MetricIdentity> identities_;
  std::vector<std::string> output_names_;
  // Host copies of pictures that live on a GPU, for the CPU's paths.
  Frame host_scratch_[3];
};

}  // namespace exactq

#endif  // EXACTQ_ENGINE_RUNTIME_FRAME_SCORER_H_
