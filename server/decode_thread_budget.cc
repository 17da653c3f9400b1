#include "server/decode_thread_budget.h"

#include <algorithm>

namespace exactq::server {

DecodeThreadBudget::Grant::~Grant() {
  if (owner_ != nullptr) owner_->Give(total_);
}

DecodeThreadBudget::Grant DecodeThreadBudget::Take(uint32_t per_side, uint32_t sides) {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint32_t left = max_total_ > in_use_ ? max_total_ - in_use_ : 0;
  const uint32_t granted = std::max<uint32_t>(1, std::min(per_side, left / std::max<uint32_t>(1, sides)));
  in_use_ += granted * sides;
  return Grant(this, granted, granted * sides);
}

void DecodeThreadBudget::Grant::KeepOnly(uint32_t threads) {
  if (owner_ == nullptr || threads >= total_) return;
  owner_->Give(total_ - threads);
  total_ = threads;
}

uint32_t DecodeThreadBudget::in_use() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return in_use_;
}

void DecodeThreadBudget::Give(uint32_t threads) {
  std::lock_guard<std::mutex> lock(mutex_);
  in_use_ -= std::min(in_use_, threads);
}

}  // namespace exactq::server
