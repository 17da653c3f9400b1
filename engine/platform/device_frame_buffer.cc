#include "engine/platform/device_frame_buffer.h"

#include "absl/strings/str_cat.h"
#include "engine/platform/cuda_status.h"
#include "engine/platform/page_locked.h"
#include "engine/platform/staged_copy.h"

namespace exactq {
namespace {

constexpr char kWho[] = "DeviceFrameBuffer";

// Bytes of a picture's first `planes` planes (they lead the frame's bytes).
size_t LeadingPlaneBytes(const FrameGeometry& g, int planes) {
  return planes >= g.plane_count() ? g.frame_bytes() : g.plane_offset(planes);
}

}  // namespace

DeviceFrameBuffer::~DeviceFrameBuffer() {
  // Destruction cannot report errors; the device may already be gone.
  cudaSetDevice(device_);
  if (ready_ != nullptr) {
    cudaEventSynchronize(ready_);
    cudaEventDestroy(ready_);
  }
  cudaFree(device_pictures_);
  cudaFree(device_previous_);
  cudaFreeHost(staging_);
}

uint64_t DeviceFrameBuffer::DeviceBytes(const FrameGeometry& geometry, int planes, bool previous_reference) {
  return 2 * static_cast<uint64_t>(LeadingPlaneBytes(geometry, planes)) +
         (previous_reference ? static_cast<uint64_t>(LeadingPlaneBytes(geometry, 1)) : 0);
}

absl::Status DeviceFrameBuffer::Reserve(size_t picture_bytes, bool staging) {
  if (ready_ == nullptr) {
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming));
  }
  if (picture_bytes > capacity_) {
    cudaFree(device_pictures_);
    device_pictures_ = nullptr;
    capacity_ = 0;
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaMalloc(reinterpret_cast<void**>(&device_pictures_), 2 * picture_bytes));
    capacity_ = picture_bytes;
  }
  if (staging && picture_bytes > staging_capacity_) {
    cudaFreeHost(staging_);
    staging_ = nullptr;
    staging_capacity_ = 0;
    void* pinned = nullptr;
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaHostAlloc(&pinned, 2 * picture_bytes, cudaHostAllocPortable));
    staging_ = static_cast<uint8_t*>(pinned);
    staging_capacity_ = picture_bytes;
  }
  return absl::OkStatus();
}

absl::StatusOr<DeviceFramePair> DeviceFrameBuffer::Upload(const Frame& reference, const Frame& distorted, int planes,
                                                          cudaStream_t stream, const Frame* previous_reference) {
  const FrameGeometry& g = reference.geometry();
  if (!(g == distorted.geometry())) {
    return absl::InvalidArgumentError(absl::StrCat(kWho, ": reference and distorted geometries differ"));
  }
  if (planes < 1 || planes > g.plane_count()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kWho, ": planes must be 1 to ", g.plane_count(), " for this format, got ", planes));
  }
  if (previous_reference != nullptr && !(previous_reference->geometry() == g)) {
    return absl::InvalidArgumentError(absl::StrCat(kWho, ": the previous reference's geometry differs"));
  }
  const size_t bytes = LeadingPlaneBytes(g, planes);
  const bool direct = IsPageLocked(reference.bytes(), bytes) && IsPageLocked(distorted.bytes(), bytes);
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaSetDevice(device_));
  // The previous upload's copies may still read the staging buffer.
  if (ready_ != nullptr) EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventSynchronize(ready_));
  if (absl::Status s = Reserve(bytes, !direct); !s.ok()) return s;
  uint8_t* const device[2] = {device_pictures_, device_pictures_ + capacity_};
  if (direct) {
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho,
                                cudaMemcpyAsync(device[0], reference.bytes(), bytes, cudaMemcpyHostToDevice, stream));
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho,
                                cudaMemcpyAsync(device[1], distorted.bytes(), bytes, cudaMemcpyHostToDevice, stream));
  } else {
    const CopySpan spans[2] = {{reference.bytes(), staging_, bytes},
                               {distorted.bytes(), staging_ + staging_capacity_, bytes}};
    absl::Status status;
    StagedCopy(spans, [&](size_t span, size_t begin, size_t end) {
      if (!status.ok()) return;  // the helpers finish staging, but no more copies are queued
      status.Update(CudaStatus(cudaMemcpyAsync(device[span] + begin, static_cast<uint8_t*>(spans[span].dst) + begin,
                                               end - begin, cudaMemcpyHostToDevice, stream),
                               kWho, span == 0 ? "cudaMemcpyAsync(reference)" : "cudaMemcpyAsync(distorted)"));
    });
    if (!status.ok()) {
      cudaStreamSynchronize(stream);  // nothing may still read the staging buffer
      return status;
    }
    ++staged_uploads_;
  }
  // A previous reference's first plane: a plain copy (pageable ones are staged by the
  // driver). It is read by motion-like terms only, a third of a 4:2:0 pair's bytes.
  if (previous_reference != nullptr) {
    const size_t luma = LeadingPlaneBytes(g, 1);
    if (luma > previous_capacity_) {
      cudaFree(device_previous_);
      device_previous_ = nullptr;
      previous_capacity_ = 0;
      EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaMalloc(reinterpret_cast<void**>(&device_previous_), luma));
      previous_capacity_ = luma;
    }
    EXACTQ_RETURN_IF_CUDA_ERROR(
        kWho, cudaMemcpyAsync(device_previous_, previous_reference->bytes(), luma, cudaMemcpyHostToDevice, stream));
    uploaded_bytes_ += luma;
  }
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventRecord(ready_, stream));
  uploaded_bytes_ += 2 * static_cast<uint64_t>(bytes);
  DeviceFramePair pair;
  pair.device = device_;
  pair.geometry = g;
  pair.planes = planes;
  pair.reference = device[0];
  pair.distorted = device[1];
  pair.previous_reference = previous_reference != nullptr ? device_previous_ : nullptr;
  pair.ready = ready_;
  return pair;
}

}  // namespace exactq
