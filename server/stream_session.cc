#include "server/stream_session.h"

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/pooling/pooling.h"
#include "engine/runtime/frame_scorer.h"
#include "server/frame_assembler.h"
#include "server/scorer_service.h"
#include "server/version.h"
#include "server/wire_conversion.h"
#include "spdlog/spdlog.h"

namespace exactq::server {

namespace {

uint64_t Nanos(Clock::duration d) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
}

double Seconds(uint64_t ns) { return static_cast<double>(ns) * 1e-9; }

void AddTiming(const v1::FrameTiming& t, v1::FrameTiming* sum) {
  sum->set_received_ns(sum->received_ns() + t.received_ns());
  sum->set_queued_ns(sum->queued_ns() + t.queued_ns());
  sum->set_host_to_device_ns(sum->host_to_device_ns() + t.host_to_device_ns());
  sum->set_compute_ns(sum->compute_ns() + t.compute_ns());
  sum->set_device_to_host_ns(sum->device_to_host_ns() + t.device_to_host_ns());
  sum->set_total_ns(sum->total_ns() + t.total_ns());
}

void ObserveStages(const v1::FrameTiming& t, ServerMetrics* metrics) {
  metrics->stage_seconds.At({"received"}).Observe(Seconds(t.received_ns()));
  metrics->stage_seconds.At({"queued"}).Observe(Seconds(t.queued_ns()));
  metrics->stage_seconds.At({"host_to_device"}).Observe(Seconds(t.host_to_device_ns()));
  metrics->stage_seconds.At({"compute"}).Observe(Seconds(t.compute_ns()));
  metrics->stage_seconds.At({"device_to_host"}).Observe(Seconds(t.device_to_host_ns()));
  metrics->stage_seconds.At({"total"}).Observe(Seconds(t.total_ns()));
}

// Keeps the active-stream gauge and the end-of-stream log line right on every exit.
class SessionLog {
 public:
  SessionLog(ServerMetrics* metrics, std::string peer) : metrics_(metrics), peer_(std::move(peer)) {
    metrics_->active_streams.At({}).Add(1);
    metrics_->streams_started.At({}).Increment();
  }
  ~SessionLog() {
    metrics_->active_streams.At({}).Add(-1);
    const double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    if (status_.ok()) {
      spdlog::info("stream end job_id={} peer={} frames={} cpu={} cuda={} seconds={:.3f} fps={:.2f}",
                   job_id_, peer_, frames_, frames_cpu_, frames_cuda_, seconds,
                   seconds > 0 ? frames_ / seconds : 0.0);
    } else {
      spdlog::warn("stream failed job_id={} peer={} frames={} code={} error=\"{}\"", job_id_, peer_,
                   frames_, static_cast<int>(status_.error_code()), status_.error_message());
    }
  }
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
  grpc::Status status_;
};

grpc::Status Invalid(const std::string& message) {
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, message);
}

}  // namespace

absl::StatusOr<StreamAdmission::Ticket> AdmitCpuStream(StreamAdmission* cpu_streams, grpc::ServerContext* context) {
  absl::StatusOr<StreamAdmission::Ticket> ticket = cpu_streams->Admit("cpu");
  if (ticket.ok()) return ticket;
  context->AddTrailingMetadata("retry-after-seconds", "5");
  return absl::UnavailableError(absl::StrCat("the CPU pool is saturated (", ticket.status().message(),
                                             "); retry in a few seconds or on another replica"));
}

grpc::Status RunStreamSession(const ServerConfig& config, ServerMetrics* metrics,
                              const SessionResources& resources, grpc::ServerContext* context,
                              grpc::ServerReaderWriter<v1::ScoreResponse, v1::ScoreRequest>* stream) {
  SessionLog log(metrics, context->peer());
  v1::ScoreRequest request;
  if (!stream->Read(&request)) return log.Finish(Invalid("header: the stream ended before its header"));
  if (!request.has_header()) {
    return log.Finish(Invalid("header: the first message of a stream must be a StreamHeader"));
  }
  const v1::StreamHeader header = request.header();  // a copy: `request` is reused below
  log.job_id_ = header.job_id();
  absl::StatusOr<ScoringRequest> wanted = FromWire(header, config.limits);
  if (!wanted.ok()) return log.Finish(ToGrpc(wanted.status()));
  // One frame in flight: its two pictures.
  absl::StatusOr<MemoryBudget::Reservation> reservation =
      resources.memory_budget->Reserve(2 * static_cast<uint64_t>(wanted->geometry.frame_bytes()));
  if (!reservation.ok()) return log.Finish(ToGrpc(reservation.status()));
  absl::StatusOr<std::unique_ptr<FrameScorer>> scorer =
      FrameScorer::Create(wanted->geometry, wanted->metrics, wanted->backend);
  if (!scorer.ok()) return log.Finish(ToGrpc(scorer.status()));
  const FrameGeometry geometry = wanted->geometry;
  std::optional<StreamAdmission::Ticket> cpu_slot;
  if ((*scorer)->placement() == FrameScorer::kCpuDevice) {
    absl::StatusOr<StreamAdmission::Ticket> ticket = AdmitCpuStream(resources.cpu_streams, context);
    if (!ticket.ok()) return log.Finish(ToGrpc(ticket.status()));
    cpu_slot.emplace(std::move(*ticket));
  }
  const uint64_t expected_frames = header.expected_frames();

  std::vector<std::string> metric_names;
  for (const MetricSpec& m : wanted->metrics) metric_names.push_back(m.name);
  spdlog::info("stream start job_id={} peer={} geometry={} metrics={} backend={} placement={} expected_frames={}",
               log.job_id_, context->peer(), GeometryDescription(geometry), absl::StrJoin(metric_names, ","),
               v1::Backend_Name(header.backend()), (*scorer)->placement(), expected_frames);

  v1::ScoreResponse response;
  v1::StreamAccepted* accepted = response.mutable_accepted();
  accepted->set_job_id(header.job_id());
  ToWire(**scorer, kServerVersion, accepted->mutable_provenance());
  accepted->set_max_frames_in_flight(1);
  accepted->set_max_chunk_bytes(config.limits.max_chunk_bytes);
  if (!stream->Write(response)) {
    return log.Finish(grpc::Status(grpc::StatusCode::CANCELLED, "client went away"));
  }

  FrameAssembler assembler(geometry, config.limits.max_chunk_bytes);
  // Frames of this stream counted in exactq_frames_in_flight (from first chunk to
  // scoring); whatever is left is uncounted when the session ends.
  struct InFlight {
    GaugeSeries& gauge;
    int count = 0;
    void Add(int n) { count += n; gauge.Add(n); }
    ~InFlight() { gauge.Add(-count); }
  } in_flight{metrics->frames_in_flight.At({})};
  const std::vector<std::string>& outputs = (*scorer)->output_names();
  std::vector<std::vector<double>> per_output(outputs.size());
  v1::StreamTotals totals;
  std::string last_fallback;  // log a fallback once per change of reason, not per frame
  while (stream->Read(&request)) {
    if (context->IsCancelled()) {
      return log.Finish(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled by the client"));
    }
    if (request.has_header()) return log.Finish(Invalid("header: only the first message may be a header"));
    if (!request.has_chunk()) return log.Finish(Invalid("request: a message with neither header nor chunk"));
    const v1::FrameChunk& chunk = request.chunk();
    const Clock::time_point arrival = Clock::now();
    if (config.limits.max_frames_per_stream != 0 &&
        chunk.frame_index() >= config.limits.max_frames_per_stream) {
      return log.Finish(grpc::Status(
          grpc::StatusCode::RESOURCE_EXHAUSTED,
          absl::StrCat("chunk.frame_index: ", chunk.frame_index(),
                       " exceeds the limit max_frames_per_stream=", config.limits.max_frames_per_stream)));
    }
    if (expected_frames != 0 && chunk.frame_index() >= expected_frames) {
      return log.Finish(Invalid(absl::StrCat("chunk.frame_index: ", chunk.frame_index(),
                                             " is past header.expected_frames=", expected_frames)));
    }
    const bool frame_starts = !assembler.HasPartialFrame();
    if (absl::Status s = assembler.Add(chunk, arrival); !s.ok()) return log.Finish(ToGrpc(s));
    if (frame_starts) in_flight.Add(1);
    metrics->bytes_received.At({}).Increment(static_cast<double>(chunk.data().size()));
    totals.set_bytes_received(totals.bytes_received() + chunk.data().size());
    if (!assembler.FrameReady()) continue;

    AssembledFrame frame = assembler.TakeFrame();
    for (const auto& [picture, name] : {std::pair{&frame.reference, "reference"},
                                        std::pair{&frame.distorted, "distorted"}}) {
      if (absl::Status s = ValidateSampleRange(*picture); !s.ok()) {
        return log.Finish(Invalid(absl::StrCat("chunk.data: frame ", frame.index, " ", name,
                                               " picture: ", s.message())));
      }
    }
    const Clock::time_point started = Clock::now();
    absl::StatusOr<ScoredFrame> scored = (*scorer)->Score(frame.reference, frame.distorted);
    if (!scored.ok()) return log.Finish(ToGrpc(scored.status()));
    const Clock::time_point done = Clock::now();
    in_flight.Add(-1);

    response.Clear();
    v1::FrameResult* result = response.mutable_frame();
    result->set_frame_index(frame.index);
    ToWire(*scored, result);
    v1::FrameTiming* timing = result->mutable_timing();
    timing->set_received_ns(Nanos(frame.last_chunk - frame.first_chunk));
    timing->set_queued_ns(Nanos(started - frame.last_chunk));
    timing->set_total_ns(Nanos(done - frame.first_chunk));
    ObserveStages(*timing, metrics);
    AddTiming(*timing, totals.mutable_timing_sum());
    for (size_t i = 0; i < scored->scores.size(); ++i) per_output[i].push_back(scored->scores[i].value);
    const char* backend = BackendName(scored->backend);
    for (const std::string& name : metric_names) {
      metrics->frames_scored.At({name, backend}).Increment();
      metrics->bytes_scored.At({name, backend}).Increment(2.0 * static_cast<double>(geometry.frame_bytes()));
    }
    if (!scored->fallback_reason.empty()) {
      metrics->fallbacks.At({scored->fallback_reason}).Increment();
      if (scored->fallback_reason != last_fallback) {
        spdlog::warn("job_id={} frame {} on the CPU: {} ({})", log.job_id_, frame.index, scored->fallback_reason,
                     scored->fallback_detail);
        last_fallback = scored->fallback_reason;
      }
    }
    ++log.frames_;
    (scored->backend == Backend::kCuda ? log.frames_cuda_ : log.frames_cpu_)++;
    if (!stream->Write(response)) {
      return log.Finish(grpc::Status(grpc::StatusCode::CANCELLED, "client went away"));
    }
    assembler.Recycle(std::move(frame));
  }
  if (context->IsCancelled()) {
    return log.Finish(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled by the client"));
  }
  if (assembler.HasPartialFrame()) {
    return log.Finish(Invalid(absl::StrCat(
        "chunk: the stream ended in the middle of frame ", assembler.next_frame_index(),
        " (both pictures must be complete before the client half-closes)")));
  }

  response.Clear();
  v1::StreamSummary* summary = response.mutable_summary();
  summary->set_job_id(header.job_id());
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (per_output[i].empty()) break;
    absl::StatusOr<PooledScores> pooled_or = PoolScores(per_output[i]);
    if (!pooled_or.ok()) return log.Finish(ToGrpc(pooled_or.status()));
    const PooledScores& pooled = *pooled_or;
    v1::PooledScore* out = summary->add_pooled();
    out->set_name(outputs[i]);
    out->set_min(pooled.min);
    out->set_max(pooled.max);
    out->set_mean(pooled.mean);
    out->set_harmonic_mean(pooled.harmonic_mean);
    out->set_p1(pooled.p1);
    out->set_p5(pooled.p5);
    out->set_p10(pooled.p10);
    out->set_median(pooled.median);
  }
  const uint64_t wall_ns = Nanos(Clock::now() - log.start_);
  totals.set_frames(log.frames_);
  totals.set_frames_cpu(log.frames_cpu_);
  totals.set_frames_cuda(log.frames_cuda_);
  totals.set_wall_ns(wall_ns);
  totals.set_frames_per_second(wall_ns > 0 ? static_cast<double>(log.frames_) / Seconds(wall_ns) : 0.0);
  *summary->mutable_totals() = totals;
  ToWire(**scorer, kServerVersion, summary->mutable_provenance());
  stream->Write(response);
  return log.Finish(grpc::Status::OK);
}

}  // namespace exactq::server
