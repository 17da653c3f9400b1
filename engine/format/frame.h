// Frame: one picture in the wire layout, held in a single contiguous buffer.
//
// The buffer is exactly FrameGeometry::frame_bytes() long and is laid out as on the
// wire (planar Y, Cb, Cr; packed rows; 16-bit little-endian above 8 bits), so a file
// reader or the server fills it with plain copies of incoming bytes and never
// touches a pixel. Metrics read planes through typed pointers. Check sample values
// with ValidateSampleRange once, where bytes enter the process: a 10-bit frame whose
// words hold 1023+ is not a 10-bit frame.
//
//   absl::StatusOr<Frame> frame = Frame::Create(geometry);
//   std::memcpy(frame->mutable_bytes(), chunk.data(), chunk.size());
//   if (absl::Status s = ValidateSampleRange(*frame); !s.ok()) return s;
//   const uint16_t* luma = frame->plane16(0);  // bit_depth > 8
//
// Storage comes from a std::pmr::memory_resource (default: the default resource), so
// the server can receive pictures straight into page-locked memory that the GPU reads
// without a staging copy. A moved frame keeps its buffer and resource; a copy's
// buffer comes from the default resource (pmr semantics); Reset keeps the resource.
//
// A picture decoded on a GPU may stay there: the frame then carries a DevicePicture and
// its host bytes are unspecified (host_bytes_valid() is false) until CopyDeviceToHost.
// Code that reads pixels on the host checks host_bytes_valid() first; a GPU scorer on
// the picture's device reads the device bytes instead of uploading.

#ifndef EXACTQ_ENGINE_FORMAT_FRAME_H_
#define EXACTQ_ENGINE_FORMAT_FRAME_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <memory_resource>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/format/device_picture.h"
#include "engine/format/frame_buffer.h"
#include "engine/format/frame_geometry.h"

namespace exactq {

// The typed plane accessors read the little-endian wire words in place.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "Frame assumes a little-endian host (the wire layout is little-endian)");

class Frame {
 public:
  // An empty frame (0x0); Reset() or a reader gives it a geometry.
  Frame() = default;

  // A zero-filled frame; InvalidArgument when the geometry is invalid.
  static absl::StatusOr<Frame> Create(const FrameGeometry& geometry,
                                      std::pmr::memory_resource* resource = std::pmr::get_default_resource());

  // Gives the frame a new geometry, keeping the allocation when it is large enough.
  // Sample values are unspecified afterwards: callers overwrite every byte. Drops the
  // device picture, if any.
  absl::Status Reset(const FrameGeometry& geometry);

  // The picture's bytes on a GPU, in place of the host bytes (whose values are then
  // unspecified). The geometry stays; the picture must hold geometry().frame_bytes().
  void SetDevicePicture(std::shared_ptr<const DevicePicture> picture);
  // The device picture, or null for a frame whose bytes are on the host only.
  const DevicePicture* device_picture() const { return device_picture_.get(); }
  // False while the pixels are only on the device.
  bool host_bytes_valid() const { return host_bytes_valid_ || device_picture_ == nullptr; }
  // Copies the device picture into the host bytes (keeping the device picture); nothing
  // to do when the host bytes are valid.
  absl::Status CopyDeviceToHost();

  const FrameGeometry& geometry() const { return geometry_; }

  // The whole frame in the wire layout, frame_bytes() long.
  const uint8_t* bytes() const { return reinterpret_cast<const uint8_t*>(words_.data()); }
  uint8_t* mutable_bytes() { return reinterpret_cast<uint8_t*>(words_.data()); }
  size_t size_bytes() const { return geometry_.frame_bytes(); }
  // Where the buffer comes from (and goes back to).
  std::pmr::memory_resource* memory_resource() const { return words_.resource(); }

  // Plane p's bytes in the wire layout.
  const uint8_t* plane_bytes(int plane) const { return bytes() + geometry_.plane_offset(plane); }
  uint8_t* mutable_plane_bytes(int plane) { return mutable_bytes() + geometry_.plane_offset(plane); }

  // Typed plane access: plane8 for 8-bit frames, plane16 above (the caller picks by
  // geometry().bytes_per_sample(); a mismatch is a programming error).
  const uint8_t* plane8(int plane) const { return plane_bytes(plane); }
  uint8_t* mutable_plane8(int plane) { return mutable_plane_bytes(plane); }
  const uint16_t* plane16(int plane) const { return reinterpret_cast<const uint16_t*>(plane_bytes(plane)); }
  uint16_t* mutable_plane16(int plane) { return reinterpret_cast<uint16_t*>(mutable_plane_bytes(plane)); }

  // One sample, whatever the depth. For tests, generators and error paths, not for
  // per-pixel loops.
  uint32_t sample(int plane, int x, int y) const;
  void set_sample(int plane, int x, int y, uint32_t value);

 private:
  FrameGeometry geometry_;
  // Stored as 16-bit words so plane16() is properly typed and aligned; bytes() views
  // the same storage through unsigned char, which may alias anything.
  FrameBuffer words_;
  std::shared_ptr<const DevicePicture> device_picture_;
  bool host_bytes_valid_ = true;
};

// The frame itself when its host bytes are valid; else its device picture copied into
// *scratch (given the frame's geometry), which is returned. For code that reads pixels on
// the host from frames it may not change.
absl::StatusOr<const Frame*> HostReadable(const Frame& frame, Frame* scratch);

// InvalidArgument naming the plane, row and column of the first sample (in wire
// order) that exceeds 2^bit_depth - 1. Always OK at 8 and 16 bits.
absl::Status ValidateSampleRange(const Frame& frame);

}  // namespace exactq

#endif  // EXACTQ_ENGINE_FORMAT_FRAME_H_
