#include "server/metrics_exposer.h"

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/registry.h>

#include <exception>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace exactq::server {

namespace {

// The registry, with a hook that refreshes the gauges read at scrape time first.
class ScrapedRegistry : public prometheus::Collectable {
 public:
  ScrapedRegistry(std::shared_ptr<prometheus::Registry> registry, std::function<void()> before)
      : registry_(std::move(registry)), before_(std::move(before)) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    if (before_) {
      std::lock_guard<std::mutex> lock(mutex_);  // scrapes may come on several workers
      before_();
    }
    return registry_->Collect();
  }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  std::function<void()> before_;
  mutable std::mutex mutex_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsExposer>> MetricsExposer::Start(const std::string& host_port,
                                                                      std::shared_ptr<prometheus::Registry> registry,
                                                                      std::function<void()> before_scrape,
                                                                      const MetricsExposerOptions& options) {
  std::unique_ptr<MetricsExposer> server(new MetricsExposer());
  // civetweb wants "IP:PORT" with a numeric address; "localhost" is not accepted.
  std::string ports = host_port;
  if (ports.rfind("localhost:", 0) == 0) ports = "127.0.0.1:" + ports.substr(10);
  std::vector<std::string> civetweb_options = {
      "listening_ports",
      ports,
      "num_threads",
      std::to_string(options.worker_threads),
      "request_timeout_ms",
      std::to_string(options.request_timeout_ms),
      // A scraper that keeps its connection open gets no worker to itself for long.
      "keep_alive_timeout_ms",
      std::to_string(options.request_timeout_ms),
  };
  try {
    server->exposer_ = std::make_unique<prometheus::Exposer>(std::move(civetweb_options));
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve /metrics on ", host_port, " (address in use or invalid): ", e.what()));
  }
  server->collectable_ = std::make_shared<ScrapedRegistry>(std::move(registry), std::move(before_scrape));
  server->exposer_->RegisterCollectable(server->collectable_);
  const std::vector<int> bound = server->exposer_->GetListeningPorts();
  if (bound.empty()) return absl::InternalError("civetweb reported no bound port");
  server->port_ = bound[0];
  return server;
}

MetricsExposer::~MetricsExposer() = default;

}  // namespace exactq::server
