#include "engine/metrics/psnr/cuda/psnr_cuda.h"

#include <cub/block/block_reduce.cuh>

#include "absl/strings/str_cat.h"
#include "engine/platform/cuda_status.h"
#include "engine/platform/host_wait_event.h"

namespace exactq {

namespace {

constexpr int kThreads = 256;
constexpr char kWho[] = "PsnrCuda";

// Sum of (a - b)^2 over one plane, in 64-bit integers: exact in any order. A 16-bit
// difference squared is below 2^32, and a plane of at most 2^28 samples keeps the
// sum below 2^60.
template <typename Sample>
__global__ void PlaneSseKernel(const Sample* ref, const Sample* dist, uint64_t samples, unsigned long long* sse) {
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
  if (done_ != nullptr) {
    cudaEventSynchronize(done_);
    cudaEventDestroy(done_);
  }
  frame_buffer_.reset();
  if (device_sse_ != nullptr) cudaFree(device_sse_);
  if (host_sse_ != nullptr) cudaFreeHost(host_sse_);
}

absl::Status PsnrCuda::Reserve() {
  // Each piece once, so that a call after a failed one keeps what it got.
  if (done_ == nullptr) EXACTQ_RETURN_IF_CUDA_ERROR(kWho, CreateHostWaitEvent(&done_));
  if (host_sse_ == nullptr) {
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaMallocHost(&host_sse_, 3 * sizeof(unsigned long long)));
  }
  if (device_sse_ == nullptr)
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaMalloc(&device_sse_, 3 * sizeof(unsigned long long)));
  return absl::OkStatus();
}

absl::Status PsnrCuda::EnqueueSse(const DeviceFramePair& frame, cudaStream_t stream) {
  const FrameGeometry& g = frame.geometry;
  const int planes = PsnrScoredPlanes(options_, g);
  if (frame.planes < planes) {
    return absl::InvalidArgumentError(
        absl::StrCat(kWho, ": the device frame holds ", frame.planes, " planes, psnr reads ", planes));
  }
  if (absl::Status s = Reserve(); !s.ok()) return s;
  // Everything queued on `stream`; on a failure the stream is drained before returning,
  // so that no kernel still reads the pair when the caller reuses it.
  auto enqueue = [&]() -> absl::Status {
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaMemsetAsync(device_sse_, 0, 3 * sizeof(unsigned long long), stream));
    for (int p = 0; p < planes; ++p) {
      const uint64_t samples = g.plane_samples(p);
      const size_t offset = g.plane_offset(p);
      const unsigned blocks = static_cast<unsigned>(std::min<uint64_t>((samples + kThreads - 1) / kThreads, 1024));
      if (g.bytes_per_sample() == 1) {
        PlaneSseKernel<uint8_t><<<blocks, kThreads, 0, stream>>>(frame.reference + offset, frame.distorted + offset,
                                                                 samples, device_sse_ + p);
      } else {
        PlaneSseKernel<uint16_t><<<blocks, kThreads, 0, stream>>>(
            reinterpret_cast<const uint16_t*>(frame.reference + offset),
            reinterpret_cast<const uint16_t*>(frame.distorted + offset), samples, device_sse_ + p);
      }
      EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaGetLastError());
    }
    EXACTQ_RETURN_IF_CUDA_ERROR(
        kWho, cudaMemcpyAsync(host_sse_, device_sse_, 3 * sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventRecord(done_, stream));
    return absl::OkStatus();
  };
  if (absl::Status s = enqueue(); !s.ok()) {
    cudaStreamSynchronize(stream);
    return s;
  }
  enqueued_ = g;
  return absl::OkStatus();
}

absl::StatusOr<std::array<uint64_t, 3>> PsnrCuda::CollectSse() {
  if (done_ == nullptr || enqueued_.width == 0) return absl::FailedPreconditionError("PsnrCuda: no frame enqueued");
  enqueued_ = FrameGeometry{};
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventSynchronize(done_));
  return std::array<uint64_t, 3>{host_sse_[0], host_sse_[1], host_sse_[2]};
}

absl::StatusOr<FrameScores> PsnrCuda::Collect() {
  const FrameGeometry g = enqueued_;
  absl::StatusOr<std::array<uint64_t, 3>> sse = CollectSse();
  if (!sse.ok()) return sse.status();
  const int planes = PsnrScoredPlanes(options_, g);
  return PsnrScoresFromSse(options_, g, absl::MakeConstSpan(sse->data(), static_cast<size_t>(planes)));
}

absl::StatusOr<std::array<uint64_t, 3>> PsnrCuda::PlaneSse(const Frame& ref, const Frame& dist) {
  const FrameGeometry& g = ref.geometry();
  if (!(g == dist.geometry())) return absl::InvalidArgumentError("reference and distorted geometries differ");
  if (frame_buffer_ == nullptr) {
    int device = 0;
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaGetDevice(&device));
    frame_buffer_ = std::make_unique<DeviceFrameBuffer>(device);
  }
  absl::StatusOr<DeviceFramePair> pair = frame_buffer_->Upload(ref, dist, PsnrScoredPlanes(options_, g), stream_);
  if (!pair.ok()) return pair.status();
  if (absl::Status s = EnqueueSse(*pair, stream_); !s.ok()) return s;
  return CollectSse();
}

absl::StatusOr<FrameScores> PsnrCuda::Score(const Frame& ref, const Frame& dist) {
  absl::StatusOr<std::array<uint64_t, 3>> sse = PlaneSse(ref, dist);
  if (!sse.ok()) return sse.status();
  const int planes = PsnrScoredPlanes(options_, ref.geometry());
  return PsnrScoresFromSse(options_, ref.geometry(), absl::MakeConstSpan(sse->data(), static_cast<size_t>(planes)));
}

}  // namespace exactq
