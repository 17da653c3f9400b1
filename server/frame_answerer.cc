#include "server/frame_answerer.h"

#include <chrono>
#include <utility>

#include "server/scorer_service.h"
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
  sum->set_host_to_device_bytes(sum->host_to_device_bytes() + t.host_to_device_bytes());
}

void ObserveStages(const v1::FrameTiming& t, ServerMetrics* metrics) {
  metrics->stage_seconds.At({"received"}).Observe(Seconds(t.received_ns()));
  metrics->stage_seconds.At({"queued"}).Observe(Seconds(t.queued_ns()));
  metrics->stage_seconds.At({"host_to_device"}).Observe(Seconds(t.host_to_device_ns()));
  metrics->stage_seconds.At({"compute"}).Observe(Seconds(t.compute_ns()));
  metrics->stage_seconds.At({"device_to_host"}).Observe(Seconds(t.device_to_host_ns()));
  metrics->frame_seconds.At({}).Observe(Seconds(t.total_ns()));
}

}  // namespace

FrameAnswerer::Writer FrameAnswerer::StreamWriter(Stream* stream, StreamIdleMonitor::Watch* idle) {
  return [stream, idle](v1::FrameResult&& frame) {
    v1::ScoreResponse response;
    *response.mutable_frame() = std::move(frame);
    return WatchedWrite(idle, [&] { return stream->Write(response); });
  };
}

FrameAnswerer::FrameAnswerer(ServerMetrics* metrics, Writer writer, std::string job_id,
                             std::vector<std::string> metric_names, size_t output_count, uint64_t frame_bytes,
                             FrameCounts* counts)
    : metrics_(metrics),
      writer_(std::move(writer)),
      job_id_(std::move(job_id)),
      metric_names_(std::move(metric_names)),
      frame_bytes_(frame_bytes),
      counts_(counts),
      per_output_(output_count) {}

void FrameAnswerer::Fail(const grpc::Status& status) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (error_.ok()) error_ = status;
}

grpc::Status FrameAnswerer::error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

std::optional<AssembledFrame> FrameAnswerer::TakeSpare() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::optional<AssembledFrame> spare = std::move(spare_);
  spare_.reset();
  return spare;
}

void FrameAnswerer::Answer(AssembledFrame frame, FramePipeline::Result result) {
  if (!error().ok()) return;  // the stream is ending with an earlier error
  if (!result.scored.ok()) return Fail(ToGrpc(result.scored.status()));
  const ScoredFrame& scored = *result.scored;

  v1::FrameResult answer;
  answer.set_frame_index(frame.index);
  ToWire(scored, &answer);
  v1::FrameTiming* timing = answer.mutable_timing();
  timing->set_received_ns(Nanos(frame.last_chunk - frame.first_chunk));
  timing->set_queued_ns(Nanos(result.started - frame.last_chunk));
  timing->set_total_ns(Nanos(result.done - frame.first_chunk));
  ObserveStages(*timing, metrics_);
  AddTiming(*timing, &timing_sum_);
  for (size_t i = 0; i < scored.scores.size(); ++i) per_output_[i].push_back(scored.scores[i].value);
  const char* backend = BackendName(scored.backend);
  for (const std::string& name : metric_names_) {
    metrics_->frames_scored.At({name, backend}).Increment();
    metrics_->bytes_scored.At({name, backend}).Increment(2.0 * static_cast<double>(frame_bytes_));
  }
  if (!scored.fallback_reason.empty()) {
    metrics_->fallbacks.At({scored.fallback_reason}).Increment();
    if (scored.fallback_reason != last_fallback_) {
      spdlog::warn("job_id={} frame {} on the CPU: {} ({})", job_id_, frame.index, scored.fallback_reason,
                   scored.fallback_detail);
      last_fallback_ = scored.fallback_reason;
    }
  }
  ++counts_->frames;
  (scored.backend == Backend::kCuda ? counts_->cuda : counts_->cpu)++;
  if (!writer_(std::move(answer))) return Fail(grpc::Status(grpc::StatusCode::CANCELLED, "client went away"));
  std::lock_guard<std::mutex> lock(mutex_);
  spare_.emplace(std::move(frame));
}

}  // namespace exactq::server
