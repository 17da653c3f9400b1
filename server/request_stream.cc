#include "server/request_stream.h"

#include "absl/strings/str_cat.h"

namespace exactq::server {

bool RequestStream::Read(v1::ScoreRequest* request) {
  if (!parse_error_.ok()) return false;
  grpc::ByteBuffer bytes;
  if (idle_ != nullptr) idle_->ReadStarted();
  const bool got = raw_->Read(&bytes);
  bool parsed = false;
  if (got) {
    ++messages_;
    parsed = grpc::GenericDeserialize<grpc::ProtoBufferReader, v1::ScoreRequest>(&bytes, request).ok();
    if (!parsed) {
      parse_error_ = grpc::Status(
          grpc::StatusCode::INVALID_ARGUMENT,
          absl::StrCat("request: message ", messages_, " of the stream is not a valid exactq.v1.ScoreRequest"));
    }
  }
  if (idle_ != nullptr) {
    idle_->ReadEnded(parsed && (request->has_header() || !request->chunk().data().empty()));
  }
  return parsed;
}

grpc::Status RequestStream::error() const {
  if (!parse_error_.ok()) return parse_error_;
  if (idle_ != nullptr && idle_->expired()) return idle_->status();
  return grpc::Status::OK;
}

grpc::Status RequestStream::cancellation() const {
  if (idle_ != nullptr && idle_->expired()) return idle_->status();
  if (drain_ != nullptr && drain_->grace_period_over()) {
    return grpc::Status(grpc::StatusCode::CANCELLED,
                        absl::StrCat("cancelled by the drain: its grace period (grace_period_seconds=",
                                     drain_->grace_period_seconds(), ") ended"));
  }
  return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled by the client");
}

}  // namespace exactq::server
