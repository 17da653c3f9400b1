// DevicePicturePool: device buffers of one size on one GPU, handed out as the
// DevicePictures that code making pictures on the device (the GPU decoder's surfaces
// made planar, the scaler's twin) fills and hands on in Frames. A picture's buffer comes
// back to the pool when the last Frame holding it lets go; the pool frees them when it
// and every picture are gone. Thread-safe.
//
//   std::shared_ptr<DevicePicturePool> pool = DevicePicturePool::Create(gpu, geometry.frame_bytes());
//   absl::StatusOr<std::shared_ptr<DevicePicturePool::Picture>> picture = pool->Take();
//   ... kernels write (*picture)->mutable_bytes() on a stream; wait for them ...
//   frame.SetDevicePicture(*std::move(picture));
#ifndef EXACTQ_ENGINE_PLATFORM_DEVICE_PICTURE_POOL_H_
#define EXACTQ_ENGINE_PLATFORM_DEVICE_PICTURE_POOL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/format/device_picture.h"

namespace exactq {

class DevicePicturePool : public std::enable_shared_from_this<DevicePicturePool> {
 public:
  class Picture final : public DevicePicture {
   public:
    Picture(std::shared_ptr<DevicePicturePool> pool, uint8_t* buffer) : pool_(std::move(pool)), buffer_(buffer) {}
    ~Picture() override;
    int device() const override;
    const uint8_t* bytes() const override { return buffer_; }
    uint8_t* mutable_bytes() { return buffer_; }
    absl::Status CopyToHost(uint8_t* host, size_t size) const override;

   private:
    std::shared_ptr<DevicePicturePool> pool_;
    uint8_t* buffer_;
  };

  static std::shared_ptr<DevicePicturePool> Create(int device, size_t bytes);
  ~DevicePicturePool();
  DevicePicturePool(const DevicePicturePool&) = delete;
  DevicePicturePool& operator=(const DevicePicturePool&) = delete;

  // A picture of bytes() bytes (contents unspecified): a returned buffer, or a new one.
  absl::StatusOr<std::shared_ptr<Picture>> Take();

  int device() const { return device_; }
  size_t bytes() const { return bytes_; }

 private:
  DevicePicturePool(int device, size_t bytes) : device_(device), bytes_(bytes) {}
  void Give(uint8_t* buffer);

  const int device_;
  const size_t bytes_;
  std::mutex mutex_;
  std::vector<uint8_t*> free_;
};

}  // namespace exactq

#endif  // EXACTQ_ENGINE_PLATFORM_DEVICE_PICTURE_POOL_H_
