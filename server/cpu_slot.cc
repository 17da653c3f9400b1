#include "server/cpu_slot.h"

namespace exactq::server {

absl::Status CpuSlot::FrameStarting() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (frames_ > 0) {
      ++frames_;
      return absl::OkStatus();
    }
  }
  // None of the stream's frames is in flight, so no FrameDone runs while this waits.
  absl::StatusOr<StreamAdmission::Ticket> ticket =
      pool_->AdmitWhenFree("cpu", [this] { return context_->IsCancelled(); });
  if (!ticket.ok()) return ticket.status();
  std::lock_guard<std::mutex> lock(mutex_);
  ticket_.emplace(std::move(*ticket));
  ++frames_;
  return absl::OkStatus();
}

void CpuSlot::FrameDone() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (--frames_ == 0) ticket_.reset();
}

}  // namespace exactq::server
