// What a session needs to know about the server's drain (SIGTERM): whether one has
// started and when its grace period ends, so that a call the drain cancels is logged
// as the drain's doing rather than the client's.
#ifndef EXACTQ_SERVER_DRAIN_STATE_H_
#define EXACTQ_SERVER_DRAIN_STATE_H_

#include <atomic>
#include <chrono>

namespace exactq::server {

class DrainState {
 public:
  void Start(std::chrono::system_clock::time_point deadline, int grace_period_seconds) {
    deadline_.store(deadline.time_since_epoch().count());
    grace_period_seconds_.store(grace_period_seconds);
    draining_.store(true);
  }
  bool draining() const { return draining_.load(); }
  // True once the grace period is over (gRPC cancels the calls left at that moment).
  bool grace_period_over() const {
    return draining_.load() && std::chrono::system_clock::now().time_since_epoch().count() >= deadline_.load();
  }
  int grace_period_seconds() const { return grace_period_seconds_.load(); }

 private:
  std::atomic<bool> draining_{false};
  std::atomic<std::chrono::system_clock::rep> deadline_{0};
  std::atomic<int> grace_period_seconds_{0};
};

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_DRAIN_STATE_H_
