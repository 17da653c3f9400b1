// DevicePicture: a picture's bytes in the wire layout, made in one GPU's memory (by the
// GPU's video decoder) and kept there, so a scorer on that GPU reads them without an
// upload. A Frame carries one in place of its host bytes (Frame::device_picture); the
// CPU's paths get host bytes through CopyToHost. Plain C++: the maker owns the memory
// and frees it when the last Frame that holds the picture lets go.
#ifndef EXACTQ_ENGINE_FORMAT_DEVICE_PICTURE_H_
#define EXACTQ_ENGINE_FORMAT_DEVICE_PICTURE_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"

namespace exactq {

class DevicePicture {
 public:
  virtual ~DevicePicture() = default;
  // The CUDA device ordinal whose memory holds the picture.
  virtual int device() const = 0;
  // Device memory: the picture in the wire layout (Frame's), complete before the picture
  // is handed out, unchanged while anyone holds it.
  virtual const uint8_t* bytes() const = 0;
  // Copies the picture's first `size` bytes into host memory (blocking).
  virtual absl::Status CopyToHost(uint8_t* host, size_t size) const = 0;
};

}  // namespace exactq

#endif  // EXACTQ_ENGINE_FORMAT_DEVICE_PICTURE_H_
