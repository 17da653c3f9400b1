// Serves GET /metrics (Prometheus text format) over HTTP with civetweb.
#ifndef EXACTQ_SERVER_METRICS_HTTP_SERVER_H_
#define EXACTQ_SERVER_METRICS_HTTP_SERVER_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

struct mg_context;
struct mg_connection;

namespace exactq::server {

class MetricsHttpServer {
 public:
  // Listens on host:port (port 0 picks a free one); render() builds the page.
  static absl::StatusOr<std::unique_ptr<MetricsHttpServer>> Start(
      const std::string& host_port, std::function<std::string()> render);
  ~MetricsHttpServer();

  int port() const { return port_; }

 private:
  MetricsHttpServer() = default;
  static int HandleMetrics(::mg_connection* conn, void* self);

  mg_context* context_ = nullptr;
  std::function<std::string()> render_;
  int port_ = 0;
};

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_METRICS_HTTP_SERVER_H_
