#include "engine/runtime/device_memory_ledger.h"

#include <map>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"

namespace exactq {
namespace {

struct Ledger {
  std::mutex mutex;
  std::map<int, uint64_t> admitted;  // per GPU
};

Ledger& TheLedger() {
  static Ledger* ledger = new Ledger();  // never destroyed: reservations may outlive statics
  return *ledger;
}

}  // namespace

DeviceMemoryReservation::~DeviceMemoryReservation() { Release(); }

DeviceMemoryReservation::DeviceMemoryReservation(DeviceMemoryReservation&& other) noexcept
    : gpu_(std::exchange(other.gpu_, -1)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceMemoryReservation& DeviceMemoryReservation::operator=(DeviceMemoryReservation&& other) noexcept {
  if (this != &other) {
    Release();
    gpu_ = std::exchange(other.gpu_, -1);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceMemoryReservation::Release() {
  if (gpu_ < 0) return;
  Ledger& ledger = TheLedger();
  std::lock_guard<std::mutex> lock(ledger.mutex);
  ledger.admitted[gpu_] -= bytes_;
  gpu_ = -1;
  bytes_ = 0;
}

absl::StatusOr<DeviceMemoryReservation> ReserveDeviceMemoryWithin(int gpu, uint64_t bytes, uint64_t limit,
                                                                  absl::string_view what) {
  Ledger& ledger = TheLedger();
  std::lock_guard<std::mutex> lock(ledger.mutex);
  uint64_t& admitted = ledger.admitted[gpu];
  if (bytes > limit || admitted > limit - bytes) {
    return absl::ResourceExhaustedError(absl::StrCat("device memory: ", what, " needs about ", bytes,
                                                     " bytes on cuda:", gpu, ", ", admitted,
                                                     " are admitted already, limit max_device_bytes=", limit));
  }
  admitted += bytes;
  return DeviceMemoryReservation(gpu, bytes);
}

uint64_t DeviceMemoryAdmitted(int gpu) {
  Ledger& ledger = TheLedger();
  std::lock_guard<std::mutex> lock(ledger.mutex);
  auto it = ledger.admitted.find(gpu);
  return it == ledger.admitted.end() ? 0 : it->second;
}

}  // namespace exactq
