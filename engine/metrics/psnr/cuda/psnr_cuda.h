// PsnrCuda: libvmaf's integer PSNR with the squared-error sums formed on a GPU.
//
// The SSE of a plane is an integer sum, so any order gives the same value: blocks add
// their squared differences in 64-bit integers and combine with integer atomics. The
// dB values then come from PsnrScoresFromSse, the host function the CPU path uses, so
// the bits are the CPU's by construction. Plain C++ header: g++ code can use it.
//
// Two ways in: a pair already on the device (EnqueueSse, then Collect: how the runtime
// runs it, gpu_metric.h), or host Frames (Score), which go up through a
// DeviceFrameBuffer of the twin's own (page-locked pictures directly, others staged).
// Only the scored planes are read (luma alone with enable_chroma=false).
//
//   exactq::PsnrCuda psnr(options, stream);
//   absl::StatusOr<FrameScores> scores = psnr.Score(ref, dist);  // synchronises `stream`
#ifndef EXACTQ_ENGINE_METRICS_PSNR_CUDA_PSNR_CUDA_H_
#define EXACTQ_ENGINE_METRICS_PSNR_CUDA_PSNR_CUDA_H_

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "engine/format/frame.h"
#include "engine/metrics/gpu_metric.h"
#include "engine/metrics/metric.h"
#include "engine/metrics/psnr/psnr.h"
#include "engine/platform/device_frame_buffer.h"

namespace exactq {

class PsnrCuda {
 public:
  explicit PsnrCuda(PsnrOptions options, cudaStream_t stream = nullptr);
  ~PsnrCuda();
  PsnrCuda(const PsnrCuda&) = delete;
  PsnrCuda& operator=(const PsnrCuda&) = delete;

  // The squared-error sum of each scored plane (Y, then Cb and Cr unless 4:0:0 or
  // enable_chroma=false), computed on the device.
  absl::StatusOr<std::array<uint64_t, 3>> PlaneSse(const Frame& ref, const Frame& dist);
  absl::StatusOr<FrameScores> Score(const Frame& ref, const Frame& dist);

  // Enqueues the SSE of a pair on the device (at least PsnrScoredPlanes planes) on
  // `stream`, after whatever is already queued there, and its read-back.
  absl::Status EnqueueSse(const DeviceFramePair& frame, cudaStream_t stream);
  // Waits for the pair enqueued last: its SSEs, or its scores.
  absl::StatusOr<std::array<uint64_t, 3>> CollectSse();
  absl::StatusOr<FrameScores> Collect();

 private:
  absl::Status Reserve();

  PsnrOptions options_;
  cudaStream_t stream_;
  std::unique_ptr<DeviceFrameBuffer> frame_buffer_;  // Score's uploads
  FrameGeometry enqueued_;                           // of the pair enqueued last
  unsigned long long* device_sse_ = nullptr;         // 3 counters
  unsigned long long* host_sse_ = nullptr;           // pinned
  cudaEvent_t done_ = nullptr;                       // after the read-back
};

// The GpuMetric of psnr for the registry (planes: those PsnrScoredPlanes scores).
const GpuMetricFactory& PsnrGpuMetricFactory();

}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_PSNR_CUDA_PSNR_CUDA_H_
