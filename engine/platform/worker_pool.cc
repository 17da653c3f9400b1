#include "engine/platform/worker_pool.h"

namespace exactq {

WorkerPool::WorkerPool(int num_threads) : num_threads_(num_threads < 1 ? 1 : num_threads) {
  for (int worker = 1; worker < num_threads_; ++worker) {
    threads_.emplace_back([this, worker] { WorkerLoop(worker); });
  }
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  start_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::Work(int worker) {
  for (int t = next_task_.fetch_add(1); t < num_tasks_; t = next_task_.fetch_add(1)) {
    (*task_)(t, worker);
  }
}

void WorkerPool::WorkerLoop(int worker) {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      start_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
    }
    Work(worker);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--busy_workers_ == 0) done_.notify_one();
    }
  }
}

void WorkerPool::Run(int num_tasks, const std::function<void(int task, int worker)>& task) {
  if (num_tasks <= 0) return;
  if (threads_.empty() || num_tasks == 1) {
    for (int t = 0; t < num_tasks; ++t) task(t, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task_ = &task;
    num_tasks_ = num_tasks;
    next_task_.store(0);
    busy_workers_ = static_cast<int>(threads_.size());
    ++generation_;
  }
  start_.notify_all();
  Work(0);
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return busy_workers_ == 0; });
  task_ = nullptr;
}

}  // namespace exactq
