// The exactq.v1.Scorer service: translates between the wire and the engine. It holds
// no pixel code; frames go to engine::FrameScorer, statistics to engine pooling.
#ifndef EXACTQ_SERVER_SCORER_SERVICE_H_
#define EXACTQ_SERVER_SCORER_SERVICE_H_

#include <atomic>

#include "exactq/v1/exactq.grpc.pb.h"
#include "server/decode_thread_budget.h"
#include "server/memory_budget.h"
#include "server/server_config.h"
#include "server/server_metrics.h"
#include "server/stream_admission.h"

namespace exactq::server {

class ScorerService final : public v1::Scorer::Service {
 public:
  ScorerService(const ServerConfig& config, ServerMetrics* metrics);

  grpc::Status ScoreStream(grpc::ServerContext* context,
                           grpc::ServerReaderWriter<v1::ScoreResponse, v1::ScoreRequest>* stream) override;
  grpc::Status ScorePair(grpc::ServerContext* context, const v1::ScorePairRequest* request,
                         v1::ScorePairResponse* response) override;
  grpc::Status GetCapabilities(grpc::ServerContext* context, const v1::GetCapabilitiesRequest* request,
                               v1::Capabilities* response) override;

  // After this, new calls are refused with UNAVAILABLE (the server is draining).
  void StartDrain() { draining_.store(true); }

 private:
  // Counts a failed call by code and passes its status through.
  grpc::Status Fail(const grpc::Status& status);

  const ServerConfig& config_;
  ServerMetrics* metrics_;
  StreamAdmission admission_;
  MemoryBudget memory_budget_;
  StreamAdmission cpu_streams_;
  DecodeThreadBudget decode_threads_;
  std::atomic<bool> draining_{false};
};

// absl::Status -> grpc::Status with the same code and message.
grpc::Status ToGrpc(const absl::Status& status);

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_SCORER_SERVICE_H_
