#include "server/memory_budget.h"

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

uint64_t MemoryBudget::reserved() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return reserved_;
}

void MemoryBudget::Release(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  reserved_ -= bytes;
}

}  // namespace exactq::server
