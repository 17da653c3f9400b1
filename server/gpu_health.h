// GpuHealthReporter: turns the engine's DevicePool into what the orchestrator and
// operators see. Polled by exactqd's main loop (and before each /metrics scrape):
//   - exactq_usable_gpus / exactq_configured_gpus gauges;
//   - one log line per device state change (lost, cooling down, usable again);
//   - once every configured GPU is lost for good, gRPC health NOT_SERVING for every
//     service, for good: a GPU server without GPUs should be replaced (readiness
//     takes it out of the endpoints, liveness restarts it), while the streams in
//     flight finish on the CPU. A server given no GPU (CPU only) stays SERVING.
#ifndef EXACTQ_SERVER_GPU_HEALTH_H_
#define EXACTQ_SERVER_GPU_HEALTH_H_

#include <grpcpp/health_check_service_interface.h>

#include <mutex>
#include <vector>

#include "engine/runtime/device_pool.h"
#include "server/server_metrics.h"

namespace exactq::server {

class GpuHealthReporter {
 public:
  GpuHealthReporter(DevicePool* pool, ServerMetrics* metrics);

  // The gRPC health service to turn NOT_SERVING (null: none, e.g. before the gRPC
  // server starts or after it stopped). Set when every GPU is already lost, it is
  // turned at the next Poll.
  void SetHealthService(grpc::HealthCheckServiceInterface* health);

  // Updates the gauges, logs changes, and reports NOT_SERVING when every GPU is lost.
  // Returns whether the GPUs are all lost. Thread-safe.
  bool Poll();

 private:
  DevicePool* pool_;
  ServerMetrics* metrics_;
  grpc::HealthCheckServiceInterface* health_ = nullptr;
  bool health_told_ = false;
  std::mutex mutex_;
  std::vector<DeviceState> last_states_;
  bool reported_lost_ = false;
};

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_GPU_HEALTH_H_
