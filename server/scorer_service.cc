#include "server/scorer_service.h"

#include <cstring>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "engine/metrics/registry.h"
#include "engine/runtime/frame_scorer.h"
#include "engine/runtime/global_device_pool.h"
#include "engine/runtime/gpu_scorer.h"
#include "engine/runtime/runtime_config.h"
#include "server/ladder_session.h"
#include "server/stream_session.h"
#include "server/version.h"
#include "server/wire_conversion.h"

namespace exactq::server {

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  // A message that echoes a client's string is cut, so the trailers fit a client's
  // header list limit (8 KiB by default) and the status still arrives.
  constexpr size_t kMaxMessageBytes = 1024;
  std::string message(status.message());
  if (message.size() > kMaxMessageBytes) {
    message = absl::StrCat(message.substr(0, kMaxMessageBytes), "...(", message.size(), " bytes)");
  }
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), message);
}

ScorerService::ScorerService(const ServerConfig& config, ServerMetrics* metrics)
    : config_(config),
      metrics_(metrics),
      admission_(config.limits.max_streams, config.limits.max_streams_per_peer),
      memory_budget_(config.limits.max_buffered_bytes),
      cpu_streams_(config.limits.max_cpu_streams, config.limits.max_cpu_streams, "max_cpu_streams"),
      idle_monitor_(static_cast<int>(config.limits.stream_idle_seconds)),
      decode_threads_(config.decode.max_decode_threads_total) {
  constexpr int kScoreStreamMethod = 0;  // the first method of exactq.v1.Scorer
  MarkMethodStreamed(kScoreStreamMethod,
                     new grpc::internal::BidiStreamingHandler<ScorerService, grpc::ByteBuffer, v1::ScoreResponse>(
                         [](ScorerService* service, grpc::ServerContext* context, RequestStream::Raw* stream) {
                           return service->ScoreRawStream(context, stream);
                         },
                         this));
  constexpr int kScoreLadderMethod = 3;  // the fourth method of exactq.v1.Scorer
  MarkMethodStreamed(kScoreLadderMethod,
                     new grpc::internal::BidiStreamingHandler<ScorerService, grpc::ByteBuffer, v1::LadderResponse>(
                         [](ScorerService* service, grpc::ServerContext* context, LadderRequestStream::Raw* stream) {
                           return service->ScoreRawLadder(context, stream);
                         },
                         this));
}

grpc::Status ScorerService::Fail(const char* method, const grpc::Status& status) {
  if (!status.ok()) {
    static const char* const kNames[] = {
        "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
        "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
        "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
        "DATA_LOSS", "UNAUTHENTICATED"};
    const int code = static_cast<int>(status.error_code());
    metrics_->errors.At({method, code >= 0 && code <= 16 ? kNames[code] : "UNKNOWN"}).Increment();
  }
  return status;
}

grpc::Status ScorerService::ScoreRawStream(grpc::ServerContext* context, RequestStream::Raw* raw) {
  if (drain_.draining()) {
    return Fail("ScoreStream",
                grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is draining; retry on another replica"));
  }
  absl::StatusOr<StreamAdmission::Ticket> ticket = admission_.Admit(context->peer());
  if (!ticket.ok()) return Fail("ScoreStream", ToGrpc(ticket.status()));
  std::unique_ptr<StreamIdleMonitor::Watch> idle = idle_monitor_.Start(context);
  RequestStream stream(raw, idle.get(), &drain_);
  return Fail("ScoreStream",
              RunStreamSession(config_, metrics_, SessionResources{&memory_budget_, &cpu_streams_, &decode_threads_},
                               context, &stream));
}

grpc::Status ScorerService::ScoreRawLadder(grpc::ServerContext* context, LadderRequestStream::Raw* raw) {
  if (drain_.draining()) {
    return Fail("ScoreLadder",
                grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is draining; retry on another replica"));
  }
  absl::StatusOr<StreamAdmission::Ticket> ticket = admission_.Admit(context->peer());
  if (!ticket.ok()) return Fail("ScoreLadder", ToGrpc(ticket.status()));
  std::unique_ptr<StreamIdleMonitor::Watch> idle = idle_monitor_.Start(context);
  LadderRequestStream stream(raw, idle.get(), &drain_);
  return Fail("ScoreLadder",
              RunLadderSession(config_, metrics_, SessionResources{&memory_budget_, &cpu_streams_, &decode_threads_},
                               context, &stream));
}

grpc::Status ScorerService::ScorePair(grpc::ServerContext* context, const v1::ScorePairRequest* request,
                                      v1::ScorePairResponse* response) {
  if (drain_.draining()) {
    return Fail("ScorePair",
                grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is draining; retry on another replica"));
  }
  absl::StatusOr<StreamAdmission::Ticket> ticket = admission_.Admit(context->peer());
  if (!ticket.ok()) return Fail("ScorePair", ToGrpc(ticket.status()));
  metrics_->streams_started.At({}).Increment();
  absl::StatusOr<ScoringRequest> wanted = FromWire(request->header(), config_.limits);
  if (!wanted.ok()) return Fail("ScorePair", ToGrpc(wanted.status()));
  const uint64_t picture_bytes = wanted->geometry.frame_bytes();
  if (picture_bytes > config_.limits.max_unary_picture_bytes) {
    return Fail("ScorePair", grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                                          absl::StrCat("reference: a ", picture_bytes,
                                                       "-byte picture exceeds the limit max_unary_picture_bytes=",
                                                       config_.limits.max_unary_picture_bytes, "; use ScoreStream")));
  }
  for (const auto& [bytes, name] :
       {std::pair{&request->reference(), "reference"}, std::pair{&request->distorted(), "distorted"}}) {
    if (bytes->size() != picture_bytes) {
      return Fail("ScorePair", grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                            absl::StrCat(name, ": ", bytes->size(), " bytes, expected ", picture_bytes,
                                                         " for ", GeometryDescription(wanted->geometry))));
    }
  }
  absl::StatusOr<MemoryBudget::Reservation> reservation = memory_budget_.Reserve(2 * picture_bytes);
  if (!reservation.ok()) return Fail("ScorePair", ToGrpc(reservation.status()));
  std::optional<StreamAdmission::Ticket> cpu_slot;
  absl::StatusOr<std::unique_ptr<FrameScorer>> scorer =
      CreateAdmittedScorer(*wanted, &cpu_streams_, context, &cpu_slot);
  if (!scorer.ok()) return Fail("ScorePair", ToGrpc(scorer.status()));
  absl::StatusOr<Frame> reference = Frame::Create(wanted->geometry);
  absl::StatusOr<Frame> distorted = Frame::Create(wanted->geometry);
  if (!reference.ok() || !distorted.ok())
    return Fail("ScorePair", grpc::Status(grpc::StatusCode::INTERNAL, "allocation"));
  std::memcpy(reference->mutable_bytes(), request->reference().data(), picture_bytes);
  std::memcpy(distorted->mutable_bytes(), request->distorted().data(), picture_bytes);
  for (const auto& [frame, name] : {std::pair{&*reference, "reference"}, std::pair{&*distorted, "distorted"}}) {
    if (absl::Status s = ValidateSampleRange(*frame); !s.ok()) {
      return Fail("ScorePair", grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, absl::StrCat(name, ": ", s.message())));
    }
  }
  metrics_->bytes_received.At({}).Increment(2.0 * static_cast<double>(picture_bytes));
  const auto started = std::chrono::steady_clock::now();
  absl::StatusOr<ScoredFrame> scored = (*scorer)->Score(*reference, *distorted);
  if (!scored.ok()) return Fail("ScorePair", ToGrpc(scored.status()));
  const auto total = std::chrono::steady_clock::now() - started;
  v1::FrameResult* frame = response->mutable_frame();
  ToWire(*scored, frame);
  frame->mutable_timing()->set_total_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(total).count());
  for (const MetricSpec& m : wanted->metrics) {
    metrics_->frames_scored.At({m.name, BackendName(scored->backend)}).Increment();
    metrics_->bytes_scored.At({m.name, BackendName(scored->backend)})
        .Increment(2.0 * static_cast<double>(picture_bytes));
  }
  ToWire(**scorer, kServerVersion, response->mutable_provenance());
  return grpc::Status::OK;
}

grpc::Status ScorerService::GetCapabilities(grpc::ServerContext*, const v1::GetCapabilitiesRequest*,
                                            v1::Capabilities* response) {
  response->set_server_version(kServerVersion);
  for (const MetricInfo& info : ListMetrics()) {
    v1::MetricInfo* out = response->add_metrics();
    out->set_name(info.name);
    out->set_definition_version(info.definition_version);
    out->set_description(info.description);
    for (const std::string& output : info.outputs) out->add_outputs(output);
    for (const MetricOptionInfo& option : info.options) {
      v1::MetricOption* o = out->add_options();
      o->set_name(option.name);
      o->set_default_value(option.default_value);
      o->set_description(option.description);
    }
    out->add_backends(v1::BACKEND_CPU);
    // A CUDA twin in this build (the devices below say whether one can run now).
    if (FindGpuMetricFactory(info.name) != nullptr) out->add_backends(v1::BACKEND_CUDA);
  }
  for (v1::ChromaLayout layout : {v1::CHROMA_400, v1::CHROMA_420, v1::CHROMA_422, v1::CHROMA_444}) {
    response->add_chroma_layouts(layout);
  }
  // Every visible GPU; healthy: in this process's pool and taking new streams now.
  std::map<int, bool> usable;
  for (const DeviceHealth& h : GlobalDevicePool().Snapshot()) usable[h.device.index] = h.state == DeviceState::kUsable;
  if (absl::StatusOr<std::vector<GpuDevice>> devices = ListGpuDevices(); devices.ok()) {
    for (const GpuDevice& d : *devices) {
      v1::Device* out = response->add_devices();
      out->set_index(d.index);
      out->set_name(d.name);
      out->set_compute_capability(d.compute_capability);
      out->set_memory_bytes(d.memory_bytes);
      out->set_healthy(usable[d.index]);
    }
  }
  response->set_min_bit_depth(kMinBitDepth);
  response->set_max_bit_depth(kMaxBitDepth);
  v1::Limits* limits = response->mutable_limits();
  const ServerLimits& l = config_.limits;
  limits->set_max_chunk_bytes(l.max_chunk_bytes);
  limits->set_max_unary_picture_bytes(l.max_unary_picture_bytes);
  limits->set_max_width(l.max_width);
  limits->set_max_height(l.max_height);
  limits->set_max_streams(l.max_streams);
  limits->set_max_streams_per_peer(l.max_streams_per_peer);
  limits->set_max_frames_in_flight_per_stream(l.max_frames_in_flight_per_stream);
  limits->set_max_frames_per_stream(l.max_frames_per_stream);
  limits->set_max_buffered_bytes(l.max_buffered_bytes);
  limits->set_max_device_bytes(GetRuntimeConfig().max_device_bytes);
  limits->set_max_cpu_streams(l.max_cpu_streams);
  limits->set_max_upload_bytes(config_.decode.max_upload_bytes);
  limits->set_max_decode_threads(config_.decode.max_decode_threads);
  limits->set_server_paths(!config_.decode.source_roots.empty());
  limits->set_max_renditions(l.max_renditions);
  return grpc::Status::OK;
}

}  // namespace exactq::server
