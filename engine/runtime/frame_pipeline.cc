#include "engine/runtime/frame_pipeline.h"

#include <iterator>
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
  stages_ = scorers_[0]->CreateSequenceStages();
  for (const std::unique_ptr<SequenceStage>& stage : stages_) has_stages_ = has_stages_ || stage != nullptr;
  reads_previous_ = scorers_[0]->reads_previous_reference();
  next_fill_.assign(stages_.size(), 0);
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
  // Every frame is taken now; the ones waiting for later frames are answered.
  Drain();
}

absl::Status FramePipeline::Submit(const Frame& reference, const Frame& distorted, Done done) {
  std::unique_lock<std::mutex> lock(mutex_);
  slot_free_.wait(lock, [&] { return in_flight_ < frames_in_flight() || !cancelled_.ok(); });
  if (!cancelled_.ok()) return cancelled_;
  queue_.push_back(
      Job{next_sequence_++, &reference, &distorted, reads_previous_ ? last_reference_ : nullptr, std::move(done)});
  last_reference_ = &reference;
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
  // Every frame scored and taken in order (the ones left wait for later frames).
  slot_free_.wait(lock, [&] { return in_flight_ == 0 && next_to_take_ == next_sequence_ && !delivering_; });
  if (held_.empty()) {
    last_reference_ = nullptr;
    return;
  }
  delivering_ = true;
  ended_ = true;
  FinishStages();
  while (!held_.empty() && MayGo(held_.front())) DeliverFront(lock);
  ended_ = false;
  last_reference_ = nullptr;  // frames submitted from now on start a new sequence
  delivering_ = false;
  slot_free_.notify_all();
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
      result.scored = scorer->ScoreInStream(*job.reference, *job.distorted, job.previous_reference);
      lock.lock();
    }
    result.done = Clock::now();
    finished_.emplace(job.sequence, Finished{std::move(job.done), std::move(result)});
    DeliverReady(lock);
  }
}

void FramePipeline::Take(Finished finished) {
  Held held;
  held.done = std::move(finished.done);
  held.result = std::move(finished.result);
  const uint64_t sequence = held.result.sequence;
  if (!has_stages_ || !held.result.scored.ok()) {
    if (has_stages_) {
      // An error ends the sequence: the frames before it complete first.
      FinishStages();
      for (uint64_t& next : next_fill_) next = sequence + 1;
    }
    held_.push_back(std::move(held));
    return;
  }
  // The frame's scores are rebuilt from the parts once every stage has answered.
  absl::StatusOr<std::vector<FrameScores>> split =
      SplitByMetric(std::move(held.result.scored->scores), held.result.scored->outputs_per_metric, stages_.size());
  if (!split.ok()) {
    held.result.scored = split.status();
    FinishStages();
    for (uint64_t& next : next_fill_) next = sequence + 1;
    held_.push_back(std::move(held));
    return;
  }
  std::vector<FrameScores>& parts = *split;
  held.parts.resize(stages_.size());
  for (size_t m = 0; m < stages_.size(); ++m) {
    if (stages_[m] == nullptr) held.parts[m] = std::move(parts[m]);
  }
  held_.push_back(std::move(held));
  for (size_t m = 0; m < stages_.size(); ++m) {
    if (stages_[m] != nullptr) Fill(m, stages_[m]->Push(std::move(parts[m])));
  }
}

void FramePipeline::Fill(size_t m, std::vector<FrameScores> outputs) {
  for (FrameScores& out : outputs) {
    const uint64_t sequence = next_fill_[m]++;
    for (Held& held : held_) {
      if (held.result.sequence == sequence && held.result.scored.ok()) held.parts[m] = std::move(out);
    }
  }
}

void FramePipeline::FinishStages() {
  for (size_t m = 0; m < stages_.size(); ++m) {
    if (stages_[m] != nullptr) Fill(m, stages_[m]->Finish());
  }
}

bool FramePipeline::MayGo(const Held& held) const {
  for (const std::optional<FrameScores>& part : held.parts) {
    if (!part.has_value()) return false;
  }
  // A later frame reads this frame's reference: it goes once that frame is scored.
  const uint64_t next = held.result.sequence + 1;
  return !reads_previous_ || ended_ || next_to_take_ > next || finished_.count(next) > 0;
}

void FramePipeline::DeliverFront(std::unique_lock<std::mutex>& lock) {
  Held held = std::move(held_.front());
  held_.pop_front();
  if (held.result.scored.ok() && has_stages_) {
    ScoredFrame& scored = *held.result.scored;
    scored.scores.clear();
    for (size_t m = 0; m < held.parts.size(); ++m) {
      scored.outputs_per_metric[m] = held.parts[m]->size();
      scored.scores.insert(scored.scores.end(), std::make_move_iterator(held.parts[m]->begin()),
                           std::make_move_iterator(held.parts[m]->end()));
    }
  }
  lock.unlock();
  held.done(std::move(held.result));  // outside the lock: it may block (a gRPC write)
  lock.lock();
  if (held.counted) --in_flight_;
  slot_free_.notify_all();
}

void FramePipeline::DeliverReady(std::unique_lock<std::mutex>& lock) {
  // Whoever is delivering already will find this frame too: it looks again after
  // each callback, under the lock.
  if (delivering_) return;
  delivering_ = true;
  for (;;) {
    for (auto it = finished_.find(next_to_take_); it != finished_.end(); it = finished_.find(next_to_take_)) {
      Finished f = std::move(it->second);
      finished_.erase(it);
      ++next_to_take_;
      Take(std::move(f));
    }
    // Frames that wait only for later frames, and the frames behind them, no longer
    // hold a slot (else K = 1 would wait for itself); the frames that go now stay
    // counted until their `done` has returned.
    bool blocked = false;
    for (Held& held : held_) {
      blocked = blocked || !MayGo(held);
      if (blocked && held.counted) {
        held.counted = false;
        --in_flight_;
        slot_free_.notify_all();
      }
    }
    if (held_.empty() || !MayGo(held_.front())) break;
    DeliverFront(lock);
  }
  delivering_ = false;
  slot_free_.notify_all();
}

}  // namespace exactq
