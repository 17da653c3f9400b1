#include "engine/metrics/ssim/cuda/ssim_cuda.h"

#include <cuda_runtime_api.h>

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/exact/ordered_sum_algebra.h"
#include "engine/exact/ordered_sum_cuda.h"
#include "engine/metrics/ssim/cuda/ssim_cuda_pipeline.h"
#include "engine/metrics/ssim/ssim_math.h"
#include "engine/metrics/ssim/ssim_reference.h"
#include "engine/platform/cuda_status.h"
#include "engine/platform/host_wait_event.h"

namespace exactq {
namespace ssim {
namespace {

constexpr char kWho[] = "SsimCuda";

int64_t KeptTapLineSum(int size) {
  int64_t sum = 0;
  for (int pos = 0; pos < size; ++pos) sum += KeptTapSum(pos, size);
  return sum;
}

size_t PlaneBytes(const FrameGeometry& g) { return g.plane_samples(0) * static_cast<size_t>(g.bytes_per_sample()); }

}  // namespace

double SsimWeightSum(int width, int height) {
  // At most 16384*256 per line, so the product is below 2^44: exact in double.
  return static_cast<double>(KeptTapLineSum(width) * KeptTapLineSum(height));
}

bool SsimCudaAvailable(std::string* reason) {
  return exact::CudaDeviceAvailable(reason);  // one definition of "usable"
}

// One frame in flight: its stream, events, device buffers and pinned host memory. Buffers
// only grow; they are touched only while the slot is free (its last frame collected, so
// its stream is idle).
struct SsimCuda::Slot {
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr;     // before the uploads
  cudaEvent_t uploaded = nullptr;  // after them
  cudaEvent_t done = nullptr;      // after the result copy
  void* planes = nullptr;          // device: ref plane, then dist plane
  size_t planes_bytes = 0;
  void* terms = nullptr;  // device
  size_t terms_bytes = 0;
  void* workspace = nullptr;  // device
  size_t workspace_bytes = 0;
  void* staging = nullptr;  // pinned: ref plane, then dist plane (Submit(Frame) only)
  size_t staging_bytes = 0;
  gpu::SsimTermSumResult* result = nullptr;  // pinned
  FrameGeometry geometry;                    // of the frame in flight

  ~Slot() {
    // Destruction cannot report errors; the device may already be gone.
    if (stream != nullptr) cudaStreamSynchronize(stream);
    cudaFree(planes);
    cudaFree(terms);
    cudaFree(workspace);
    cudaFreeHost(staging);
    cudaFreeHost(result);
    for (cudaEvent_t e : {start, uploaded, done}) {
      if (e != nullptr) cudaEventDestroy(e);
    }
    if (stream != nullptr) cudaStreamDestroy(stream);
  }
};

namespace {

// Grows a device buffer to at least `bytes` (contents are not kept).
absl::Status GrowDevice(void*& buffer, size_t& capacity, size_t bytes) {
  if (bytes <= capacity) return absl::OkStatus();
  cudaFree(buffer);
  buffer = nullptr;
  capacity = 0;
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaMalloc(&buffer, bytes));
  capacity = bytes;
  return absl::OkStatus();
}

absl::Status GrowPinned(void*& buffer, size_t& capacity, size_t bytes) {
  if (bytes <= capacity) return absl::OkStatus();
  cudaFreeHost(buffer);
  buffer = nullptr;
  capacity = 0;
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaMallocHost(&buffer, bytes));
  capacity = bytes;
  return absl::OkStatus();
}

gpu::SsimPipelineOptions PipelineOptionsOf(const SsimCudaOptions& o) {
  gpu::SsimPipelineOptions pipeline;
  pipeline.plan_mode = o.plan_mode;
  pipeline.fixed_frame = o.fixed_frame;
  pipeline.force_general_summaries = o.force_general_summaries;
  pipeline.fused = o.fused_pipeline;
  pipeline.segments = o.segment_pipeline;
  return pipeline;
}

}  // namespace

SsimCuda::SsimCuda(const SsimCudaOptions& options) : options_(options) {}

SsimCuda::~SsimCuda() {
  cudaSetDevice(options_.device);
  slots_.clear();
}

absl::StatusOr<std::unique_ptr<SsimCuda>> SsimCuda::Create(const SsimCudaOptions& options) {
  if (options.frames_in_flight < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("SsimCuda: frames_in_flight must be >= 1, got ", options.frames_in_flight));
  }
  std::string reason;
  if (!SsimCudaAvailable(&reason)) return absl::FailedPreconditionError(absl::StrCat("SsimCuda: ", reason));
  int count = 0;
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaGetDeviceCount(&count));
  if (options.device < 0 || options.device >= count) {
    return absl::InvalidArgumentError(
        absl::StrCat("SsimCuda: device ", options.device, " does not exist (", count, " devices)"));
  }
  std::unique_ptr<SsimCuda> gpu(new SsimCuda(options));
  if (absl::Status s = gpu->Init(); !s.ok()) return s;
  return gpu;
}

absl::Status SsimCuda::Init() {
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaSetDevice(options_.device));
  for (int i = 0; i < options_.frames_in_flight; ++i) {
    auto slot = std::make_unique<Slot>();
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaStreamCreateWithFlags(&slot->stream, cudaStreamNonBlocking));
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventCreate(&slot->start));
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventCreate(&slot->uploaded));
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, CreateHostWaitEvent(&slot->done, /*timing=*/true));
    void* result = nullptr;
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaMallocHost(&result, sizeof(gpu::SsimTermSumResult)));
    slot->result = static_cast<gpu::SsimTermSumResult*>(result);
    slots_.push_back(std::move(slot));
  }
  return absl::OkStatus();
}

absl::StatusOr<SsimCuda::Slot*> SsimCuda::ReserveSlot(const FrameGeometry& geometry, bool planes, bool staging) {
  if (absl::Status s = ValidateGeometry(geometry); !s.ok()) return s;
  if (in_flight_ == capacity()) {
    return absl::ResourceExhaustedError(
        absl::StrCat("SsimCuda: ", in_flight_, " frames already in flight; Collect one first"));
  }
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaSetDevice(options_.device));
  Slot& slot = *slots_[static_cast<size_t>((oldest_ + in_flight_) % capacity())];
  const int64_t pixels = static_cast<int64_t>(geometry.width) * geometry.height;
  const size_t plane = PlaneBytes(geometry);
  if (planes) {
    if (absl::Status s = GrowDevice(slot.planes, slot.planes_bytes, 2 * plane); !s.ok()) return s;
  }
  if (absl::Status s = GrowDevice(slot.terms, slot.terms_bytes, gpu::SsimTermBytes(pixels)); !s.ok()) return s;
  if (absl::Status s = GrowDevice(slot.workspace, slot.workspace_bytes, gpu::SsimWorkspaceBytes(pixels)); !s.ok()) {
    return s;
  }
  if (staging) {
    if (absl::Status s = GrowPinned(slot.staging, slot.staging_bytes, 2 * plane); !s.ok()) return s;
  }
  slot.geometry = geometry;
  return &slot;
}

absl::Status SsimCuda::Enqueue(Slot& slot, const void* ref_luma, const void* dist_luma, void* ready) {
  const FrameGeometry& g = slot.geometry;
  const size_t plane = PlaneBytes(g);
  const bool on_device = ready != nullptr;
  const void* d_ref = on_device ? ref_luma : slot.planes;
  const void* d_dist = on_device ? dist_luma : static_cast<const char*>(slot.planes) + plane;
  gpu::SsimDeviceFrame f;
  f.ref = d_ref;
  f.dis = d_dist;
  f.width = g.width;
  f.height = g.height;
  f.bit_depth = g.format.bit_depth;
  f.terms = static_cast<double*>(slot.terms);
  f.workspace = slot.workspace;
  const gpu::SsimPipelineOptions pipeline = PipelineOptionsOf(options_);

  const auto enqueue = [&]() -> absl::Status {
    if (on_device) {
      EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaStreamWaitEvent(slot.stream, static_cast<cudaEvent_t>(ready), 0));
      EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventRecord(slot.start, slot.stream));
    } else {
      EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventRecord(slot.start, slot.stream));
      EXACTQ_RETURN_IF_CUDA_ERROR(
          kWho, cudaMemcpyAsync(const_cast<void*>(d_ref), ref_luma, plane, cudaMemcpyHostToDevice, slot.stream));
      EXACTQ_RETURN_IF_CUDA_ERROR(
          kWho, cudaMemcpyAsync(const_cast<void*>(d_dist), dist_luma, plane, cudaMemcpyHostToDevice, slot.stream));
    }
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventRecord(slot.uploaded, slot.stream));
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, gpu::EnqueueSsimTermSum(f, pipeline, slot.stream, nullptr));
    EXACTQ_RETURN_IF_CUDA_ERROR(
        kWho, cudaMemcpyAsync(slot.result, gpu::SsimTermSumResultOnDevice(f), sizeof(gpu::SsimTermSumResult),
                              cudaMemcpyDeviceToHost, slot.stream));
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventRecord(slot.done, slot.stream));
    return absl::OkStatus();
  };
  if (absl::Status s = enqueue(); !s.ok()) {
    // Whatever was enqueued must finish before the slot's buffers can be reused.
    cudaStreamSynchronize(slot.stream);
    return s;
  }
  ++in_flight_;
  return absl::OkStatus();
}

absl::Status SsimCuda::Submit(const Frame& ref, const Frame& dist) {
  if (absl::Status s = CheckSsimInput(ref.geometry(), dist.geometry()); !s.ok()) return s;
  absl::StatusOr<Slot*> slot = ReserveSlot(ref.geometry(), /*planes=*/true, /*staging=*/true);
  if (!slot.ok()) return slot.status();
  // The slot is free, so nothing on the device still reads its staging.
  const size_t plane = PlaneBytes(ref.geometry());
  char* staging = static_cast<char*>((*slot)->staging);
  std::memcpy(staging, ref.plane_bytes(0), plane);
  std::memcpy(staging + plane, dist.plane_bytes(0), plane);
  return Enqueue(**slot, staging, staging + plane);
}

absl::Status SsimCuda::SubmitLuma(const FrameGeometry& geometry, const void* ref_luma, const void* dist_luma) {
  if (ref_luma == nullptr || dist_luma == nullptr) return absl::InvalidArgumentError("SsimCuda: null luma plane");
  absl::StatusOr<Slot*> slot = ReserveSlot(geometry, /*planes=*/true, /*staging=*/false);
  if (!slot.ok()) return slot.status();
  return Enqueue(**slot, ref_luma, dist_luma);
}

absl::Status SsimCuda::SubmitDevice(const DeviceFramePair& frame) {
  if (frame.device != options_.device || frame.reference == nullptr || frame.distorted == nullptr || frame.planes < 1 ||
      frame.ready == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("SsimCuda: no luma planes ready on device ", options_.device));
  }
  if (absl::Status s = CheckSsimInput(frame.geometry, frame.geometry); !s.ok()) return s;
  absl::StatusOr<Slot*> slot = ReserveSlot(frame.geometry, /*planes=*/false, /*staging=*/false);
  if (!slot.ok()) return slot.status();
  return Enqueue(**slot, frame.reference, frame.distorted, frame.ready);
}

size_t SsimCudaDeviceBytes(const FrameGeometry& geometry) {
  const int64_t pixels = static_cast<int64_t>(geometry.width) * geometry.height;
  return gpu::SsimTermBytes(pixels) + gpu::SsimWorkspaceBytes(pixels) + sizeof(gpu::SsimTermSumResult);
}

absl::StatusOr<SsimCudaFrame> SsimCuda::Collect() {
  if (in_flight_ == 0) return absl::FailedPreconditionError("SsimCuda: no frame in flight");
  Slot& slot = *slots_[static_cast<size_t>(oldest_)];
  // The slot is released whatever happens: on an error its frame is lost, and the
  // caller scores it elsewhere.
  oldest_ = (oldest_ + 1) % capacity();
  --in_flight_;
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaSetDevice(options_.device));
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventSynchronize(slot.done));

  const FrameGeometry& g = slot.geometry;
  const gpu::SsimPipelineOptions pipeline = PipelineOptionsOf(options_);
  if (gpu::NeedsEventWalk(*slot.result, pipeline)) {
    // A check of the segment pipeline refused a step: the event walk sums the terms the
    // slot still holds (nothing else uses the slot until this returns).
    gpu::SsimDeviceFrame f;
    f.width = g.width;
    f.height = g.height;
    f.bit_depth = g.format.bit_depth;
    f.terms = static_cast<double*>(slot.terms);
    f.workspace = slot.workspace;
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, gpu::EnqueueSsimEventWalk(f, pipeline, slot.stream));
    EXACTQ_RETURN_IF_CUDA_ERROR(
        kWho, cudaMemcpyAsync(slot.result, gpu::SsimTermSumResultOnDevice(f), sizeof(gpu::SsimTermSumResult),
                              cudaMemcpyDeviceToHost, slot.stream));
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventRecord(slot.done, slot.stream));
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventSynchronize(slot.done));
  }
  const gpu::SsimTermSumResult& r = *slot.result;
  SsimCudaFrame frame;
  frame.sums.term_sum = gpu::SsimTermSum(r, pipeline);
  frame.sums.weight_sum = SsimWeightSum(g.width, g.height);
  frame.sum_stats.terms = static_cast<int64_t>(g.width) * g.height;
  frame.sum_stats.chunks = gpu::SsimChunkCount(frame.sum_stats.terms);
  frame.sum_stats.chunks_rejected = r.chunks_rejected;
  frame.sum_stats.subchunks_rejected = r.subchunks_rejected;
  frame.sum_stats.terms_one_by_one = r.terms_one_by_one;
  frame.sum_stats.walk_windows = r.walk_windows;
  if (pipeline.segments && !pipeline.fused) {
    frame.sum_stats.segment_accepted = r.segment_status == 0 ? 1 : 0;
    frame.sum_stats.segment_steps = r.segment_steps;
    frame.sum_stats.segment_crossing_lanes = r.segment_crossing_lanes;
    frame.sum_stats.segment_tile_chunks = r.segment_tile_chunks;
  }
  if (frame.sum_stats.segment_accepted) {
    // The event walk did not run: its part of the result is stale.
    frame.sum_stats.chunks_rejected = frame.sum_stats.subchunks_rejected = 0;
    frame.sum_stats.terms_one_by_one = frame.sum_stats.walk_windows = 0;
  }
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventElapsedTime(&frame.upload_ms, slot.start, slot.uploaded));
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventElapsedTime(&frame.compute_ms, slot.uploaded, slot.done));
  absl::StatusOr<FrameScores> scores = SsimOutputs(frame.sums, g, options_.outputs);
  if (!scores.ok()) return scores.status();
  frame.scores = *std::move(scores);
  return frame;
}

absl::StatusOr<FrameScores> SsimCuda::Score(const Frame& ref, const Frame& dist) {
  if (in_flight_ != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("SsimCuda: Score needs no frames in flight (", in_flight_, " are)"));
  }
  if (absl::Status s = Submit(ref, dist); !s.ok()) return s;
  absl::StatusOr<SsimCudaFrame> frame = Collect();
  if (!frame.ok()) return frame.status();
  return std::move(frame->scores);
}

}  // namespace ssim
}  // namespace exactq
