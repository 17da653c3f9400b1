// One ScoreStream call as its session sees it: requests arrive as raw bytes and are
// parsed here, so that a malformed message is an error the session answers
// (INVALID_ARGUMENT, after the frames before it) rather than what gRPC's synchronous
// API makes of it, a Read that returns false as if the client had half-closed (the
// frames after it then vanished and the call ended OK). Reads also drive the stream's
// idle clock, and a call cancelled under the session is told apart: the idle limit,
// the drain's grace period, or the client.
#ifndef EXACTQ_SERVER_REQUEST_STREAM_H_
#define EXACTQ_SERVER_REQUEST_STREAM_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>

#include "exactq/v1/exactq.grpc.pb.h"
#include "server/drain_state.h"
#include "server/stream_idle_monitor.h"

namespace exactq::server {

class RequestStream final : public grpc::ServerReaderWriterInterface<v1::ScoreResponse, v1::ScoreRequest> {
 public:
  using Raw = grpc::ServerReaderWriter<v1::ScoreResponse, grpc::ByteBuffer>;

  // idle and drain may be null.
  RequestStream(Raw* raw, StreamIdleMonitor::Watch* idle, const DrainState* drain)
      : raw_(raw), idle_(idle), drain_(drain) {}

  // False at the end of the requests, and also when error() is set: a malformed
  // message, or the idle limit fired.
  bool Read(v1::ScoreRequest* request) override;
  grpc::Status error() const;
  // Why the call was cancelled under the session (the drain, or the client).
  grpc::Status cancellation() const;
  // The stream's idle clock (null when the limit is off), for the frames it is scoring.
  StreamIdleMonitor::Watch* idle() const { return idle_; }

  using grpc::internal::WriterInterface<v1::ScoreResponse>::Write;
  bool Write(const v1::ScoreResponse& response, grpc::WriteOptions options) override {
    return raw_->Write(response, options);
  }
  void SendInitialMetadata() override { raw_->SendInitialMetadata(); }
  bool NextMessageSize(uint32_t* size) override { return raw_->NextMessageSize(size); }

 private:
  Raw* const raw_;
  StreamIdleMonitor::Watch* const idle_;
  const DrainState* const drain_;
  uint64_t messages_ = 0;
  grpc::Status parse_error_;
};

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_REQUEST_STREAM_H_
