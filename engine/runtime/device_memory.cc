#include "engine/runtime/device_memory.h"

#include "engine/runtime/gpu_scorer.h"

namespace exactq {

absl::StatusOr<DeviceMemoryReservation> ReserveDeviceMemory(int gpu, uint64_t bytes, absl::string_view what) {
  absl::StatusOr<uint64_t> limit = DeviceMemoryLimit(gpu);
  if (!limit.ok()) return limit.status();
  return ReserveDeviceMemoryWithin(gpu, bytes, *limit, what);
}

}  // namespace exactq
