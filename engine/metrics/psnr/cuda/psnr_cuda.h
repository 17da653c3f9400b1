// PsnrCuda: libvmaf's integer PSNR with the squared-error sums formed on a GPU.
//
// The SSE of a plane is an integer sum, so any order gives the same value: blocks add
// their squared differences in 64-bit integers and combine with integer atomics. The
// dB values then come from PsnrScoresFromSse, the host function the CPU path uses, so
// the bits are the CPU's by construction. Plain C++ header: g++ code can use it.
//
//   exactq::PsnrCuda psnr(options, stream);
//   absl::StatusOr<FrameScores> scores = psnr.Score(ref, dist);  // synchronises `stream`
#ifndef EXACTQ_ENGINE_METRICS_PSNR_CUDA_PSNR_CUDA_H_
#define EXACTQ_ENGINE_METRICS_PSNR_CUDA_PSNR_CUDA_H_

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>

#include "absl/status/statusor.h"
#include "engine/format/frame.h"
#include "engine/metrics/metric.h"
#include "engine/metrics/psnr/psnr.h"

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

 private:
  absl::Status Reserve(size_t frame_bytes);

  PsnrOptions options_;
  cudaStream_t stream_;
  uint8_t* device_frames_ = nullptr;  // reference then distorted
  size_t capacity_bytes_ = 0;         // per picture
  unsigned long long* device_sse_ = nullptr;  // 3 counters
  unsigned long long* host_sse_ = nullptr;    // pinned
};

}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_PSNR_CUDA_PSNR_CUDA_H_
