#include "server/stream_session.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <memory_resource>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/pooling/pooling.h"
#include "engine/runtime/frame_pipeline.h"
#include "engine/runtime/frame_scorer.h"
#include "engine/runtime/pinned_frame_memory.h"
#include "server/client_text.h"
#include "server/cpu_slot.h"
#include "server/decoded_stream_session.h"
#include "server/frame_answerer.h"
#include "server/frame_assembler.h"
#include "server/scorer_service.h"
#include "server/session_log.h"
#include "server/version.h"
#include "server/wire_conversion.h"
#include "spdlog/spdlog.h"

namespace exactq::server {

namespace {

uint64_t Nanos(Clock::duration d) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
}

double Seconds(uint64_t ns) { return static_cast<double>(ns) * 1e-9; }

grpc::Status Invalid(const std::string& message) { return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, message); }

}  // namespace

absl::StatusOr<StreamAdmission::Ticket> AdmitCpuStream(StreamAdmission* cpu_streams, grpc::ServerContext* context) {
  absl::StatusOr<StreamAdmission::Ticket> ticket = cpu_streams->Admit("cpu");
  if (ticket.ok()) return ticket;
  context->AddTrailingMetadata("retry-after-seconds", "5");
  return absl::UnavailableError(absl::StrCat("the CPU pool is saturated (", ticket.status().message(),
                                             "); retry in a few seconds or on another replica"));
}

absl::StatusOr<std::unique_ptr<FrameScorer>> CreateAdmittedScorer(const ScoringRequest& wanted,
                                                                  StreamAdmission* cpu_streams,
                                                                  grpc::ServerContext* context,
                                                                  std::optional<StreamAdmission::Ticket>* cpu_ticket) {
  absl::StatusOr<std::unique_ptr<FrameScorer>> scorer =
      FrameScorer::Create(wanted.geometry, wanted.metrics, wanted.backend);
  if (!scorer.ok()) return scorer.status();
  if ((*scorer)->placement() == FrameScorer::kCpuDevice) {
    absl::StatusOr<StreamAdmission::Ticket> ticket = AdmitCpuStream(cpu_streams, context);
    if (!ticket.ok()) return ticket.status();
    cpu_ticket->emplace(std::move(*ticket));
  }
  return scorer;
}

grpc::Status RunStreamSession(const ServerConfig& config, ServerMetrics* metrics, const SessionResources& resources,
                              grpc::ServerContext* context, RequestStream* stream) {
  SessionLog log(metrics, context->peer());
  v1::ScoreRequest request;
  if (!stream->Read(&request)) {
    if (!stream->error().ok()) return log.Finish(stream->error());
    return log.Finish(Invalid("header: the stream ended before its header"));
  }
  if (!request.has_header()) {
    return log.Finish(Invalid("header: the first message of a stream must be a StreamHeader"));
  }
  const v1::StreamHeader header = request.header();  // a copy: `request` is reused below
  log.job_id_ = ClientText(header.job_id());
  if (UsesDecodedSources(header)) {
    FrameCounts decoded_counts;
    const grpc::Status status =
        RunDecodedStreamSession(config, metrics, resources, context, stream, header, &decoded_counts);
    log.frames_ = decoded_counts.frames;
    log.frames_cpu_ = decoded_counts.cpu;
    log.frames_cuda_ = decoded_counts.cuda;
    return log.Finish(status);
  }
  absl::StatusOr<ScoringRequest> wanted = FromWire(header, config.limits);
  if (!wanted.ok()) return log.Finish(ToGrpc(wanted.status()));
  // Each frame reserves its pair of pictures when its first chunk arrives (below); a
  // pair that could never fit is refused now.
  const uint64_t pair_bytes = 2 * static_cast<uint64_t>(wanted->geometry.frame_bytes());
  const int frames_in_flight = static_cast<int>(std::max<uint32_t>(1, config.limits.max_frames_in_flight_per_stream));
  if (absl::Status fits = resources.memory_budget->CheckFits(pair_bytes); !fits.ok()) {
    return log.Finish(ToGrpc(fits));
  }
  absl::StatusOr<std::unique_ptr<FrameScorer>> scorer =
      FrameScorer::Create(wanted->geometry, wanted->metrics, wanted->backend);
  if (!scorer.ok()) return log.Finish(ToGrpc(scorer.status()));
  const FrameGeometry geometry = wanted->geometry;
  // A CPU stream holds a slot of the CPU pool only while its frames are scored
  // (CpuSlot); it is refused now only when every slot is busy scoring.
  std::optional<CpuSlot> cpu_slot;
  if ((*scorer)->placement() == FrameScorer::kCpuDevice) {
    absl::StatusOr<StreamAdmission::Ticket> probe = AdmitCpuStream(resources.cpu_streams, context);
    if (!probe.ok()) return log.Finish(ToGrpc(probe.status()));
    cpu_slot.emplace(resources.cpu_streams, context);
  }
  const uint64_t expected_frames = header.expected_frames();
  const std::string placement = (*scorer)->placement();

  std::vector<std::string> metric_names;
  for (const MetricSpec& m : wanted->metrics) metric_names.push_back(m.name);
  const size_t output_count = (*scorer)->output_names().size();

  // Frames of this stream counted in exactq_frames_in_flight (from first chunk to
  // scoring); whatever is left is uncounted when the session ends.
  struct InFlight {
    GaugeSeries& gauge;
    std::atomic<int> count{0};
    void Add(int n) {
      count.fetch_add(n);
      gauge.Add(n);
    }
    ~InFlight() { gauge.Add(-count.load()); }
  } in_flight{metrics->frames_in_flight.At({})};
  FrameCounts counts;
  FrameAnswerer answerer(metrics, FrameAnswerer::StreamWriter(stream), log.job_id_, metric_names, output_count,
                         geometry.frame_bytes(), &counts);
  // Declared after everything its callbacks touch, so it is joined first.
  FramePipeline pipeline(std::move(*scorer), {frames_in_flight});
  if (!pipeline.sibling_error().ok()) {
    spdlog::info("job_id={} frames in flight {} instead of {}: {}", log.job_id_, pipeline.frames_in_flight(),
                 frames_in_flight, std::string(pipeline.sibling_error().message()));
  }
  // The log line counts what was answered, whichever way the session ends.
  struct CopyCounts {
    SessionLog& log;
    const FrameCounts& counts;
    ~CopyCounts() {
      log.frames_ = counts.frames;
      log.frames_cpu_ = counts.cpu;
      log.frames_cuda_ = counts.cuda;
    }
  };

  spdlog::info(
      "stream start job_id={} peer={} geometry={} metrics={} backend={} placement={} expected_frames={} "
      "frames_in_flight={}",
      log.job_id_, context->peer(), GeometryDescription(geometry), absl::StrJoin(metric_names, ","),
      v1::Backend_Name(header.backend()), placement, expected_frames, pipeline.frames_in_flight());

  v1::ScoreResponse response;
  v1::StreamAccepted* accepted = response.mutable_accepted();
  accepted->set_job_id(header.job_id());
  ToWire(pipeline.scorer(), kServerVersion, accepted->mutable_provenance());
  accepted->set_max_frames_in_flight(pipeline.frames_in_flight());
  accepted->set_max_chunk_bytes(config.limits.max_chunk_bytes);
  if (!stream->Write(response)) {
    return log.Finish(grpc::Status(grpc::StatusCode::CANCELLED, "client went away"));
  }

  // Ends the stream on the reader's error for a later frame: the frames before it are
  // answered first, and an error among them wins, as when frames were scored one by one.
  auto stop = [&](const grpc::Status& reader_error) {
    pipeline.Drain();
    const grpc::Status earlier = answerer.error();
    CopyCounts copy{log, counts};
    // A write that failed because the idle limit cancelled the call is the limit's doing.
    if (stream->idle() != nullptr && stream->idle()->expired()) return log.Finish(stream->idle()->status());
    return log.Finish(earlier.ok() ? reader_error : earlier);
  };
  // The client is gone: nothing more is answered; frames being scored finish unanswered.
  auto cancelled = [&] {
    const grpc::Status status = stream->cancellation();
    answerer.Fail(status);
    pipeline.Cancel(absl::CancelledError(status.error_message()));
    pipeline.Drain();
    CopyCounts copy{log, counts};
    return log.Finish(status);
  };

  // A stream placed on a GPU receives its pictures into page-locked memory, so the GPU
  // copies them from there (no second host copy); a CPU stream needs none.
  FrameAssembler assembler(
      geometry, config.limits.max_chunk_bytes,
      placement == FrameScorer::kCpuDevice ? std::pmr::get_default_resource() : PinnedFrameMemory());
  uint64_t bytes_received = 0;
  std::optional<MemoryBudget::Reservation> frame_memory;  // the frame being assembled
  for (;;) {
    if (!assembler.HasPartialFrame()) {
      // A new frame starts with the next chunk: wait until it has a slot (K pairs held
      // at most), and reuse an answered frame's buffers.
      pipeline.WaitForSlot();
      if (!answerer.error().ok()) return stop(grpc::Status::OK);
      if (std::optional<AssembledFrame> spare = answerer.TakeSpare()) assembler.Recycle(std::move(*spare));
    }
    if (!stream->Read(&request)) {
      if (!stream->error().ok()) return stop(stream->error());
      break;
    }
    if (context->IsCancelled()) return cancelled();
    if (request.has_header()) return stop(Invalid("header: only the first message may be a header"));
    if (!request.has_chunk()) return stop(Invalid("request: a message with neither header nor chunk"));
    const v1::FrameChunk& chunk = request.chunk();
    const Clock::time_point arrival = Clock::now();
    if (config.limits.max_frames_per_stream != 0 && chunk.frame_index() >= config.limits.max_frames_per_stream) {
      return stop(
          grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                       absl::StrCat("chunk.frame_index: ", chunk.frame_index(),
                                    " exceeds the limit max_frames_per_stream=", config.limits.max_frames_per_stream)));
    }
    if (expected_frames != 0 && chunk.frame_index() >= expected_frames) {
      return stop(Invalid(absl::StrCat("chunk.frame_index: ", chunk.frame_index(),
                                       " is past header.expected_frames=", expected_frames)));
    }
    const bool frame_starts = !assembler.HasPartialFrame();
    if (frame_starts) {
      // Short of memory, the stream stops reading until frames (its own or others') free it.
      absl::StatusOr<MemoryBudget::Reservation> reserved =
          resources.memory_budget->ReserveWhenAvailable(pair_bytes, [context] { return context->IsCancelled(); });
      if (!reserved.ok()) return context->IsCancelled() ? cancelled() : stop(ToGrpc(reserved.status()));
      frame_memory.reset();
      frame_memory.emplace(std::move(*reserved));
    }
    const ChunkBytes data = stream->chunk_data(chunk);
    if (absl::Status s = assembler.Add(chunk, data, arrival); !s.ok()) return stop(ToGrpc(s));
    if (frame_starts) in_flight.Add(1);
    metrics->bytes_received.At({}).Increment(static_cast<double>(data.size));
    bytes_received += data.size;
    if (!assembler.FrameReady()) continue;

    auto frame = std::make_shared<AssembledFrame>(assembler.TakeFrame());
    for (const auto& [picture, name] :
         {std::pair{&frame->reference, "reference"}, std::pair{&frame->distorted, "distorted"}}) {
      if (absl::Status s = ValidateSampleRange(*picture); !s.ok()) {
        return stop(Invalid(absl::StrCat("chunk.data: frame ", frame->index, " ", name, " picture: ", s.message())));
      }
    }
    // Answered on the pipeline's thread, in frame order, while this one reads on.
    if (cpu_slot.has_value()) {
      if (absl::Status s = cpu_slot->FrameStarting(); !s.ok()) {
        return context->IsCancelled() ? cancelled() : stop(ToGrpc(s));
      }
    }
    if (stream->idle() != nullptr) stream->idle()->FrameSubmitted();
    auto memory = std::make_shared<MemoryBudget::Reservation>(std::move(*frame_memory));
    frame_memory.reset();
    absl::Status submitted =
        pipeline.Submit(frame->reference, frame->distorted, [&, frame, memory](FramePipeline::Result result) mutable {
          in_flight.Add(-1);
          if (stream->idle() != nullptr) stream->idle()->FrameScored();
          answerer.Answer(std::move(*frame), std::move(result));
          memory.reset();
          if (cpu_slot.has_value()) cpu_slot->FrameDone();
          if (stream->idle() != nullptr) stream->idle()->FrameAnswered();
        });
    if (!submitted.ok()) return stop(ToGrpc(submitted));
  }
  if (context->IsCancelled()) return cancelled();
  pipeline.Drain();
  CopyCounts copy{log, counts};
  if (grpc::Status error = answerer.error(); !error.ok()) return log.Finish(error);
  if (assembler.HasPartialFrame()) {
    return log.Finish(
        Invalid(absl::StrCat("chunk: the stream ended in the middle of frame ", assembler.next_frame_index(),
                             " (both pictures must be complete before the client half-closes)")));
  }

  response.Clear();
  v1::StreamSummary* summary = response.mutable_summary();
  summary->set_job_id(header.job_id());
  const std::vector<std::string>& outputs = pipeline.scorer().output_names();
  const std::vector<std::vector<double>>& per_output = answerer.per_output();
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
  v1::StreamTotals totals;
  totals.set_bytes_received(bytes_received);
  *totals.mutable_timing_sum() = answerer.timing_sum();
  totals.set_frames(counts.frames);
  totals.set_frames_cpu(counts.cpu);
  totals.set_frames_cuda(counts.cuda);
  totals.set_wall_ns(wall_ns);
  totals.set_frames_per_second(wall_ns > 0 ? static_cast<double>(counts.frames) / Seconds(wall_ns) : 0.0);
  *summary->mutable_totals() = totals;
  ToWire(pipeline.scorer(), kServerVersion, summary->mutable_provenance());
  stream->Write(response);
  return log.Finish(grpc::Status::OK);
}

}  // namespace exactq::server
