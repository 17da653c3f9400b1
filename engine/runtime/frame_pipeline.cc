#include "engine/runtime/frame_pipeline.h"

#include <utility>

namespace exactq {

FramePipeline::FramePipeline(std::unique_ptr<FrameScorer> first, Options options) {
  scorers_.push_back(std::move(first));
  for (int i = 1; i < options.frames_in_flight; ++i) {
    absl::StatusOr<std::unique_ptr<FrameScorer>> sibling = scorers_[0]->CreateSibling();
    if (!sibling.ok()) {
      sibling_error_ = sibling.status();
      break;
    }
    scorers_.push_back(std::move(*sibling));
  }
  // Threads only after every scorer exists: CreateSibling reads the first's placement.
  for (const std::unique_ptr<FrameScorer>& scorer : scorers_) {
    workers_.emplace_back([this, s = scorer.get()] { Work(s); });
  }
}

FramePipeline::~FramePipeline() {
  Cancel(absl::CancelledError("the stream ended before this frame was scored"));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& t : workers_) t.join();
}

absl::Status FramePipeline::Submit(const Frame& reference, const Frame& distorted, Done done) {
  std::unique_lock<std::mutex> lock(mutex_);
  slot_free_.wait(lock, [&] { return in_flight_ < frames_in_flight() || !cancelled_.ok(); });
  if (!cancelled_.ok()) return cancelled_;
  queue_.push_back(Job{next_sequence_++, &reference, &distorted, std::move(done)});
  ++in_flight_;
  lock.unlock();
  work_ready_.notify_one();
  return absl::OkStatus();
}

void FramePipeline::WaitForSlot() {
  std::unique_lock<std::mutex> lock(mutex_);
  slot_free_.wait(lock, [&] { return in_flight_ < frames_in_flight() || !cancelled_.ok(); });
}

void FramePipeline::Drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  slot_free_.wait(lock, [&] { return in_flight_ == 0; });
}

void FramePipeline::Cancel(absl::Status status) {
  if (status.ok()) status = absl::CancelledError("cancelled");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (cancelled_.ok()) cancelled_ = std::move(status);
  }
  slot_free_.notify_all();  // a blocked Submit returns the status
}

void FramePipeline::Work(FrameScorer* scorer) {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_ready_.wait(lock, [&] { return !queue_.empty() || stopping_; });
    if (queue_.empty()) return;  // stopping, and every job taken
    Job job = std::move(queue_.front());
    queue_.pop_front();
    Result result;
    result.sequence = job.sequence;
    result.started = Clock::now();
    if (!cancelled_.ok()) {
      result.scored = cancelled_;
    } else {
      lock.unlock();
      result.scored = scorer->Score(*job.reference, *job.distorted);
      lock.lock();
    }
    result.done = Clock::now();
    finished_.emplace(job.sequence, Finished{std::move(job.done), std::move(result)});
    DeliverReady(lock);
  }
}

void FramePipeline::DeliverReady(std::unique_lock<std::mutex>& lock) {
  // Whoever is delivering already will find this frame too: it looks again after
  // each callback, under the lock.
  if (delivering_) return;
  delivering_ = true;
  for (auto it = finished_.find(next_to_deliver_); it != finished_.end(); it = finished_.find(next_to_deliver_)) {
    Finished f = std::move(it->second);
    finished_.erase(it);
    lock.unlock();
    f.done(std::move(f.result));  // outside the lock: it may block (a gRPC write)
    lock.lock();
    ++next_to_deliver_;
    --in_flight_;
    slot_free_.notify_all();
  }
  delivering_ = false;
}

}  // namespace exactq
