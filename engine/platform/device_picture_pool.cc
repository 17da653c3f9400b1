#include "engine/platform/device_picture_pool.h"

#include <cuda_runtime_api.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/platform/cuda_status.h"

namespace exactq {
namespace {

constexpr char kWho[] = "DevicePicturePool";

}  // namespace

DevicePicturePool::Picture::~Picture() { pool_->Give(buffer_); }

int DevicePicturePool::Picture::device() const { return pool_->device(); }

absl::Status DevicePicturePool::Picture::CopyToHost(uint8_t* host, size_t size) const {
  if (size > pool_->bytes()) return absl::OutOfRangeError(absl::StrCat(kWho, ": more bytes than the picture holds"));
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaSetDevice(pool_->device()));
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaMemcpy(host, buffer_, size, cudaMemcpyDeviceToHost));
  return absl::OkStatus();
}

std::shared_ptr<DevicePicturePool> DevicePicturePool::Create(int device, size_t bytes) {
  return std::shared_ptr<DevicePicturePool>(new DevicePicturePool(device, bytes));
}

DevicePicturePool::~DevicePicturePool() {
  cudaSetDevice(device_);
  for (uint8_t* buffer : free_) cudaFree(buffer);
}

absl::StatusOr<std::shared_ptr<DevicePicturePool::Picture>> DevicePicturePool::Take() {
  uint8_t* buffer = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!free_.empty()) {
      buffer = free_.back();
      free_.pop_back();
    }
  }
  if (buffer == nullptr) {
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaSetDevice(device_));
    void* fresh = nullptr;
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaMalloc(&fresh, bytes_));
    buffer = static_cast<uint8_t*>(fresh);
  }
  return std::make_shared<Picture>(shared_from_this(), buffer);
}

void DevicePicturePool::Give(uint8_t* buffer) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(buffer);
}

}  // namespace exactq
