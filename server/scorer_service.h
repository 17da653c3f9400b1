// The exactq.v1.Scorer service: translates between the wire and the engine. It holds
// no pixel code; frames go to engine::FrameScorer, statistics to engine pooling.
#ifndef EXACTQ_SERVER_SCORER_SERVICE_H_
#define EXACTQ_SERVER_SCORER_SERVICE_H_

#include <atomic>
#include <chrono>

#include "exactq/v1/exactq.grpc.pb.h"
#include "server/decode_thread_budget.h"
#include "server/drain_state.h"
#include "server/memory_budget.h"
#include "server/request_stream.h"
#include "server/server_config.h"
#include "server/server_metrics.h"
#include "server/stream_admission.h"
#include "server/stream_idle_monitor.h"

namespace exactq::server {

class ScorerService final : public v1::Scorer::Service {
 public:
  ScorerService(const ServerConfig& config, ServerMetrics* metrics);

  // ScoreStream, registered on raw bytes so that the session parses each request
  // (RequestStream: a malformed message is INVALID_ARGUMENT, not the end of the stream).
  grpc::Status ScoreRawStream(grpc::ServerContext* context, RequestStream::Raw* stream);
  // ScoreLadder, registered on raw bytes like ScoreStream.
  grpc::Status ScoreRawLadder(grpc::ServerContext* context, LadderRequestStream::Raw* stream);
  grpc::Status ScorePair(grpc::ServerContext* context, const v1::ScorePairRequest* request,
                         v1::ScorePairResponse* response) override;
  grpc::Status GetCapabilities(grpc::ServerContext* context, const v1::GetCapabilitiesRequest* request,
                               v1::Capabilities* response) override;

  // After this, new calls are refused with UNAVAILABLE (the server is draining).
  // Calls still running at `deadline` are cancelled by gRPC, and logged as the drain's.
  void StartDrain(std::chrono::system_clock::time_point deadline, int grace_period_seconds) {
    drain_.Start(deadline, grace_period_seconds);
  }

 private:
  // Counts a failed call by code and passes its status through.
  grpc::Status Fail(const char* method, const grpc::Status& status);

  const ServerConfig& config_;
  ServerMetrics* metrics_;
  StreamAdmission admission_;
  MemoryBudget memory_budget_;
  StreamAdmission cpu_streams_;
  DrainState drain_;
  StreamIdleMonitor idle_monitor_;
  DecodeThreadBudget decode_threads_;
};

// absl::Status -> grpc::Status with the same code and message.
grpc::Status ToGrpc(const absl::Status& status);

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_SCORER_SERVICE_H_
