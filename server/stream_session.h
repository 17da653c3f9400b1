// One ScoreStream call from header to summary: validates the header, reassembles the
// frames, has the engine score each as soon as it is complete, answers in frame
// order, and pools the scores when the client half-closes.
//
// Frames in flight: complete frames go to the engine's FramePipeline (K =
// --frames_in_flight) and are answered in frame order on its thread (FrameAnswerer)
// while this thread reads on. Back-pressure: a new frame is read only while fewer
// than K are in flight, so a fast client is slowed by gRPC flow control and the
// server holds at most K frames per stream, reserved from the server's MemoryBudget
// when the header is accepted. An error on frame i ends the call after the answers
// to frames before i, as when frames were scored one at a time.
#ifndef EXACTQ_SERVER_STREAM_SESSION_H_
#define EXACTQ_SERVER_STREAM_SESSION_H_

#include <memory>
#include <optional>

#include "engine/runtime/frame_scorer.h"
#include "exactq/v1/exactq.grpc.pb.h"
#include "server/decode_thread_budget.h"
#include "server/memory_budget.h"
#include "server/request_stream.h"
#include "server/server_config.h"
#include "server/server_metrics.h"
#include "server/stream_admission.h"
#include "server/wire_conversion.h"

namespace exactq::server {

// What sessions share: the host-memory budget, the CPU pool's stream slots and the
// decoder threads.
struct SessionResources {
  MemoryBudget* memory_budget;
  StreamAdmission* cpu_streams;
  DecodeThreadBudget* decode_threads = nullptr;  // decoded sources only
};

// A CPU slot for a stream placed on the CPU, or UNAVAILABLE with a retry hint (also in
// the trailing metadata "retry-after-seconds") when the CPU pool is full.
absl::StatusOr<StreamAdmission::Ticket> AdmitCpuStream(StreamAdmission* cpu_streams, grpc::ServerContext* context);

// The request's scorer (FrameScorer::Create) and, when it was placed on the CPU, a slot
// of the CPU pool held in *cpu_ticket for the call (AdmitCpuStream's UNAVAILABLE when
// the pool is full).
absl::StatusOr<std::unique_ptr<FrameScorer>> CreateAdmittedScorer(const ScoringRequest& wanted,
                                                                  StreamAdmission* cpu_streams,
                                                                  grpc::ServerContext* context,
                                                                  std::optional<StreamAdmission::Ticket>* cpu_ticket);

grpc::Status RunStreamSession(const ServerConfig& config, ServerMetrics* metrics, const SessionResources& resources,
                              grpc::ServerContext* context, RequestStream* stream);

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_STREAM_SESSION_H_
