#include "engine/decode/decode_ahead.h"

#include <algorithm>
#include <utility>

namespace exactq {
namespace {

bool SameMemory(const Frame& frame, std::pmr::memory_resource* memory) { return *frame.memory_resource() == *memory; }

}  // namespace

DecodeAhead::DecodeAhead(std::unique_ptr<VideoDecoder> decoder, Options options)
    : decoder_(std::move(decoder)), options_(std::move(options)), thread_([this] { Decode(); }) {}

DecodeAhead::~DecodeAhead() { Stop(); }

const FrameGeometry& DecodeAhead::geometry() const {
  return options_.transform.has_value() ? options_.transform->geometry : decoder_->info().geometry;
}

void DecodeAhead::RequestStop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
}

void DecodeAhead::Stop() {
  RequestStop();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  ended_ = true;  // a stopped thread decodes no more: Take must not wait for it
}

bool DecodeAhead::DecodeOne(Frame* out, absl::Status* status) {
  // A buffer from elsewhere (a caller's, never from frame_memory) is replaced, so every
  // picture handed out lives in frame_memory.
  if (!SameMemory(*out, options_.frame_memory)) {
    absl::StatusOr<Frame> fresh = Frame::Create(geometry(), options_.frame_memory);
    if (!fresh.ok()) {
      *status = fresh.status();
      return false;
    }
    *out = *std::move(fresh);
  }
  if (!options_.transform.has_value()) {
    absl::StatusOr<bool> more = decoder_->ReadFrame(out);  // sets *out's geometry
    if (!more.ok()) *status = more.status();
    return more.ok() && *more;
  }
  absl::StatusOr<bool> more = decoder_->ReadFrame(&scratch_);
  if (!more.ok() || !*more) {
    if (!more.ok()) *status = more.status();
    return false;
  }
  if (absl::Status s = out->Reset(options_.transform->geometry); !s.ok()) {
    *status = s;
    return false;
  }
  if (absl::Status s = options_.transform->apply(scratch_, out); !s.ok()) {
    *status = s;
    return false;
  }
  return true;
}

void DecodeAhead::Decode() {
  const size_t capacity = static_cast<size_t>(std::max(1, options_.queue_frames));
  while (true) {
    Frame frame;
    bool counting = false;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || counting_ || ready_.size() < capacity; });
      if (stop_) return;
      counting = counting_;
      if (!counting && !spare_.empty()) {
        frame = std::move(spare_.back());
        spare_.pop_back();
      }
    }
    // Decoding (and the transform) runs unlocked: the consumer takes ready pictures
    // meanwhile.
    absl::Status status;
    bool more;
    if (counting) {
      absl::StatusOr<bool> read = decoder_->ReadFrame(&scratch_);
      if (!read.ok()) status = read.status();
      more = read.ok() && *read;
    } else {
      more = DecodeOne(&frame, &status);
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!more) {
      status_ = status;
      ended_ = true;
      changed_.notify_all();
      return;
    }
    ++decoded_;
    if (!counting) ready_.push_back(std::move(frame));
    changed_.notify_all();
  }
}

bool DecodeAhead::Take(Frame* frame, absl::Status* status) {
  Frame old;  // the caller's buffer when it is not kept: freed after the lock
  {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return !ready_.empty() || ended_; });
    if (ready_.empty()) {
      *status = status_;
      return false;
    }
    old = std::move(*frame);
    *frame = std::move(ready_.front());
    ready_.pop_front();
    if (old.size_bytes() != 0 && SameMemory(old, options_.frame_memory)) spare_.push_back(std::move(old));
    ++taken_;
  }
  changed_.notify_all();
  return true;
}

void DecodeAhead::CountAhead() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    counting_ = true;
  }
  changed_.notify_all();
}

int64_t DecodeAhead::CountRest(absl::Status* status) {
  CountAhead();
  std::deque<Frame> unread;  // freed after the lock
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return ended_; });
  *status = status_;
  const int64_t rest = decoded_ - taken_;
  taken_ = decoded_;
  unread.swap(ready_);
  return rest;
}

}  // namespace exactq
