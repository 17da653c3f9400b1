// A server-wide budget of host bytes held for frames in flight (max_buffered_bytes).
// A stream reserves what its frames in flight can hold when its header is accepted;
// over budget it is refused with RESOURCE_EXHAUSTED naming the limit, so memory stays
// bounded whatever clients send (an 8K 16-bit 4:4:4 pair is 400 MB).
#ifndef EXACTQ_SERVER_MEMORY_BUDGET_H_
#define EXACTQ_SERVER_MEMORY_BUDGET_H_

#include <cstdint>
#include <mutex>

#include "absl/status/statusor.h"

namespace exactq::server {

class MemoryBudget {
 public:
  class Reservation {
   public:
    Reservation(Reservation&& other) noexcept : owner_(other.owner_), bytes_(other.bytes_) {
      other.owner_ = nullptr;
    }
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

  absl::StatusOr<Reservation> Reserve(uint64_t bytes);
  uint64_t reserved() const;

 private:
  void Release(uint64_t bytes);

  const uint64_t limit_;
  mutable std::mutex mutex_;
  uint64_t reserved_ = 0;
};

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_MEMORY_BUDGET_H_
