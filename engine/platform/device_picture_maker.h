// DevicePictureMaker: DevicePictures made on one GPU by work enqueued on a stream of the
// maker's own (a host picture's copy, a scaler's kernels), each complete when Make
// returns. Holds the stream, the event it waits on and the pool the pictures come from,
// so that each producer of device pictures states only its own work. CUDA builds only.
//
//   absl::StatusOr<std::unique_ptr<DevicePictureMaker>> maker =
//       DevicePictureMaker::Create(gpu, geometry.frame_bytes(), "PictureUploader");
//   absl::StatusOr<std::shared_ptr<const DevicePicture>> picture =
//       (*maker)->Make([&](uint8_t* bytes, GpuStreamHandle stream) { ... enqueue ...; return absl::OkStatus(); });
#ifndef EXACTQ_ENGINE_PLATFORM_DEVICE_PICTURE_MAKER_H_
#define EXACTQ_ENGINE_PLATFORM_DEVICE_PICTURE_MAKER_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "engine/format/device_picture.h"
#include "engine/platform/device_frame.h"
#include "engine/platform/device_picture_pool.h"

namespace exactq {

class DevicePictureMaker {
 public:
  // Pictures of `picture_bytes` bytes on GPU `device`; errors name `who` and the CUDA call.
  static absl::StatusOr<std::unique_ptr<DevicePictureMaker>> Create(int device, size_t picture_bytes, const char* who);
  ~DevicePictureMaker();
  DevicePictureMaker(const DevicePictureMaker&) = delete;
  DevicePictureMaker& operator=(const DevicePictureMaker&) = delete;

  // A picture from the pool that `fill` writes by enqueueing work on `stream`; complete
  // on return. For one thread at a time.
  using Fill = absl::FunctionRef<absl::Status(uint8_t* picture, GpuStreamHandle stream)>;
  absl::StatusOr<std::shared_ptr<const DevicePicture>> Make(Fill fill);

  int device() const { return pool_->device(); }
  size_t picture_bytes() const { return pool_->bytes(); }

 private:
  DevicePictureMaker(std::shared_ptr<DevicePicturePool> pool, const char* who) : pool_(std::move(pool)), who_(who) {}

  std::shared_ptr<DevicePicturePool> pool_;
  const char* who_;
  void* stream_ = nullptr;  // cudaStream_t
  void* done_ = nullptr;    // cudaEvent_t
};

}  // namespace exactq

#endif  // EXACTQ_ENGINE_PLATFORM_DEVICE_PICTURE_MAKER_H_
