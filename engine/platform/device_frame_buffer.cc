#include "engine/platform/device_frame_buffer.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/platform/cuda_status.h"
#include "engine/platform/host_wait_event.h"
#include "engine/platform/page_locked.h"
#include "engine/platform/staged_copy.h"

namespace exactq {
namespace {

constexpr char kWho[] = "DeviceFrameBuffer";

// Bytes of a picture's first `planes` planes (they lead the frame's bytes).
size_t LeadingPlaneBytes(const FrameGeometry& g, int planes) {
  return planes >= g.plane_count() ? g.frame_bytes() : g.plane_offset(planes);
}

// Bytes kept for each picture of the pair: its size rounded up to the alignment
// cudaMalloc gives, so that the distorted picture, which follows the reference, starts as
// aligned as the reference does. (An odd-sized 8-bit picture followed by a 16-bit one that
// fits in its room would otherwise put the 16-bit samples at odd addresses.)
constexpr size_t kPictureAlignment = 256;
size_t SlotBytes(size_t picture_bytes) {
  return (picture_bytes + kPictureAlignment - 1) / kPictureAlignment * kPictureAlignment;
}

// The picture's bytes already on `device` (made there: Frame::device_picture), or null
// when they must be copied.
const uint8_t* ResidentOn(const Frame& frame, int device) {
  const DevicePicture* picture = frame.device_picture();
  return picture != nullptr && picture->device() == device ? picture->bytes() : nullptr;
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
  return 2 * static_cast<uint64_t>(SlotBytes(LeadingPlaneBytes(geometry, planes))) +
         (previous_reference ? static_cast<uint64_t>(LeadingPlaneBytes(geometry, 1)) : 0);
}

absl::Status DeviceFrameBuffer::Reserve(size_t bytes, bool staging) {
  const size_t picture_bytes = SlotBytes(bytes);
  if (ready_ == nullptr) {
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, CreateHostWaitEvent(&ready_));
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
  const Frame* const frames[2] = {&reference, &distorted};
  const uint8_t* resident[2] = {ResidentOn(reference, device_), ResidentOn(distorted, device_)};
  // With fixed addresses a picture on this device is copied into the buffer, on the device.
  const uint8_t* on_device[2] = {nullptr, nullptr};
  if (fixed_addresses_) {
    for (int i = 0; i < 2; ++i) std::swap(on_device[i], resident[i]);
  }
  // Host pictures are page-locked (copied by the DMA engine directly) or staged; a
  // picture made on another GPU is copied from there (no host copy).
  bool direct = true;
  bool any_copy = false;
  for (int i = 0; i < 2; ++i) {
    if (resident[i] != nullptr) continue;
    any_copy = true;
    if (on_device[i] == nullptr && frames[i]->device_picture() == nullptr && !IsPageLocked(frames[i]->bytes(), bytes)) {
      direct = false;
    }
  }
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaSetDevice(device_));
  // The previous upload's copies may still read the staging buffer.
  if (ready_ != nullptr) EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventSynchronize(ready_));
  if (any_copy) {
    if (absl::Status s = Reserve(bytes, !direct); !s.ok()) return s;
  } else if (ready_ == nullptr) {
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, CreateHostWaitEvent(&ready_));
  }
  uint8_t* const device[2] = {device_pictures_, device_pictures_ + capacity_};
  uint64_t copied = 0;
  std::vector<CopySpan> staged;
  std::vector<int> staged_side;
  for (int i = 0; i < 2; ++i) {
    if (resident[i] != nullptr) continue;
    const char* call = i == 0 ? "cudaMemcpyAsync(reference)" : "cudaMemcpyAsync(distorted)";
    if (on_device[i] != nullptr) {
      if (absl::Status s =
              CudaStatus(cudaMemcpyAsync(device[i], on_device[i], bytes, cudaMemcpyDeviceToDevice, stream), kWho, call);
          !s.ok()) {
        return s;
      }
      resident[i] = device[i];
      continue;  // not copied to the device: it was there
    }
    if (const DevicePicture* elsewhere = frames[i]->device_picture(); elsewhere != nullptr) {
      EXACTQ_RETURN_IF_CUDA_ERROR(
          kWho, cudaMemcpyPeerAsync(device[i], device_, elsewhere->bytes(), elsewhere->device(), bytes, stream));
    } else if (direct) {
      if (absl::Status s = CudaStatus(
              cudaMemcpyAsync(device[i], frames[i]->bytes(), bytes, cudaMemcpyHostToDevice, stream), kWho, call);
          !s.ok()) {
        return s;
      }
    } else {
      staged.push_back({frames[i]->bytes(), staging_ + static_cast<size_t>(i) * staging_capacity_, bytes});
      staged_side.push_back(i);
    }
    resident[i] = device[i];
    copied += bytes;
  }
  if (!staged.empty()) {
    absl::Status status;
    StagedCopy(staged, [&](size_t span, size_t begin, size_t end) {
      if (!status.ok()) return;  // the helpers finish staging, but no more copies are queued
      const int side = staged_side[span];
      status.Update(CudaStatus(cudaMemcpyAsync(device[side] + begin, static_cast<uint8_t*>(staged[span].dst) + begin,
                                               end - begin, cudaMemcpyHostToDevice, stream),
                               kWho, side == 0 ? "cudaMemcpyAsync(reference)" : "cudaMemcpyAsync(distorted)"));
    });
    if (!status.ok()) {
      cudaStreamSynchronize(stream);  // nothing may still read the staging buffer
      return status;
    }
    ++staged_uploads_;
  }
  // A previous reference's first plane: a plain copy (pageable ones are staged by the
  // driver), or none when it is on this device already. It is read by motion-like
  // terms only, a third of a 4:2:0 pair's bytes.
  const uint8_t* previous = nullptr;
  if (previous_reference != nullptr) previous = ResidentOn(*previous_reference, device_);
  if (previous_reference != nullptr && previous == nullptr) {
    const size_t luma = LeadingPlaneBytes(g, 1);
    if (luma > previous_capacity_) {
      cudaFree(device_previous_);
      device_previous_ = nullptr;
      previous_capacity_ = 0;
      EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaMalloc(reinterpret_cast<void**>(&device_previous_), luma));
      previous_capacity_ = luma;
    }
    if (const DevicePicture* elsewhere = previous_reference->device_picture(); elsewhere != nullptr) {
      EXACTQ_RETURN_IF_CUDA_ERROR(
          kWho, cudaMemcpyPeerAsync(device_previous_, device_, elsewhere->bytes(), elsewhere->device(), luma, stream));
    } else {
      EXACTQ_RETURN_IF_CUDA_ERROR(
          kWho, cudaMemcpyAsync(device_previous_, previous_reference->bytes(), luma, cudaMemcpyHostToDevice, stream));
    }
    copied += luma;
    previous = device_previous_;
  }
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventRecord(ready_, stream));
  uploaded_bytes_ += copied;
  DeviceFramePair pair;
  pair.device = device_;
  pair.geometry = g;
  pair.planes = planes;
  pair.reference = resident[0];
  pair.distorted = resident[1];
  pair.previous_reference = previous;
  pair.ready = ready_;
  return pair;
}

}  // namespace exactq
