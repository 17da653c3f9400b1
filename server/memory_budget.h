// A server-wide budget of host bytes held for frames in flight (max_buffered_bytes).
// A stream reserves a frame's pair of pictures when the frame's first chunk arrives and
// releases it once the frame is answered; when the budget is short it waits (and stops
// reading) until memory frees, so memory stays bounded whatever clients send (an 8K
// 16-bit 4:4:4 pair is 400 MB) and a stream that sends nothing holds nothing. A pair
// larger than the whole budget is refused with RESOURCE_EXHAUSTED naming the limit.
#ifndef EXACTQ_SERVER_MEMORY_BUDGET_H_
#define EXACTQ_SERVER_MEMORY_BUDGET_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>

#include "absl/status/statusor.h"

namespace exactq::server {

class MemoryBudget {
 public:
  class Reservation {
   public:
    Reservation(Reservation&& other) noexcept : owner_(other.owner_), bytes_(other.bytes_) { other.owner_ = nullptr; }
    Reservation& operator=(Reservation&&) = delete;
    ~Reservation();
    uint64_t bytes() const { return bytes_; }

   private:
    friend class MemoryBudget;
    Reservation(MemoryBudget* owner, uint64_t bytes) : owner_(owner), bytes_(bytes) {}
    MemoryBudget* owner_;
    uint64_t bytes_;
  };

  explicit MemoryBudget(uint64_t limit_bytes) : limit_(limit_bytes) {}

  // Now, or RESOURCE_EXHAUSTED naming the limit.
  absl::StatusOr<Reservation> Reserve(uint64_t bytes);
  // Waits until `bytes` fit; RESOURCE_EXHAUSTED at once if they never can, CANCELLED
  // once give_up() returns true (asked every 100 ms).
  absl::StatusOr<Reservation> ReserveWhenAvailable(uint64_t bytes, const std::function<bool()>& give_up);
  // OK when `bytes` fit in the whole budget (what a stream's header is checked against).
  absl::Status CheckFits(uint64_t bytes) const;
  uint64_t reserved() const;

 private:
  void Release(uint64_t bytes);

  const uint64_t limit_;
  mutable std::mutex mutex_;
  std::condition_variable released_;
  uint64_t reserved_ = 0;
};

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_MEMORY_BUDGET_H_
