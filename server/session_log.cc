#include "server/session_log.h"

#include <chrono>
#include <utility>

#include "server/client_text.h"
#include "spdlog/spdlog.h"

namespace exactq::server {

SessionLog::SessionLog(ServerMetrics* metrics, std::string peer, const char* kind)
    : metrics_(metrics), peer_(std::move(peer)), kind_(kind) {
  metrics_->active_streams.At({}).Add(1);
  metrics_->streams_started.At({}).Increment();
}

SessionLog::~SessionLog() {
  metrics_->active_streams.At({}).Add(-1);
  const double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  if (status_.ok()) {
    spdlog::info("{} end job_id={} peer={} frames={} cpu={} cuda={} seconds={:.3f} fps={:.2f}", kind_, job_id_, peer_,
                 frames_, frames_cpu_, frames_cuda_, seconds, seconds > 0 ? frames_ / seconds : 0.0);
  } else {
    spdlog::warn("{} failed job_id={} peer={} frames={} code={} error=\"{}\"", kind_, job_id_, peer_, frames_,
                 static_cast<int>(status_.error_code()), ClientText(status_.error_message()));
  }
}

}  // namespace exactq::server
