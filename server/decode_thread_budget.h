// DecodeThreadBudget: decoder threads across all decoded streams (--max_decode_threads_total).
//
// A decoded stream asks for threads for each side; it gets what is left, at least one
// per side, so a busy server decodes new streams more slowly rather than refusing
// them (--max_streams bounds the streams). Once its decoders are open it keeps only
// the threads they use (KeepOnly), and a Grant gives the rest back when destroyed.
//
//   DecodeThreadBudget budget(64);
//   DecodeThreadBudget::Grant grant = budget.Take(/*per_side=*/8, /*sides=*/2);
//   options.threads = grant.per_side();
#ifndef EXACTQ_SERVER_DECODE_THREAD_BUDGET_H_
#define EXACTQ_SERVER_DECODE_THREAD_BUDGET_H_

#include <cstdint>
#include <mutex>

namespace exactq::server {

class DecodeThreadBudget {
 public:
  class Grant {
   public:
    Grant(Grant&& other) noexcept : owner_(other.owner_), per_side_(other.per_side_), total_(other.total_) {
      other.owner_ = nullptr;
    }
    Grant& operator=(Grant&&) = delete;
    ~Grant();
    uint32_t per_side() const { return per_side_; }
    // Gives back what the decoders, once open, do not use: keeps `threads` (at most
    // what was granted). A Y4M side decodes on its reading thread alone.
    void KeepOnly(uint32_t threads);

   private:
    friend class DecodeThreadBudget;
    Grant(DecodeThreadBudget* owner, uint32_t per_side, uint32_t total)
        : owner_(owner), per_side_(per_side), total_(total) {}
    DecodeThreadBudget* owner_;
    uint32_t per_side_;
    uint32_t total_;
  };

  explicit DecodeThreadBudget(uint32_t max_total) : max_total_(max_total) {}

  // Up to `per_side` threads for each of `sides`, at least one each.
  Grant Take(uint32_t per_side, uint32_t sides);
  uint32_t in_use() const;

 private:
  void Give(uint32_t threads);
  const uint32_t max_total_;
  mutable std::mutex mutex_;
  uint32_t in_use_ = 0;
};

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_DECODE_THREAD_BUDGET_H_
