// One streaming call as its session sees it: requests arrive as raw bytes and are
// parsed here, so that a malformed message is an error the session answers
// (INVALID_ARGUMENT, after the frames before it) rather than what gRPC's synchronous
// API makes of it, a Read that returns false as if the client had half-closed (the
// frames after it then vanished and the call ended OK). Reads also drive the stream's
// idle clock, and a call cancelled under the session is told apart: the idle limit,
// the drain's grace period, or the client. ScoreStream uses RequestStream, ScoreLadder
// LadderRequestStream.
#ifndef EXACTQ_SERVER_REQUEST_STREAM_H_
#define EXACTQ_SERVER_REQUEST_STREAM_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "exactq/v1/exactq.grpc.pb.h"
#include "server/chunk_wire.h"
#include "server/drain_state.h"
#include "server/stream_idle_monitor.h"

namespace exactq::server {

// Whether a request moves the stream on (a header or bytes), for the idle clock: empty
// chunks do not keep a stream alive.
inline bool CarriesWork(const v1::ScoreRequest& r) {
  return r.has_header() || !r.chunk().data().empty() || !r.encoded_chunk().data().empty();
}
inline bool CarriesWork(const v1::LadderRequest& r) { return r.has_header() || !r.chunk().chunk().data().empty(); }

// The cancellation status of a call cancelled under its session.
grpc::Status CancellationStatus(const StreamIdleMonitor::Watch* idle, const DrainState* drain);

template <typename Response, typename Request>
class ParsedRequestStream final : public grpc::ServerReaderWriterInterface<Response, Request> {
 public:
  using Raw = grpc::ServerReaderWriter<Response, grpc::ByteBuffer>;

  // idle and drain may be null.
  ParsedRequestStream(Raw* raw, StreamIdleMonitor::Watch* idle, const DrainState* drain)
      : raw_(raw), idle_(idle), drain_(drain) {}

  // False at the end of the requests, and also when error() is set: a malformed
  // message, or the idle limit fired.
  bool Read(Request* request) override {
    if (!parse_error_.ok()) return false;
    grpc::ByteBuffer bytes;
    in_place_.clear();
    in_place_size_ = 0;
    slices_.clear();  // the previous message's bytes
    if (idle_ != nullptr) idle_->ReadStarted();
    const bool got = raw_->Read(&bytes);
    bool parsed = false;
    if (got) {
      ++messages_;
      if constexpr (std::is_same_v<Request, v1::ScoreRequest>) parsed = ReadChunkInPlace(bytes, request);
      if (!parsed) parsed = grpc::GenericDeserialize<grpc::ProtoBufferReader, Request>(&bytes, request).ok();
      if (!parsed) {
        parse_error_ = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                    absl::StrCat("request: message ", messages_, " of the stream is not a valid ",
                                                 Request::descriptor()->full_name()));
      }
    }
    if (idle_ != nullptr) idle_->ReadEnded(parsed && (CarriesWork(*request) || in_place_size_ > 0));
    return parsed;
  }
  // The data of the chunk Read returned last: pieces of the received message when it was
  // read in place (the chunk's own `data` is then empty), else its `data` as one piece.
  // Valid until the next Read.
  ChunkBytes chunk_data(const v1::FrameChunk& chunk) {
    if (in_place_.empty()) {
      whole_ = absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(chunk.data().data()), chunk.data().size());
      return {BytePieces(&whole_, 1), chunk.data().size()};
    }
    return {in_place_, in_place_size_};
  }
  grpc::Status error() const {
    if (!parse_error_.ok()) return parse_error_;
    if (idle_ != nullptr && idle_->expired()) return idle_->status();
    return grpc::Status::OK;
  }
  // Why the call was cancelled under the session (the drain, or the client).
  grpc::Status cancellation() const { return CancellationStatus(idle_, drain_); }
  // The stream's idle clock (null when the limit is off), for the frames it is scoring.
  StreamIdleMonitor::Watch* idle() const { return idle_; }

  using grpc::internal::WriterInterface<Response>::Write;
  bool Write(const Response& response, grpc::WriteOptions options) override { return raw_->Write(response, options); }
  void SendInitialMetadata() override { raw_->SendInitialMetadata(); }
  bool NextMessageSize(uint32_t* size) override { return raw_->NextMessageSize(size); }

 private:
  // A ScoreRequest carrying one chunk: its numbers into *request, its data left in the
  // received slices (chunk_wire.h). False: the caller parses it with protobuf.
  bool ReadChunkInPlace(const grpc::ByteBuffer& bytes, v1::ScoreRequest* request) {
    if (!bytes.Dump(&slices_).ok()) return false;
    std::vector<absl::Span<const uint8_t>> pieces;
    pieces.reserve(slices_.size());
    for (const grpc::Slice& slice : slices_) pieces.emplace_back(slice.begin(), slice.size());
    ChunkWireView view;
    if (!ReadChunkRequest(pieces, &view)) return false;
    request->Clear();
    v1::FrameChunk* chunk = request->mutable_chunk();
    chunk->set_frame_index(view.frame_index);
    chunk->set_picture(static_cast<v1::Picture>(view.picture));
    chunk->set_offset(view.offset);
    chunk->set_last(view.last);
    in_place_ = std::move(view.data);
    in_place_size_ = view.data_size;
    return true;
  }

  Raw* const raw_;
  StreamIdleMonitor::Watch* const idle_;
  const DrainState* const drain_;
  uint64_t messages_ = 0;
  grpc::Status parse_error_;
  std::vector<grpc::Slice> slices_;                  // the last message's bytes, while read in place
  std::vector<absl::Span<const uint8_t>> in_place_;  // its chunk's data, in pieces of slices_
  uint64_t in_place_size_ = 0;
  absl::Span<const uint8_t> whole_;  // chunk_data's one piece
};

using RequestStream = ParsedRequestStream<v1::ScoreResponse, v1::ScoreRequest>;
using LadderRequestStream = ParsedRequestStream<v1::LadderResponse, v1::LadderRequest>;

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_REQUEST_STREAM_H_
