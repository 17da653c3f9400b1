#include "engine/runtime/device_pool.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace exactq {

const char* DeviceStateName(DeviceState state) {
  switch (state) {
    case DeviceState::kCoolingDown:
      return "cooling_down";
    case DeviceState::kLost:
      return "lost";
    case DeviceState::kUsable:
      break;
  }
  return "usable";
}

DevicePool::DevicePool(std::vector<GpuDevice> devices, Options options, std::string empty_reason)
    : options_(std::move(options)),
      empty_reason_(empty_reason.empty() ? "no GPU was given to this process" : std::move(empty_reason)),
      storage_(new Entry[devices.size()]) {
  for (size_t i = 0; i < devices.size(); ++i) {
    storage_[i].device = std::move(devices[i]);
    entries_.push_back(&storage_[i]);
  }
}

DevicePool::Entry* DevicePool::Find(int index) const {
  for (Entry* e : entries_) {
    if (e->device.index == index) return e;
  }
  return nullptr;
}

void DevicePool::ReviveLocked(Clock::time_point now) {
  for (Entry* e : entries_) {
    if (e->state.load() == static_cast<int>(DeviceState::kCoolingDown) && now >= e->retry_at) {
      e->state.store(static_cast<int>(DeviceState::kUsable));
    }
  }
}

std::optional<GpuDevice> DevicePool::NextDevice() {
  std::lock_guard<std::mutex> lock(mutex_);
  ReviveLocked(options_.now());
  for (size_t tried = 0; tried < entries_.size(); ++tried) {
    Entry* e = entries_[next_++ % entries_.size()];
    if (e->state.load() == static_cast<int>(DeviceState::kUsable)) return e->device;
  }
  return std::nullopt;
}

bool DevicePool::IsLost(int index) const {
  const Entry* e = Find(index);
  return e == nullptr || e->state.load(std::memory_order_relaxed) == static_cast<int>(DeviceState::kLost);
}

void DevicePool::ReportSuccess(int index) {
  Entry* e = Find(index);
  // Called per frame: only take the lock when there is a count to clear.
  if (e == nullptr || e->failures_in_row.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  e->failures_in_row.store(0);
}

void DevicePool::ReportFailure(int index, DeviceFault fault, const std::string& error) {
  Entry* e = Find(index);
  if (e == nullptr || fault == DeviceFault::kNone) return;
  std::lock_guard<std::mutex> lock(mutex_);
  e->failures_total += 1;
  e->last_error = error;
  const int in_row = e->failures_in_row.load() + 1;
  e->failures_in_row.store(in_row);
  if (e->state.load() == static_cast<int>(DeviceState::kLost)) return;  // lost stays lost
  if (fault == DeviceFault::kPoisoned || in_row >= options_.max_failures_in_row) {
    e->state.store(static_cast<int>(DeviceState::kLost));
    return;
  }
  // Several streams may fail on one bad device at once: the back-off grows with the
  // failures in a row, so a burst pushes the retry out instead of resetting it.
  Clock::duration wait = options_.retry_after;
  for (int i = 1; i < in_row && wait < options_.max_retry_after; ++i) wait *= 2;
  wait = std::min(wait, options_.max_retry_after);
  e->retry_at = options_.now() + wait;
  e->state.store(static_cast<int>(DeviceState::kCoolingDown));
}

int DevicePool::usable() const {
  std::lock_guard<std::mutex> lock(mutex_);
  const Clock::time_point now = options_.now();
  int n = 0;
  for (const Entry* e : entries_) {
    const auto state = static_cast<DeviceState>(e->state.load());
    n += state == DeviceState::kUsable || (state == DeviceState::kCoolingDown && now >= e->retry_at);
  }
  return n;
}

bool DevicePool::AllLost() const {
  if (entries_.empty()) return false;
  return std::all_of(entries_.begin(), entries_.end(),
                     [](const Entry* e) { return e->state.load() == static_cast<int>(DeviceState::kLost); });
}

std::vector<DeviceHealth> DevicePool::Snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  const Clock::time_point now = options_.now();
  std::vector<DeviceHealth> out;
  for (const Entry* e : entries_) {
    DeviceHealth h;
    h.device = e->device;
    h.state = static_cast<DeviceState>(e->state.load());
    if (h.state == DeviceState::kCoolingDown) {
      if (now >= e->retry_at)
        h.state = DeviceState::kUsable;
      else
        h.retry_in = e->retry_at - now;
    }
    h.failures_in_row = e->failures_in_row.load();
    h.failures_total = e->failures_total;
    h.last_error = e->last_error;
    out.push_back(std::move(h));
  }
  return out;
}

std::string DevicePool::UnavailableReason() const {
  if (entries_.empty()) return empty_reason_;
  std::vector<std::string> parts;
  for (const DeviceHealth& h : Snapshot()) {
    std::string part = absl::StrCat("cuda:", h.device.index, " ", DeviceStateName(h.state));
    if (h.state == DeviceState::kCoolingDown) {
      absl::StrAppend(&part, " for ", std::chrono::ceil<std::chrono::seconds>(h.retry_in).count(), " s");
    }
    if (!h.last_error.empty()) absl::StrAppend(&part, " (", h.last_error, ")");
    parts.push_back(std::move(part));
  }
  return absl::StrCat("no usable GPU: ", absl::StrJoin(parts, "; "));
}

}  // namespace exactq
