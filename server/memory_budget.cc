#include "server/memory_budget.h"

#include <chrono>

#include "absl/strings/str_cat.h"

namespace exactq::server {

MemoryBudget::Reservation::~Reservation() {
  if (owner_ != nullptr) owner_->Release(bytes_);
}

absl::StatusOr<MemoryBudget::Reservation> MemoryBudget::Reserve(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (bytes > limit_ - reserved_ || reserved_ > limit_) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "frames in flight need ", bytes, " bytes; the server holds ", reserved_, " of its limit max_buffered_bytes=",
        limit_, bytes > limit_ ? " (this stream alone exceeds it)" : "; retry later"));
  }
  reserved_ += bytes;
  return Reservation(this, bytes);
}

absl::Status MemoryBudget::CheckFits(uint64_t bytes) const {
  if (bytes <= limit_) return absl::OkStatus();
  return absl::ResourceExhaustedError(
      absl::StrCat("a frame's pictures need ", bytes, " bytes, more than the limit max_buffered_bytes=", limit_));
}

absl::StatusOr<MemoryBudget::Reservation> MemoryBudget::ReserveWhenAvailable(uint64_t bytes,
                                                                             const std::function<bool()>& give_up) {
  if (absl::Status fits = CheckFits(bytes); !fits.ok()) return fits;
  std::unique_lock<std::mutex> lock(mutex_);
  while (reserved_ > limit_ || bytes > limit_ - reserved_) {
    if (give_up()) return absl::CancelledError("gave up waiting for max_buffered_bytes");
    released_.wait_for(lock, std::chrono::milliseconds(100));
  }
  reserved_ += bytes;
  return Reservation(this, bytes);
}

uint64_t MemoryBudget::reserved() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return reserved_;
}

void MemoryBudget::Release(uint64_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    reserved_ -= bytes;
  }
  released_.notify_all();
}

}  // namespace exactq::server
