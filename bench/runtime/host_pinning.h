// PinnedHost: page-locks an existing host buffer for its lifetime (cudaHostRegister),
// so copies from it run at full PCIe/NVLink speed without a staging copy. Builds
// without CUDA get a no-op (pinned() is false). Also: a device's PCI bus id.
#ifndef EXACTQ_BENCH_RUNTIME_HOST_PINNING_H_
#define EXACTQ_BENCH_RUNTIME_HOST_PINNING_H_

#include <cstddef>
#include <string>

namespace exactq {
namespace bench {

class PinnedHost {
 public:
  PinnedHost(void* data, size_t bytes);
  ~PinnedHost();
  PinnedHost(const PinnedHost&) = delete;
  PinnedHost& operator=(const PinnedHost&) = delete;
  bool pinned() const { return pinned_; }

 private:
  void* data_;
  bool pinned_ = false;
};

// The PCI bus id of CUDA device `device` ("0000:19:00.0"), for NVML; empty without CUDA
// or without that device.
std::string CudaPciBusId(int device);

}  // namespace bench
}  // namespace exactq

#endif  // EXACTQ_BENCH_RUNTIME_HOST_PINNING_H_
