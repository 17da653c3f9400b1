// Ssimulacra2Cuda: the CUDA twin of `ssimulacra2`. Returns the CPU reference's bits
// (ssimulacra2_reference.h) for every frame: the same per-pixel arithmetic (the shared
// templates of ssimulacra2_math.h, device code without FMA contraction), the same blur
// walk along every row and column, and each of the 108 raster-order double sums
// reproduced exactly on the device by engine/exact's ordered sum. Both pictures' raw
// planes go to the device once; the sums, their statuses and counts (1,728 bytes) come back; the
// score is ScoreFromSums, the host function every backend shares.
//
// The sums run beside the image work: each scale forks onto a sum stream of its own
// (its 18 sums batched) and joins back (ssimulacra2_cuda_pipeline.h). By
// default each sum is engine/exact's segment pipeline; where it refuses a sum (a rare exact-check refusal or
// a full pool) the frame is run again with the event walk, which never refuses: the bits
// are the same either way (stats() counts such frames).
//
// Plain C++ (no device code), so g++ code can use it. One instance per worker thread and
// device; not thread-safe. Device buffers are sized for the frame geometry in use
// (Ssimulacra2CudaDeviceBytes: about 360 bytes per pixel plus both frames, 3.0 GB at
// 3840x2160, and at least about 100 MB for the 108 sum workspaces) and reallocated when
// the geometry changes. The pictures are uploaded straight from the caller's memory when
// it is page-locked (the server's frame buffers), else through a pinned staging copy;
// with use_graph the rest of the frame's launch sequence (the forked launches of every
// scale, read-back) is captured once per geometry as a CUDA graph and replayed: two
// graphs, whole scales for a frame alone and slabs for a busy device (sum_slab_chunks).
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

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/format/frame.h"
#include "engine/format/frame_geometry.h"
#include "engine/metrics/gpu_metric.h"
#include "engine/metrics/metric.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_math.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_score.h"

namespace exactq {
namespace ssimulacra2 {

// How the twin forms its 108 sums. Both exact modes give the reference's bits.
enum class Ssimulacra2SumMode {
  // Exact (default): engine/exact's segment pipeline per sum, all sums of a scale
  // concurrent; a frame with a refused sum is run again with kExactEventWalk.
  kExactSegments,
  // Exact: engine/exact's event-walk pipeline per sum (slower, never refuses), with the
  // same concurrency.
  kExactEventWalk,
  // NOT EXACT: cub::DeviceReduce::Sum per sum (a tree: other bits than the reference's),
  // same concurrency. Only for the cost comparison of the benchmark; its scores are not
  // ExactQ's scores and the service never uses this mode.
  kInexactTree,
};

const char* Ssimulacra2SumModeName(Ssimulacra2SumMode mode);  // "exact_segments", ...

struct Ssimulacra2CudaOptions {
  int device = 0;  // CUDA device ordinal
  YuvMatrix yuv_matrix = YuvMatrix::kBt709Limited;
  bool use_graph = true;  // replay a captured CUDA graph per geometry (same bits either way)
  Ssimulacra2SumMode sum_mode = Ssimulacra2SumMode::kExactSegments;
  // How many channels' sums form one batch on the device: 3 (a scale's 18 sums in one
  // batch after one terms launch for the three channels) or 1 (a channel's six sums, three
  // batches per scale, each on its own stream). Same bits. On the H200 with 16 frames in
  // flight, 3 was as fast or faster for both sum modes (270p +5% exact, 1080p +0.7%, 4K
  // the same).
  int channels_per_sum_batch = 3;
  // One sum stream per scale (the default: each scale's terms wait only for its blur,
  // never for an earlier scale's sums), or one per scale parity (scale s + 2's terms wait
  // in stream order for scale s's sums). Same bits. On the H200 with 16 frames in flight,
  // per scale: 270p +6%, 1080p +0.3%, 4K the same, measured side by side in one run.
  bool sum_stream_per_scale = true;
  // The sum streams' scheduling priority, as a rank above the device's least stream
  // priority (0; each rank a step higher, up to the greatest: gpu::CreatePipelineStreams).
  // -1: the sum mode's default, kExactSumStreamPriorityRank in the exact modes and 0 in
  // the inexact one. With several frames in flight a higher rank lets a frame's sums start
  // before other frames' image kernels that wait for room. It orders the dispatch of
  // waiting blocks only (nothing running is preempted), and that includes other metrics'
  // kernels on the same device. Same bits at any rank.
  int sum_stream_priority_rank = -1;
  // kExactSegments: the precision of the segment pipeline's advice (the approximate chunk
  // sums that place its exact checks; gpu::AdvicePrecision). Same bits either way. On the
  // H200 with 16 frames in flight binary32 was 2% faster at 1080p and 4K, with the same
  // chunks through the redo on every corpus frame.
  bool binary32_advice = true;
  // kExactSegments, for many frames in flight: a scale of more than sum_slab_chunks chunks
  // (1024 pixels each) takes its terms kernel and the segment pipeline's chunk stage slab
  // by slab, so that the strided pass reads each slab's term bases soon after they are
  // stored, while they are still in L2; with bases_evict_last the terms kernel stores the
  // bases under an L2 policy of evict_last. A multiple of 32, or 0 for never. Only frames
  // launched while at least slab_min_frames_in_flight frames of this process's twins are
  // in flight on the device, this one included (FrameInFlight), run in slabs;
  // the others run whole scales (each form has its own graph). Same bits either way.
  // On the H200, 16 frames in flight, slabs with evict_last against whole scales: 1080p
  // +1.3% with 128 chunks, +2.3% with 160 (96: 3% slower than 128, 64: 8%, 32: 26%; 192
  // as 160); 4K +2.4% with 128, +0.7-1% more with 160 or 192. Alone a frame in slabs takes
  // longer (4K 3.37 against 2.72 ms: the slabs run in turn on one stream); with 2-6 in
  // flight a threshold of 3 was faster than 4 at 3, 4 and 6 (bench/results/ssimulacra2.md).
  int sum_slab_chunks = 160;
  bool bases_evict_last = true;       // needs sum_slab_chunks > 0
  int slab_min_frames_in_flight = 3;  // >= 1; 1: every frame in slabs
  // Tests only: engine/exact's PlanMode for the segment pipeline. 1 (one binade high)
  // makes it refuse every nonzero sum, so every frame takes the event-walk redo.
  int testing_segment_plan_mode = 0;
};

// The exact modes' sum streams at the H200's greatest priority (its range is 0 .. -5):
// with 16 frames in flight, 1080p +1.1% and 4K +1.0-1.2% against rank 0, in two runs.
// The inexact variant's short
// sum stream lost 0.5-0.9% at 1080p with it, so its default stays 0.
inline constexpr int kExactSumStreamPriorityRank = 5;

// Counts since Create.
struct Ssimulacra2CudaStats {
  int64_t frames = 0;                    // frames summed (Sums or Score calls that succeeded)
  int64_t frames_redone_event_walk = 0;  // kExactSegments: frames run again with the event walk
  int64_t sums_refused = 0;              // of their sums, those the segment pipeline refused (a check)
  int64_t sums_overflowed = 0;           // ... or gave up on (a pool or step list was full)
  int64_t frames_staged = 0;             // frames copied into pinned staging (not page-locked)
  int64_t chunks_in_tile = 0;            // kExactSegments: chunks through the tile path (not strided)
  int64_t frames_in_slabs = 0;           // kExactSegments: frames run in slabs (sum_slab_chunks)
  int64_t graph_captures_failed = 0;     // captures that failed; the frame ran as direct launches
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

  // As Sums, over a pair already on this twin's device (every plane, read in place once
  // frame.ready has completed): enqueues the frame and returns without waiting.
  // CollectSums (or Collect: the score) waits for it; one frame at a time. The pair must
  // stay unchanged until it is collected.
  absl::Status EnqueueDevice(const DeviceFramePair& frame);
  absl::StatusOr<FrameSums> CollectSums();
  absl::StatusOr<FrameScores> Collect();

  // Device time of the last frame, from the start of the upload (Sums, Score) or of the
  // pair's use (EnqueueDevice) to the end of the read-back (CUDA events), in
  // milliseconds; a frame run again with the event walk counts both runs.
  float last_device_ms() const { return last_device_ms_; }

  const Ssimulacra2CudaOptions& options() const { return options_; }
  const Ssimulacra2CudaStats& stats() const { return stats_; }

  // Tests only: changes options().testing_segment_plan_mode (and drops the captured
  // graph), so one instance can take the event-walk redo and then accept frames again.
  void SetTestingSegmentPlanModeForTests(int mode);

 private:
  struct State;
  explicit Ssimulacra2Cuda(const Ssimulacra2CudaOptions& options);
  absl::Status Init();
  absl::Status Reserve(const FrameGeometry& geometry);
  // Enqueues the frame after frame.ready; `timed`: st.start is already recorded (before
  // the upload of Sums).
  absl::Status EnqueueFrame(const DeviceFramePair& frame, bool timed);
  absl::Status Enqueue(Ssimulacra2SumMode mode, bool slabs);
  absl::Status BuildGraph(bool slabs);
  // Launches one run over the frame (graph or direct launches) and records st.done.
  absl::Status LaunchFrame(Ssimulacra2SumMode mode, bool graph, bool slabs);
  bool SlabsPossible() const;  // kExactSegments with sum_slab_chunks
  void DrainStreams();

  Ssimulacra2CudaOptions options_;
  std::unique_ptr<State> state_;
  float last_device_ms_ = 0.0f;
  Ssimulacra2CudaStats stats_;
};

// Whether a CUDA device can be used; `reason` says why not (for skips and logs).
bool Ssimulacra2CudaAvailable(std::string* reason);

// Device memory one instance holds for frames of this geometry (the scratch planes and
// workspaces, the results; with `own_frames`, the pictures Sums uploads), without the
// CUDA context and the graph.
size_t Ssimulacra2CudaDeviceBytes(const FrameGeometry& geometry, bool own_frames = true);

// The GpuMetric of ssimulacra2 for the registry: every plane, read from the device frame.
const GpuMetricFactory& Ssimulacra2GpuMetricFactory();

}  // namespace ssimulacra2
}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_SSIMULACRA2_CUDA_SSIMULACRA2_CUDA_H_
