// SsimCuda: the CUDA twin of `ssim`. Returns the CPU reference's bits (ssim_reference.h)
// for every frame: the same int64 window moments, the same fp64 term (ssim_math.h, device
// code without FMA contraction), and the raster-order frame sum reproduced exactly on the
// device by engine/exact's signed ordered sum. Only the luma planes go to the device and
// only 40 bytes per frame come back; the outputs then come from SsimOutputs, the host
// function every backend shares. ssim_cuda_pipeline.h describes the kernels.
//
// Plain C++ (no device code), so g++ code can use it. One instance per worker thread and
// device; not thread-safe. It keeps, per frame in flight, a CUDA stream, device buffers
// sized for the largest frame seen so far (about 10 bytes per pixel plus the planes:
// 100 MB at 3840x2160 8-bit), pinned staging for Submit(Frame), and a pinned result.
//
//   absl::StatusOr<std::unique_ptr<exactq::ssim::SsimCuda>> gpu =
//       exactq::ssim::SsimCuda::Create({/*device=*/0, /*frames_in_flight=*/4, {/*enable_db=*/true}});
//   absl::StatusOr<FrameScores> scores = (*gpu)->Score(ref, dist);   // one frame, waits
//
//   // Several frames in flight: Submit up to capacity(), Collect in submission order.
//   (*gpu)->Submit(ref0, dist0); (*gpu)->Submit(ref1, dist1);
//   absl::StatusOr<exactq::ssim::SsimCudaFrame> r0 = (*gpu)->Collect();  // frame 0
//
// Errors from CUDA become absl statuses naming the call (INTERNAL; RESOURCE_EXHAUSTED when
// device or pinned memory runs out). A fault inside a kernel poisons the CUDA context, so
// after an INTERNAL error the instance (and the device, for this process) should be
// retired and the frame scored on the CPU, which gives the same bits.
#ifndef EXACTQ_ENGINE_METRICS_SSIM_CUDA_SSIM_CUDA_H_
#define EXACTQ_ENGINE_METRICS_SSIM_CUDA_SSIM_CUDA_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/exact/ordered_sum.h"
#include "engine/format/frame.h"
#include "engine/format/frame_geometry.h"
#include "engine/metrics/gpu_metric.h"
#include "engine/metrics/metric.h"
#include "engine/metrics/ssim/ssim_score.h"

namespace exactq {
namespace ssim {

struct SsimCudaOptions {
  int device = 0;            // CUDA device ordinal
  int frames_in_flight = 4;  // Submit calls allowed before a Collect (>= 1)
  SsimOptions outputs;       // enable_db, clip_db
  // Test knobs: a wrong plan only costs time (the result's bits do not change), the
  // general summary path is what the tie-free one must equal, the fused pipeline is a
  // one-kernel form of the event walk's first stages, and segment_pipeline = false skips
  // the segment pipeline (ssim_cuda_pipeline.h). Production: defaults.
  exact::PlanMode plan_mode = exact::PlanMode::kApproximatePrefix;
  int fixed_frame = 0;
  bool force_general_summaries = false;
  bool fused_pipeline = false;
  bool segment_pipeline = true;
};

// One collected frame.
struct SsimCudaFrame {
  FrameScores scores;                // SsimOutputs order: ssim, then ssim_db with enable_db
  SsimSums sums;                     // bit for bit ReferenceSums()
  exact::OrderedSumStats sum_stats;  // what the device sum did: segment steps, or the event walk's fallbacks
  float upload_ms = 0;               // device time of the two plane copies
  float compute_ms = 0;              // device time from the end of the copies to the result
};

class SsimCuda {
 public:
  // Creates streams and events on `options.device`; buffers come with the first frame.
  // FAILED_PRECONDITION without a usable device, INVALID_ARGUMENT for bad options.
  static absl::StatusOr<std::unique_ptr<SsimCuda>> Create(const SsimCudaOptions& options);
  ~SsimCuda();
  SsimCuda(const SsimCuda&) = delete;
  SsimCuda& operator=(const SsimCuda&) = delete;

  // One frame, start to finish. FAILED_PRECONDITION while frames are in flight.
  absl::StatusOr<FrameScores> Score(const Frame& ref, const Frame& dist);

  // Starts a frame: copies both luma planes into pinned staging and enqueues the upload and
  // the kernels; returns without waiting for the device. INVALID_ARGUMENT when the
  // geometries differ or are invalid; RESOURCE_EXHAUSTED when capacity() frames are in
  // flight (Collect one first).
  absl::Status Submit(const Frame& ref, const Frame& dist);

  // As Submit, but uploads straight from the caller's luma planes (width*height samples
  // each, packed rows: bytes at 8 bits, little-endian uint16 above; e.g. plane 0 of a
  // Frame). Use page-locked memory for asynchronous copies at full speed (pageable memory
  // works, but the copy then blocks the caller). The planes must stay unchanged until this
  // frame is collected.
  absl::Status SubmitLuma(const FrameGeometry& geometry, const void* ref_luma, const void* dist_luma);

  // As Submit, over a pair already on this twin's device (its luma planes are read in
  // place, after frame.ready): no copy. The pair must stay unchanged until this frame is
  // collected.
  absl::Status SubmitDevice(const DeviceFramePair& frame);

  // Waits for the oldest frame in flight and returns its result. FAILED_PRECONDITION when
  // none is in flight.
  absl::StatusOr<SsimCudaFrame> Collect();

  int capacity() const { return static_cast<int>(slots_.size()); }
  int in_flight() const { return in_flight_; }
  int device() const { return options_.device; }
  const SsimCudaOptions& options() const { return options_; }

 private:
  struct Slot;
  explicit SsimCuda(const SsimCudaOptions& options);
  absl::Status Init();
  // `planes`: whether the slot holds its own copy of the luma planes (not for SubmitDevice).
  absl::StatusOr<Slot*> ReserveSlot(const FrameGeometry& geometry, bool planes, bool staging);
  // Luma from the host (copied into the slot's planes) or, with `ready`, read in place on
  // the device once `ready` has completed.
  absl::Status Enqueue(Slot& slot, const void* ref_luma, const void* dist_luma, void* ready = nullptr);

  SsimCudaOptions options_;
  std::vector<std::unique_ptr<Slot>> slots_;
  int oldest_ = 0;  // index of the oldest frame in flight
  int in_flight_ = 0;
};

// sum(w) over a frame's windows: (sum of kept horizontal taps over all columns) times
// (the same over all rows), an integer below 2^53, so the raster-order double sum of the
// reference gives exactly this value (spec A.6).
double SsimWeightSum(int width, int height);

// Device memory one twin with one frame in flight holds for this geometry, its luma
// planes not counted (SubmitDevice reads them from the device frame).
size_t SsimCudaDeviceBytes(const FrameGeometry& geometry);

// The GpuMetric of ssim for the registry: luma only, one frame in flight.
const GpuMetricFactory& SsimGpuMetricFactory();

// Whether a CUDA device can be used; `reason` says why not (for skips and logs).
bool SsimCudaAvailable(std::string* reason);

}  // namespace ssim
}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_SSIM_CUDA_SSIM_CUDA_H_
