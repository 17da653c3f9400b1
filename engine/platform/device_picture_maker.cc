#include "engine/platform/device_picture_maker.h"

#include <cuda_runtime_api.h>

#include <utility>

#include "engine/platform/cuda_status.h"
#include "engine/platform/host_wait_event.h"

namespace exactq {

absl::StatusOr<std::unique_ptr<DevicePictureMaker>> DevicePictureMaker::Create(int device, size_t picture_bytes,
                                                                               const char* who) {
  EXACTQ_RETURN_IF_CUDA_ERROR(who, cudaSetDevice(device));
  std::unique_ptr<DevicePictureMaker> maker(
      new DevicePictureMaker(DevicePicturePool::Create(device, picture_bytes), who));
  cudaStream_t stream = nullptr;
  EXACTQ_RETURN_IF_CUDA_ERROR(who, cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  maker->stream_ = stream;
  cudaEvent_t done = nullptr;
  EXACTQ_RETURN_IF_CUDA_ERROR(who, CreateHostWaitEvent(&done));
  maker->done_ = done;
  return maker;
}

DevicePictureMaker::~DevicePictureMaker() {
  cudaSetDevice(pool_->device());
  cudaStream_t stream = static_cast<cudaStream_t>(stream_);
  if (stream != nullptr) cudaStreamSynchronize(stream);
  if (done_ != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(done_));
  if (stream != nullptr) cudaStreamDestroy(stream);
}

absl::StatusOr<std::shared_ptr<const DevicePicture>> DevicePictureMaker::Make(Fill fill) {
  absl::StatusOr<std::shared_ptr<DevicePicturePool::Picture>> picture = pool_->Take();
  if (!picture.ok()) return picture.status();
  EXACTQ_RETURN_IF_CUDA_ERROR(who_, cudaSetDevice(pool_->device()));
  if (absl::Status s = fill((*picture)->mutable_bytes(), stream_); !s.ok()) return s;
  cudaEvent_t done = static_cast<cudaEvent_t>(done_);
  EXACTQ_RETURN_IF_CUDA_ERROR(who_, cudaEventRecord(done, static_cast<cudaStream_t>(stream_)));
  EXACTQ_RETURN_IF_CUDA_ERROR(who_, cudaEventSynchronize(done));
  return std::shared_ptr<const DevicePicture>(*std::move(picture));
}

}  // namespace exactq
