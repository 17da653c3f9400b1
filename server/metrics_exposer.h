// Serves GET /metrics (Prometheus text format) with prometheus-cpp's Exposer (civetweb).
//
// Stalled clients cannot block a scrape: the exposer runs several HTTP worker threads
// and drops a connection that sends nothing for the request timeout, so a few
// half-sent requests hold a few workers for two seconds at most while the others
// answer Prometheus.
#ifndef EXACTQ_SERVER_METRICS_EXPOSER_H_
#define EXACTQ_SERVER_METRICS_EXPOSER_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace prometheus {
class Exposer;
class Registry;
class Collectable;
}  // namespace prometheus

namespace exactq::server {

struct MetricsExposerOptions {
  int worker_threads = 8;         // civetweb num_threads
  int request_timeout_ms = 2000;  // civetweb request_timeout_ms (reads and writes)
};

class MetricsExposer {
 public:
  // Listens on host:port (port 0 picks a free one; "localhost" means 127.0.0.1) and
  // serves the registry; before_scrape() runs before each scrape (gauges read then).
  static absl::StatusOr<std::unique_ptr<MetricsExposer>> Start(const std::string& host_port,
                                                               std::shared_ptr<prometheus::Registry> registry,
                                                               std::function<void()> before_scrape,
                                                               const MetricsExposerOptions& options = {});
  ~MetricsExposer();

  int port() const { return port_; }

 private:
  MetricsExposer() = default;

  std::shared_ptr<prometheus::Collectable> collectable_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  int port_ = 0;
};

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_METRICS_EXPOSER_H_
