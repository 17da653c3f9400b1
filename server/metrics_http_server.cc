#include "server/metrics_http_server.h"

#include <civetweb.h>

#include <string>

#include "absl/strings/str_cat.h"

namespace exactq::server {

absl::StatusOr<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Start(
    const std::string& host_port, std::function<std::string()> render) {
  std::unique_ptr<MetricsHttpServer> server(new MetricsHttpServer());
  server->render_ = std::move(render);
  // civetweb wants "IP:PORT" with a numeric address; "localhost" is not accepted.
  std::string ports = host_port;
  if (ports.rfind("localhost:", 0) == 0) ports = "127.0.0.1:" + ports.substr(10);
  const char* options[] = {"listening_ports", ports.c_str(), "num_threads", "2",
                           nullptr};
  mg_callbacks callbacks{};
  server->context_ = mg_start(&callbacks, nullptr, options);
  if (server->context_ == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve /metrics on ", host_port, " (address in use or invalid)"));
  }
  mg_set_request_handler(server->context_, "/metrics", &MetricsHttpServer::HandleMetrics,
                         server.get());
  mg_server_port bound[1];
  if (mg_get_server_ports(server->context_, 1, bound) < 1) {
    return absl::InternalError("civetweb reported no bound port");
  }
  server->port_ = bound[0].port;
  return server;
}

MetricsHttpServer::~MetricsHttpServer() {
  if (context_ != nullptr) mg_stop(context_);
}

int MetricsHttpServer::HandleMetrics(mg_connection* conn, void* self) {
  const std::string page = static_cast<MetricsHttpServer*>(self)->render_();
  mg_printf(conn,
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
            "Content-Length: %zu\r\nConnection: close\r\n\r\n",
            page.size());
  mg_write(conn, page.data(), page.size());
  return 200;
}

}  // namespace exactq::server
