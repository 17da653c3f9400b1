#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "bench/runtime/upload_traffic.h"

namespace exactq {
namespace bench {
namespace {

class CudaUploadTraffic final : public UploadTraffic {
 public:
  CudaUploadTraffic(int device, size_t bytes, double copies_per_second, void* host, void* target, cudaStream_t stream)
      : device_(device), bytes_(bytes), host_(host), target_(target), stream_(stream) {
    const auto period = std::chrono::duration<double>(1.0 / copies_per_second);
    thread_ = std::thread([this, period] {
      cudaSetDevice(device_);
      auto next = std::chrono::steady_clock::now();
      while (!stop_.load()) {
        // One copy at a time, paced: the request's bytes per second, not the link's most.
        if (cudaMemcpyAsync(target_, host_, bytes_, cudaMemcpyHostToDevice, stream_) != cudaSuccess ||
            cudaStreamSynchronize(stream_) != cudaSuccess) {
          return;
        }
        copies_.fetch_add(1);
        next += std::chrono::duration_cast<std::chrono::steady_clock::duration>(period);
        std::this_thread::sleep_until(next);
      }
    });
  }
  ~CudaUploadTraffic() override {
    stop_.store(true);
    thread_.join();
    cudaSetDevice(device_);
    cudaStreamDestroy(stream_);
    cudaFree(target_);
    cudaFreeHost(host_);
  }
  uint64_t copies() const override { return copies_.load(); }

 private:
  int device_;
  size_t bytes_;
  void* host_;
  void* target_;
  cudaStream_t stream_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> copies_{0};
  std::thread thread_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<UploadTraffic>> StartUploadTraffic(int device, size_t bytes, double copies_per_second) {
  if (bytes == 0 || !(copies_per_second > 0)) return absl::InvalidArgumentError("UploadTraffic: nothing to copy");
  if (cudaSetDevice(device) != cudaSuccess) return absl::UnavailableError("cudaSetDevice failed");
  void* host = nullptr;
  void* target = nullptr;
  cudaStream_t stream = nullptr;
  if (cudaHostAlloc(&host, bytes, cudaHostAllocDefault) != cudaSuccess) {
    return absl::ResourceExhaustedError(absl::StrCat("UploadTraffic: cudaHostAlloc of ", bytes, " bytes failed"));
  }
  std::memset(host, 0x5a, bytes);
  if (cudaMalloc(&target, bytes) != cudaSuccess ||
      cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
    cudaFree(target);
    cudaFreeHost(host);
    return absl::ResourceExhaustedError("UploadTraffic: cudaMalloc or cudaStreamCreate failed");
  }
  return std::unique_ptr<UploadTraffic>(
      std::make_unique<CudaUploadTraffic>(device, bytes, copies_per_second, host, target, stream));
}

}  // namespace bench
}  // namespace exactq
