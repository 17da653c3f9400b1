// Device memory that a stream holds outside its scorer (a GPU decoder's surfaces and the
// pictures it keeps on the device), admitted against the same per-GPU limit as the
// scorers' (RuntimeConfig::max_device_bytes; 0: 90% of the device's memory), so that
// decoders and twins together never ask a device for more than the operator allowed.
#ifndef EXACTQ_ENGINE_RUNTIME_DEVICE_MEMORY_H_
#define EXACTQ_ENGINE_RUNTIME_DEVICE_MEMORY_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/runtime/device_memory_ledger.h"

namespace exactq {

// `bytes` on `gpu` for `what`, or ResourceExhausted naming it, the bytes and the limit.
absl::StatusOr<DeviceMemoryReservation> ReserveDeviceMemory(int gpu, uint64_t bytes, absl::string_view what);

}  // namespace exactq

#endif  // EXACTQ_ENGINE_RUNTIME_DEVICE_MEMORY_H_
