#include "server/request_stream.h"

namespace exactq::server {

grpc::Status CancellationStatus(const StreamIdleMonitor::Watch* idle, const DrainState* drain) {
  if (idle != nullptr && idle->expired()) return idle->status();
  if (drain != nullptr && drain->grace_period_over()) {
    return grpc::Status(grpc::StatusCode::CANCELLED,
                        absl::StrCat("cancelled by the drain: its grace period (grace_period_seconds=",
                                     drain->grace_period_seconds(), ") ended"));
  }
  return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled by the client");
}

}  // namespace exactq::server
