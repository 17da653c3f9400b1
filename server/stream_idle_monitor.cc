#include "server/stream_idle_monitor.h"

#include <grpc/grpc.h>

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace exactq::server {

StreamIdleMonitor::StreamIdleMonitor(int idle_seconds) : idle_seconds_(std::max(idle_seconds, 0)) {
  if (idle_seconds_ > 0) thread_ = std::thread([this] { Run(); });
}

StreamIdleMonitor::~StreamIdleMonitor() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::unique_ptr<StreamIdleMonitor::Watch> StreamIdleMonitor::Start(grpc::ServerContext* context) {
  if (idle_seconds_ == 0) return nullptr;
  std::unique_ptr<Watch> watch(new Watch(this, context));
  std::lock_guard<std::mutex> lock(mutex_);
  watches_.insert(watch.get());
  return watch;
}

void StreamIdleMonitor::Run() {
  // A tenth of the limit, at most a second: a stream ends within 10% after its limit.
  const auto period =
      std::min<Clock::duration>(std::chrono::seconds(1), std::chrono::milliseconds(100) * idle_seconds_);
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, period, [this] { return stop_; })) {
    const Clock::time_point now = Clock::now();
    for (Watch* watch : watches_) watch->Check(now);
  }
}

StreamIdleMonitor::Watch::~Watch() {
  std::lock_guard<std::mutex> lock(monitor_->mutex_);
  monitor_->watches_.erase(this);
}

void StreamIdleMonitor::Watch::Update(Clock::time_point now) {
  if (counting()) idle_ += now - last_update_;
  last_update_ = now;
}

void StreamIdleMonitor::Watch::ReadStarted() {
  std::lock_guard<std::mutex> lock(mutex_);
  Update(Clock::now());
  reading_ = true;
}

void StreamIdleMonitor::Watch::ReadEnded(bool progress) {
  std::lock_guard<std::mutex> lock(mutex_);
  Update(Clock::now());
  reading_ = false;
  if (progress) idle_ = Clock::duration::zero();
}

void StreamIdleMonitor::Watch::FrameSubmitted() {
  std::lock_guard<std::mutex> lock(mutex_);
  Update(Clock::now());
  ++busy_frames_;
}

void StreamIdleMonitor::Watch::FrameScored() {
  std::lock_guard<std::mutex> lock(mutex_);
  Update(Clock::now());
  --busy_frames_;
  ++writing_;
}

void StreamIdleMonitor::Watch::WriteStarted() {
  std::lock_guard<std::mutex> lock(mutex_);
  Update(Clock::now());
  ++writing_;
}

void StreamIdleMonitor::Watch::FrameAnswered() {
  std::lock_guard<std::mutex> lock(mutex_);
  Update(Clock::now());
  --writing_;
  idle_ = Clock::duration::zero();
}

bool StreamIdleMonitor::Watch::expired() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return expired_;
}

grpc::Status StreamIdleMonitor::Watch::status() const {
  return grpc::Status(
      grpc::StatusCode::DEADLINE_EXCEEDED,
      absl::StrCat(expired_writing_ ? "the client read no answer for " : "the client sent nothing for ",
                   monitor_->idle_seconds_,
                   " s while the server waited for it (the limit stream_idle_seconds=", monitor_->idle_seconds_, ")"));
}

void StreamIdleMonitor::Watch::Check(Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (expired_) return;
  Update(now);
  if (idle_ < std::chrono::seconds(monitor_->idle_seconds_)) return;
  expired_ = true;
  expired_writing_ = writing_ > 0;
  // What ServerContext::TryCancel does, with this status instead of CANCELLED: the
  // client gets DEADLINE_EXCEEDED and the session's blocked Read returns false.
  const grpc::Status s = status();
  grpc_call_cancel_with_status(context_->c_call(), static_cast<grpc_status_code>(s.error_code()),
                               s.error_message().c_str(), nullptr);
}

}  // namespace exactq::server
