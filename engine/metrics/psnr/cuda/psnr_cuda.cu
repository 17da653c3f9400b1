#include "engine/metrics/psnr/cuda/psnr_cuda.h"

#include <cub/block/block_reduce.cuh>

#include "absl/strings/str_cat.h"
#include "engine/metrics/cuda/page_locked.h"
#include "engine/metrics/psnr/cuda/staged_copy.h"

namespace exactq {

namespace {

constexpr int kThreads = 256;

absl::Status Check(cudaError_t error, const char* call) {
  if (error == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(call, ": ", cudaGetErrorName(error), " (", cudaGetErrorString(error), ")"));
}

// Sum of (a - b)^2 over one plane, in 64-bit integers: exact in any order. A 16-bit
// difference squared is below 2^32, and a plane of at most 2^28 samples keeps the
// sum below 2^60.
template <typename Sample>
__global__ void PlaneSseKernel(const Sample* ref, const Sample* dist, uint64_t samples,
                               unsigned long long* sse) {
  using BlockReduce = cub::BlockReduce<unsigned long long, kThreads>;
  __shared__ typename BlockReduce::TempStorage storage;
  unsigned long long local = 0;
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(kThreads) + threadIdx.x; i < samples;
       i += static_cast<uint64_t>(gridDim.x) * kThreads) {
    const long long d = static_cast<long long>(ref[i]) - static_cast<long long>(dist[i]);
    local += static_cast<unsigned long long>(d * d);
  }
  const unsigned long long block = BlockReduce(storage).Sum(local);
  if (threadIdx.x == 0) atomicAdd(sse, block);
}

}  // namespace

PsnrCuda::PsnrCuda(PsnrOptions options, cudaStream_t stream) : options_(options), stream_(stream) {}

PsnrCuda::~PsnrCuda() {
  if (device_frames_ != nullptr) cudaFree(device_frames_);
  if (device_sse_ != nullptr) cudaFree(device_sse_);
  if (host_sse_ != nullptr) cudaFreeHost(host_sse_);
  if (staging_ != nullptr) cudaFreeHost(staging_);
}

absl::Status PsnrCuda::Reserve(size_t frame_bytes) {
  if (device_sse_ == nullptr) {
    if (absl::Status s = Check(cudaMalloc(&device_sse_, 3 * sizeof(unsigned long long)), "cudaMalloc"); !s.ok()) {
      return s;
    }
    if (absl::Status s = Check(cudaMallocHost(&host_sse_, 3 * sizeof(unsigned long long)), "cudaMallocHost");
        !s.ok()) {
      return s;
    }
  }
  if (frame_bytes <= capacity_bytes_) return absl::OkStatus();
  if (device_frames_ != nullptr) cudaFree(device_frames_);
  device_frames_ = nullptr;
  capacity_bytes_ = 0;
  if (absl::Status s = Check(cudaMalloc(&device_frames_, 2 * frame_bytes), "cudaMalloc"); !s.ok()) return s;
  capacity_bytes_ = frame_bytes;
  return absl::OkStatus();
}

absl::Status PsnrCuda::ReserveStaging(size_t frame_bytes) {
  if (frame_bytes <= staging_bytes_) return absl::OkStatus();
  if (staging_ != nullptr) cudaFreeHost(staging_);
  staging_ = nullptr;
  staging_bytes_ = 0;
  void* staging = nullptr;
  if (absl::Status s = Check(cudaHostAlloc(&staging, 2 * frame_bytes, cudaHostAllocPortable), "cudaHostAlloc");
      !s.ok()) {
    return s;
  }
  staging_ = static_cast<uint8_t*>(staging);
  staging_bytes_ = frame_bytes;
  return absl::OkStatus();
}

absl::Status PsnrCuda::Upload(const uint8_t* ref, const uint8_t* dist, size_t bytes) {
  uint8_t* const device[2] = {device_frames_, device_frames_ + capacity_bytes_};
  if (gpu_host::IsPageLocked(ref, bytes) && gpu_host::IsPageLocked(dist, bytes)) {
    if (absl::Status s = Check(cudaMemcpyAsync(device[0], ref, bytes, cudaMemcpyHostToDevice, stream_),
                               "cudaMemcpyAsync(reference)");
        !s.ok()) {
      return s;
    }
    return Check(cudaMemcpyAsync(device[1], dist, bytes, cudaMemcpyHostToDevice, stream_),
                 "cudaMemcpyAsync(distorted)");
  }
  if (absl::Status s = ReserveStaging(bytes); !s.ok()) return s;
  // The previous frame's copies have finished (every call ends with the stream idle), so
  // the staging buffer is free.
  const CopySpan spans[2] = {{ref, staging_, bytes}, {dist, staging_ + staging_bytes_, bytes}};
  absl::Status status;
  StagedCopy(spans, [&](size_t span, size_t begin, size_t end) {
    if (!status.ok()) return;  // keep staging (the helpers are running) but queue no more
    status.Update(Check(cudaMemcpyAsync(device[span] + begin, static_cast<uint8_t*>(spans[span].dst) + begin,
                                        end - begin, cudaMemcpyHostToDevice, stream_),
                        span == 0 ? "cudaMemcpyAsync(reference)" : "cudaMemcpyAsync(distorted)"));
  });
  return status;
}

absl::StatusOr<std::array<uint64_t, 3>> PsnrCuda::PlaneSse(const Frame& ref, const Frame& dist) {
  const FrameGeometry& g = ref.geometry();
  if (!(g == dist.geometry())) return absl::InvalidArgumentError("reference and distorted geometries differ");
  const int planes = PsnrScoredPlanes(options_, g);
  // The scored planes lead the frame (Y, Cb, Cr): only they go to the device.
  const size_t bytes = planes >= g.plane_count() ? ref.size_bytes() : g.plane_offset(planes);
  if (absl::Status s = Reserve(bytes); !s.ok()) return s;
  uint8_t* d_ref = device_frames_;
  uint8_t* d_dist = device_frames_ + capacity_bytes_;
  // Everything queued on stream_; on a failure the stream is drained before returning so
  // that no copy still reads the staging buffer when the next call refills it.
  auto enqueue = [&]() -> absl::Status {
    if (absl::Status s = Check(cudaMemsetAsync(device_sse_, 0, 3 * sizeof(unsigned long long), stream_),
                               "cudaMemsetAsync");
        !s.ok()) {
      return s;
    }
    if (absl::Status s = Upload(ref.bytes(), dist.bytes(), bytes); !s.ok()) return s;
    for (int p = 0; p < planes; ++p) {
      const uint64_t samples = g.plane_samples(p);
      const size_t offset = g.plane_offset(p);
      const unsigned blocks = static_cast<unsigned>(std::min<uint64_t>((samples + kThreads - 1) / kThreads, 1024));
      if (g.bytes_per_sample() == 1) {
        PlaneSseKernel<uint8_t><<<blocks, kThreads, 0, stream_>>>(d_ref + offset, d_dist + offset, samples,
                                                                   device_sse_ + p);
      } else {
        PlaneSseKernel<uint16_t><<<blocks, kThreads, 0, stream_>>>(
            reinterpret_cast<const uint16_t*>(d_ref + offset), reinterpret_cast<const uint16_t*>(d_dist + offset),
            samples, device_sse_ + p);
      }
      if (absl::Status s = Check(cudaGetLastError(), "PlaneSseKernel launch"); !s.ok()) return s;
    }
    return Check(cudaMemcpyAsync(host_sse_, device_sse_, 3 * sizeof(unsigned long long), cudaMemcpyDeviceToHost,
                                 stream_),
                 "cudaMemcpyAsync(sse)");
  };
  if (absl::Status s = enqueue(); !s.ok()) {
    cudaStreamSynchronize(stream_);
    return s;
  }
  if (absl::Status s = Check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); !s.ok()) return s;
  return std::array<uint64_t, 3>{host_sse_[0], host_sse_[1], host_sse_[2]};
}

absl::StatusOr<FrameScores> PsnrCuda::Score(const Frame& ref, const Frame& dist) {
  absl::StatusOr<std::array<uint64_t, 3>> sse = PlaneSse(ref, dist);
  if (!sse.ok()) return sse.status();
  const int planes = PsnrScoredPlanes(options_, ref.geometry());
  return PsnrScoresFromSse(options_, ref.geometry(), absl::MakeConstSpan(sse->data(), static_cast<size_t>(planes)));
}

}  // namespace exactq
