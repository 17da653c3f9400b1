// Keeps the active-stream gauge and a call's end-of-call log line right on every exit
// of a streaming call (ScoreStream, ScoreLadder).
#ifndef EXACTQ_SERVER_SESSION_LOG_H_
#define EXACTQ_SERVER_SESSION_LOG_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <string>

#include "server/frame_assembler.h"
#include "server/server_metrics.h"

namespace exactq::server {

class SessionLog {
 public:
  // kind: "stream" or "ladder", the first word of the log lines.
  SessionLog(ServerMetrics* metrics, std::string peer, const char* kind = "stream");
  ~SessionLog();
  SessionLog(const SessionLog&) = delete;
  SessionLog& operator=(const SessionLog&) = delete;

  grpc::Status Finish(grpc::Status status) {
    status_ = status;
    return status;
  }

  std::string job_id_;
  uint64_t frames_ = 0, frames_cpu_ = 0, frames_cuda_ = 0;
  Clock::time_point start_ = Clock::now();

 private:
  ServerMetrics* metrics_;
  std::string peer_;
  const char* kind_;
  grpc::Status status_;
};

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_SESSION_LOG_H_
