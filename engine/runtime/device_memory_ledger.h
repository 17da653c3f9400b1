// DeviceMemoryLedger: device memory admitted per GPU across the process, so that
// streams never ask a device for more than the operator allowed. Everything that holds
// device memory for a stream reserves it here first: a GPU scorer its twins' buffers and
// device frame, the server a GPU decoder's surfaces. Plain C++ (the limit comes from the
// caller); ReserveDeviceMemory (device_memory.h) is the runtime's entry point.
#ifndef EXACTQ_ENGINE_RUNTIME_DEVICE_MEMORY_LEDGER_H_
#define EXACTQ_ENGINE_RUNTIME_DEVICE_MEMORY_LEDGER_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace exactq {

// Bytes admitted on one GPU, given back when it goes. Move-only.
class DeviceMemoryReservation {
 public:
  DeviceMemoryReservation() = default;
  ~DeviceMemoryReservation();
  DeviceMemoryReservation(DeviceMemoryReservation&& other) noexcept;
  DeviceMemoryReservation& operator=(DeviceMemoryReservation&& other) noexcept;
  DeviceMemoryReservation(const DeviceMemoryReservation&) = delete;
  DeviceMemoryReservation& operator=(const DeviceMemoryReservation&) = delete;

  int gpu() const { return gpu_; }
  uint64_t bytes() const { return bytes_; }

 private:
  friend absl::StatusOr<DeviceMemoryReservation> ReserveDeviceMemoryWithin(int, uint64_t, uint64_t, absl::string_view);
  DeviceMemoryReservation(int gpu, uint64_t bytes) : gpu_(gpu), bytes_(bytes) {}
  void Release();

  int gpu_ = -1;
  uint64_t bytes_ = 0;
};

// `bytes` more on `gpu` if the admitted total stays within `limit`; else
// ResourceExhausted naming `what` ("this stream's scorer", "the GPU decoder of ..."),
// the bytes, what is admitted already and the limit (max_device_bytes).
absl::StatusOr<DeviceMemoryReservation> ReserveDeviceMemoryWithin(int gpu, uint64_t bytes, uint64_t limit,
                                                                  absl::string_view what);

// Bytes admitted on `gpu` now.
uint64_t DeviceMemoryAdmitted(int gpu);

}  // namespace exactq

#endif  // EXACTQ_ENGINE_RUNTIME_DEVICE_MEMORY_LEDGER_H_
