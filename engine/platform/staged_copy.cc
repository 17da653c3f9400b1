#include "engine/platform/staged_copy.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace exactq {

namespace {

using Clock = std::chrono::steady_clock;

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

long EnvLong(const char* name, long fallback, long lo, long hi) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (end == v || *end != '\0') return fallback;
  return std::clamp(n, lo, hi);
}

struct Chunk {
  size_t span, begin, end;
};

// One StagedCopy call: its chunks, claimed in order by the caller and the helpers.
class Job {
 public:
  Job(absl::Span<const CopySpan> spans, size_t chunk_bytes) : spans_(spans.begin(), spans.end()) {
    for (size_t s = 0; s < spans_.size(); ++s) {
      for (size_t b = 0; b < spans_[s].bytes; b += chunk_bytes) {
        chunks_.push_back({s, b, std::min(spans_[s].bytes, b + chunk_bytes)});
      }
    }
    done_ = std::make_unique<std::atomic<bool>[]>(chunks_.size());
    for (size_t i = 0; i < chunks_.size(); ++i) done_[i].store(false, std::memory_order_relaxed);
  }

  size_t size() const { return chunks_.size(); }
  const Chunk& chunk(size_t i) const { return chunks_[i]; }
  bool done(size_t i) const { return done_[i].load(std::memory_order_acquire); }

  // Claims the next chunk and copies it; false when none is left to claim. Once every
  // chunk is claimed no thread touches the spans' memory again through this job.
  bool CopyOne() {
    const size_t i = next_.fetch_add(1, std::memory_order_relaxed);
    if (i >= chunks_.size()) return false;
    const Chunk& c = chunks_[i];
    const CopySpan& s = spans_[c.span];
    std::memcpy(static_cast<char*>(s.dst) + c.begin, static_cast<const char*>(s.src) + c.begin, c.end - c.begin);
    done_[i].store(true, std::memory_order_release);
    return true;
  }

  int seats = 0;  // helpers that may still join; guarded by the pool's mutex

 private:
  std::vector<CopySpan> spans_;
  std::vector<Chunk> chunks_;
  std::unique_ptr<std::atomic<bool>[]> done_;
  std::atomic<size_t> next_{0};
};

// The helpers, shared by every StagedCopy of the process. Created on first use and never
// destroyed (the threads outlive static destruction safely that way).
class Pool {
 public:
  static Pool& Get() {
    static Pool* pool = new Pool(GetStagedCopySettings());
    return *pool;
  }

  // Offers `job` to at most `seats` helpers.
  void Post(const std::shared_ptr<Job>& job, int seats) {
    std::lock_guard<std::mutex> lock(mu_);
    job->seats = seats;
    queue_.push_back(job);
    queued_.fetch_add(1, std::memory_order_relaxed);
    if (sleeping_ == 0) return;
    if (seats >= sleeping_) {
      cv_.notify_all();
    } else {
      for (int i = 0; i < seats; ++i) cv_.notify_one();
    }
  }

  // The caller has claimed every chunk: no helper needs to look at the job any more.
  void Withdraw(const Job* job) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = queue_.begin(); it != queue_.end(); ++it) {
      if (it->get() == job) {
        queue_.erase(it);
        queued_.fetch_sub(1, std::memory_order_relaxed);
        return;
      }
    }
  }

 private:
  explicit Pool(const StagedCopySettings& settings) : spin_(std::chrono::microseconds(settings.spin_us)) {
    for (int i = 0; i < settings.helpers; ++i) std::thread([this] { Loop(); }).detach();
  }

  void Loop() {
    for (;;) {
      std::shared_ptr<Job> job = Take();
      while (job->CopyOne()) {
      }
    }
  }

  // The next job with a free seat: polled for a while (a stream's next frame usually
  // comes within microseconds), then waited for.
  std::shared_ptr<Job> Take() {
    const Clock::time_point spin_until = Clock::now() + spin_;
    for (unsigned polls = 1;; ++polls) {
      if (queued_.load(std::memory_order_relaxed) > 0) {
        std::lock_guard<std::mutex> lock(mu_);
        if (std::shared_ptr<Job> job = TakeLocked()) return job;
      }
      if (polls % 64 == 0 && Clock::now() >= spin_until) break;
      CpuRelax();
    }
    std::unique_lock<std::mutex> lock(mu_);
    ++sleeping_;
    cv_.wait(lock, [this] { return !queue_.empty(); });
    --sleeping_;
    return TakeLocked();
  }

  std::shared_ptr<Job> TakeLocked() {
    if (queue_.empty()) return nullptr;
    std::shared_ptr<Job> job = queue_.front();
    if (--job->seats <= 0) {
      queue_.pop_front();
      queued_.fetch_sub(1, std::memory_order_relaxed);
    }
    return job;
  }

  const Clock::duration spin_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> queue_;
  std::atomic<int> queued_{0};  // queue_.size(), readable without the mutex
  int sleeping_ = 0;
};

}  // namespace

const StagedCopySettings& GetStagedCopySettings() {
  static const StagedCopySettings settings = [] {
    const long hardware = static_cast<long>(std::thread::hardware_concurrency());
    StagedCopySettings s;
    s.helpers = static_cast<int>(EnvLong("EXACTQ_STAGING_THREADS", std::clamp(hardware - 1, 0L, 8L), 0, 64));
    s.chunk_bytes = static_cast<size_t>(EnvLong("EXACTQ_STAGING_CHUNK_KIB", 512, 4, 1L << 20)) << 10;
    s.spin_us = static_cast<int>(EnvLong("EXACTQ_STAGING_SPIN_US", 200, 0, 100000));
    s.crowd = static_cast<int>(EnvLong("EXACTQ_STAGING_CROWD", std::max(1, s.helpers / 2), 1, 1024));
    return s;
  }();
  return settings;
}

namespace {

// StagedCopy calls in progress in the process.
std::atomic<int> g_copies_in_progress{0};

}  // namespace

void StagedCopy(absl::Span<const CopySpan> spans,
                absl::FunctionRef<void(size_t span, size_t begin, size_t end)> ready) {
  const StagedCopySettings& settings = GetStagedCopySettings();
  const int in_progress = g_copies_in_progress.fetch_add(1, std::memory_order_relaxed) + 1;
  struct Leave {
    ~Leave() { g_copies_in_progress.fetch_sub(1, std::memory_order_relaxed); }
  } leave;
  // A crowd of callers keeps the memory bus busy by itself: each copies its spans whole
  // (one DMA each, one helper at most), as chunks would only add DMAs and hand-offs.
  size_t chunk_bytes = settings.chunk_bytes;
  if (in_progress > settings.crowd) {
    for (const CopySpan& span : spans) chunk_bytes = std::max(chunk_bytes, span.bytes);
  }
  auto job = std::make_shared<Job>(spans, chunk_bytes);
  const size_t n = job->size();
  if (n == 0) return;
  Pool* pool = nullptr;
  const int seats = static_cast<int>(std::min<size_t>(static_cast<size_t>(settings.helpers), n - 1));
  if (seats > 0) {
    pool = &Pool::Get();
    pool->Post(job, seats);
  }
  // Reports the finished prefix, one call per span it touches.
  size_t reported = 0;
  auto report = [&] {
    size_t end = reported;
    while (end < n && job->done(end)) ++end;
    for (size_t i = reported; i < end;) {
      const size_t span = job->chunk(i).span;
      size_t j = i;
      while (j + 1 < end && job->chunk(j + 1).span == span) ++j;
      ready(span, job->chunk(i).begin, job->chunk(j).end);
      i = j + 1;
    }
    reported = end;
  };
  while (job->CopyOne()) report();
  if (pool != nullptr) pool->Withdraw(job.get());
  while (reported < n) {
    if (job->done(reported)) {
      report();
    } else {
      CpuRelax();
    }
  }
}

}  // namespace exactq
