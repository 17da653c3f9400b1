// DeviceFrameBuffer: a frame pair's planes on one device, uploaded from host Frames. The
// one place that chooses how a picture reaches the device: a picture made on this device
// (Frame::device_picture, the GPU decoder's) is read where it is, with no copy;
// page-locked pictures (the server's frame buffers) are copied by the DMA engine
// directly; others are copied into pinned staging in chunks on a helper pool
// (staged_copy.h), each chunk's DMA queued as soon as it is staged; a picture made on
// another GPU is copied from there. Every metric of a request then reads the same
// DeviceFramePair.
//
//   DeviceFrameBuffer frame(device);
//   absl::StatusOr<DeviceFramePair> pair = frame.Upload(ref, dist, planes, stream);  // async
//   twin->Enqueue(*pair, stream); ... twin->Collect();
//
// Not thread-safe; one per frame in flight. Buffers grow to the largest frame seen.
#ifndef EXACTQ_ENGINE_PLATFORM_DEVICE_FRAME_BUFFER_H_
#define EXACTQ_ENGINE_PLATFORM_DEVICE_FRAME_BUFFER_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "engine/format/frame.h"
#include "engine/format/frame_geometry.h"
#include "engine/platform/device_frame.h"

namespace exactq {

class DeviceFrameBuffer {
 public:
  explicit DeviceFrameBuffer(int device) : device_(device) {}
  ~DeviceFrameBuffer();
  DeviceFrameBuffer(const DeviceFrameBuffer&) = delete;
  DeviceFrameBuffer& operator=(const DeviceFrameBuffer&) = delete;

  // Enqueues on `stream` the copies of both pictures' first `planes` planes and the
  // pair's ready event, and returns the pair. Waits first for the previous upload's
  // copies (its staging is reused); the caller must have collected the frames that read
  // the previous pair. The frames must have the same geometry and stay unchanged until
  // the ready event completes (a device picture on this device: until the frames that
  // read the pair are collected, for the pair points at it). INVALID_ARGUMENT for
  // mismatched geometries or planes out of range; CUDA errors as cuda_status.h.
  // With `previous_reference` (the frame before, same geometry), its first plane goes up
  // too, as the pair's previous_reference.
  absl::StatusOr<DeviceFramePair> Upload(const Frame& reference, const Frame& distorted, int planes,
                                         cudaStream_t stream, const Frame* previous_reference = nullptr);

  // Pictures made on this device are copied into the buffer's own memory (device to
  // device) instead of read in place, so the pair's addresses are the same every frame
  // (for twins that replay a CUDA graph captured with them).
  void set_fixed_addresses(bool fixed) { fixed_addresses_ = fixed; }

  // Bytes copied to this device since creation (both pictures, every upload; pictures
  // already on the device count nothing).
  uint64_t uploaded_bytes() const { return uploaded_bytes_; }
  // Uploads that went through pinned staging (the pictures were not page-locked).
  int64_t staged_uploads() const { return staged_uploads_; }

  // Device memory the buffer holds for `planes` planes of this geometry (and a previous
  // reference's first plane).
  static uint64_t DeviceBytes(const FrameGeometry& geometry, int planes, bool previous_reference = false);

 private:
  // Room for two pictures of `bytes` each (and their staging), grown as needed.
  absl::Status Reserve(size_t bytes, bool staging);

  int device_;
  uint8_t* device_pictures_ = nullptr;  // reference, then distorted, capacity_ bytes each
  size_t capacity_ = 0;
  uint8_t* device_previous_ = nullptr;  // a previous reference's first plane
  size_t previous_capacity_ = 0;
  uint8_t* staging_ = nullptr;  // pinned: the same layout, staging_capacity_ bytes each
  size_t staging_capacity_ = 0;
  cudaEvent_t ready_ = nullptr;
  bool fixed_addresses_ = false;
  uint64_t uploaded_bytes_ = 0;
  int64_t staged_uploads_ = 0;
};

}  // namespace exactq

#endif  // EXACTQ_ENGINE_PLATFORM_DEVICE_FRAME_BUFFER_H_
