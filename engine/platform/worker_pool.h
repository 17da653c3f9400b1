// WorkerPool: a fixed set of threads that run numbered tasks, for the CPU paths whose
// results are the same for every thread count (ssim, ssimulacra2, vmaf, the exact sum).
//
// Run() hands out tasks 0, 1, 2, ... in increasing order to whichever thread is free
// (the caller works too) and returns when all are done. Which thread runs a task must
// never matter to a result: tasks write disjoint outputs, and per-thread scratch is
// indexed by the worker number passed to the task.
//
//   WorkerPool pool(4);
//   pool.Run(num_bands, [&](int task, int worker) { Band(task, scratch[worker]); });

#ifndef EXACTQ_ENGINE_PLATFORM_WORKER_POOL_H_
#define EXACTQ_ENGINE_PLATFORM_WORKER_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace exactq {

class WorkerPool {
 public:
  // num_threads < 1 counts as 1; num_threads - 1 threads are started.
  explicit WorkerPool(int num_threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int num_threads() const { return num_threads_; }

  // Runs task(t, worker) for t in [0, num_tasks); worker is in [0, num_threads()) and
  // no two tasks run at once with the same worker number. Not reentrant.
  void Run(int num_tasks, const std::function<void(int task, int worker)>& task);

 private:
  void WorkerLoop(int worker);
  void Work(int worker);

  const int num_threads_;
  std::vector<std::thread> threads_;

  std::mutex mutex_;
  std::condition_variable start_;
  std::condition_variable done_;
  uint64_t generation_ = 0;  // bumped by each Run
  bool stopping_ = false;
  int busy_workers_ = 0;  // background workers still inside the current Run

  // The current Run.
  const std::function<void(int, int)>* task_ = nullptr;
  int num_tasks_ = 0;
  std::atomic<int> next_task_{0};
};

}  // namespace exactq

#endif  // EXACTQ_ENGINE_PLATFORM_WORKER_POOL_H_
