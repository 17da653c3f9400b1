// PsnrCuda: libvmaf's integer PSNR with the squared-error sums formed on a GPU.
//
// The SSE of a plane is an integer sum, so any order gives the same value: blocks add
// their squared differences in 64-bit integers and combine with integer atomics. The
// dB values then come from PsnrScoresFromSse, the host function the CPU path uses, so
// the bits are the CPU's by construction. Plain C++ header: g++ code can use it.
//
// Host frames: pictures in ordinary (pageable) memory are copied into pinned staging
// buffers the twin owns, in chunks on the calling thread and a small shared pool of
// helpers (staged_copy.h), each chunk's host-to-device copy queued as soon as it is
// staged, so the host copy of the rest of the pair overlaps the DMA of its start.
// Pictures that are already page-locked (cudaMallocHost, or registered by their owner)
// are copied to the device directly. Only the scored planes travel (luma alone with
// enable_chroma=false). The twin never page-locks the caller's memory.
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
  absl::Status ReserveStaging(size_t frame_bytes);
  // Queues the pictures' first `bytes` bytes to the device buffers on stream_.
  absl::Status Upload(const uint8_t* ref, const uint8_t* dist, size_t bytes);

  PsnrOptions options_;
  cudaStream_t stream_;
  uint8_t* device_frames_ = nullptr;  // reference then distorted
  size_t capacity_bytes_ = 0;         // per picture
  uint8_t* staging_ = nullptr;        // pinned: reference then distorted, staging_bytes_ each
  size_t staging_bytes_ = 0;          // per picture
  unsigned long long* device_sse_ = nullptr;  // 3 counters
  unsigned long long* host_sse_ = nullptr;    // pinned
};

}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_PSNR_CUDA_PSNR_CUDA_H_
