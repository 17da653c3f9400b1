#include "server/decoded_stream_session.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/decode/decoded_pair.h"
#include "engine/decode/video_decoder.h"
#include "engine/runtime/device_memory_ledger.h"
#include "engine/runtime/frame_pipeline.h"
#include "engine/runtime/frame_scorer.h"
#include "engine/runtime/pinned_frame_memory.h"
#include "server/encoded_source.h"
#include "server/scorer_service.h"
#include "server/stream_summary.h"
#include "server/version.h"
#include "server/wire_conversion.h"
#include "spdlog/spdlog.h"

namespace exactq::server {
namespace {

using Stream = RequestStream;

// Pictures each side decodes ahead of the pipeline.
constexpr int kDecodeAheadFrames = 2;

// The scoring thread's work: decoders, scorer, answers, summary.
class DecodedScoring {
 public:
  DecodedScoring(const ServerConfig& config, ServerMetrics* metrics, const SessionResources& resources,
                 grpc::ServerContext* context, Stream* stream, const v1::StreamHeader& header, FrameCounts* counts)
      : config_(config),
        metrics_(metrics),
        resources_(resources),
        context_(context),
        stream_(stream),
        header_(header),
        counts_(counts) {}

  // Runs until both sides end or fail; bytes_received is read at the end.
  grpc::Status Run(EncodedSource* reference, EncodedSource* distorted, const std::atomic<uint64_t>* bytes_received) {
    const auto start = Clock::now();
    DecoderOptions options;
    const uint32_t wanted_threads =
        header_.decode_threads() != 0 ? header_.decode_threads() : config_.decode.decode_threads;
    const uint32_t per_side =
        std::clamp<uint32_t>(wanted_threads, 1, std::max<uint32_t>(1, config_.decode.max_decode_threads));
    std::vector<DecodeThreadBudget::Grant> threads;  // one per side, kept while the decoders run
    options.max_width = static_cast<int>(std::min<uint32_t>(config_.limits.max_width, kMaxFrameDimension));
    options.max_height = static_cast<int>(std::min<uint32_t>(config_.limits.max_height, kMaxFrameDimension));
    const DecodeRequest decode = *RequestedDecode(config_.decode, header_.decode(), "header.decode");
    ApplyDecodeRequest(decode, &options);
    std::unique_ptr<VideoDecoder> decoders[2];
    EncodedSource* sides[2] = {reference, distorted};
    for (int i = 0; i < 2; ++i) {
      absl::StatusOr<std::unique_ptr<VideoDecoder>> decoder =
          OpenDecoderWithThreads(std::move(sides[i]->bytes), options, per_side, resources_.decode_threads, &threads);
      if (!decoder.ok()) return ToGrpc(decoder.status());
      decoders[i] = *std::move(decoder);
    }
    const DecodedStreamInfo ref_info = decoders[0]->info();
    const DecodedStreamInfo dist_info = decoders[1]->info();
    options.threads = std::max(ref_info.threads, dist_info.threads);

    // The header as if the client had named the decoded geometry; its own range and
    // matrix (when given) win over the bitstream's.
    v1::StreamHeader scoring_header = header_;
    *scoring_header.mutable_geometry() = DecodedGeometry(ref_info, header_.geometry().format());
    absl::StatusOr<ScoringRequest> wanted = FromWire(scoring_header, config_.limits);
    if (!wanted.ok()) return ToGrpc(wanted.status());
    const FrameGeometry geometry = wanted->geometry;

    // Frames in flight, plus what the decoders hold: pictures decoded ahead and the
    // decoder's own reference pictures (about threads + a few per side).
    const uint64_t pair_bytes = 2 * static_cast<uint64_t>(geometry.frame_bytes());
    const int frames_in_flight =
        static_cast<int>(std::max<uint32_t>(1, config_.limits.max_frames_in_flight_per_stream));
    const uint64_t decoder_pairs = static_cast<uint64_t>(kDecodeAheadFrames + options.threads + 4);
    absl::StatusOr<MemoryBudget::Reservation> reservation =
        resources_.memory_budget->Reserve((frames_in_flight + decoder_pairs) * pair_bytes);
    if (!reservation.ok()) return ToGrpc(reservation.status());

    std::optional<StreamAdmission::Ticket> cpu_slot;
    absl::StatusOr<std::unique_ptr<FrameScorer>> scorer =
        CreateAdmittedScorer(*wanted, resources_.cpu_streams, context_, &cpu_slot);
    if (!scorer.ok()) return ToGrpc(scorer.status());
    const std::string placement = (*scorer)->placement();
    // A side decoded on the scorer's GPU stays there; host pictures bound for a GPU are
    // page-locked, so the upload is one DMA.
    bool host_pictures_to_gpu = false;
    // What a GPU decoder holds on its device, admitted beside the scorers; released after
    // the decoders close (declared before the pair that owns them).
    std::vector<DeviceMemoryReservation> decoder_device_memory;
    const char* const side_names[2] = {"the reference", "the distorted side"};
    for (int i = 0; i < 2; ++i) {
      const bool on_device = KeepPicturesOnScorerGpu((*scorer)->gpu(), options, decoders[i].get());
      host_pictures_to_gpu = host_pictures_to_gpu || (placement != FrameScorer::kCpuDevice && !on_device);
      absl::StatusOr<DeviceMemoryReservation> device_memory =
          ReserveDecoderDeviceMemory(*decoders[i], options, frames_in_flight + kDecodeAheadFrames + 1, side_names[i]);
      if (!device_memory.ok()) return ToGrpc(device_memory.status());
      decoder_device_memory.push_back(*std::move(device_memory));
    }
    DecodedPair::Options pair_options;
    pair_options.queue_frames = kDecodeAheadFrames;
    pair_options.frame_memory = host_pictures_to_gpu ? PinnedFrameMemory() : std::pmr::get_default_resource();
    absl::StatusOr<std::unique_ptr<DecodedPair>> pair =
        DecodedPair::Start(std::move(decoders[0]), std::move(decoders[1]), pair_options);
    if (!pair.ok()) return ToGrpc(pair.status());

    std::vector<std::string> metric_names;
    for (const MetricSpec& m : wanted->metrics) metric_names.push_back(m.name);
    FrameAnswerer answerer(metrics_, FrameAnswerer::StreamWriter(stream_, stream_->idle()), header_.job_id(),
                           metric_names, (*scorer)->output_names().size(), geometry.frame_bytes(), counts_);
    FramePipeline pipeline(std::move(*scorer), {frames_in_flight});
    spdlog::info(
        "stream start job_id={} peer={} geometry={} metrics={} backend={} placement={} frames_in_flight={} "
        "reference=\"{}\" ({}/{}, {}) distorted=\"{}\" ({}/{}, {}) decode_threads={}",
        header_.job_id(), context_->peer(), GeometryDescription(geometry), absl::StrJoin(metric_names, ","),
        v1::Backend_Name(header_.backend()), placement, pipeline.frames_in_flight(), reference->label,
        ref_info.container, ref_info.codec, TimingDescription(ref_info.timing), distorted->label, dist_info.container,
        dist_info.codec, TimingDescription(dist_info.timing), options.threads);

    v1::ScoreResponse response;
    v1::StreamAccepted* accepted = response.mutable_accepted();
    accepted->set_job_id(header_.job_id());
    ToWire(pipeline.scorer(), kServerVersion, accepted->mutable_provenance());
    accepted->set_max_frames_in_flight(pipeline.frames_in_flight());
    accepted->set_max_chunk_bytes(config_.limits.max_chunk_bytes);
    *accepted->mutable_geometry() = scoring_header.geometry();
    accepted->set_reference_decoder(absl::StrCat(ref_info.container, "/", ref_info.codec));
    accepted->set_distorted_decoder(absl::StrCat(dist_info.container, "/", dist_info.codec));
    ToWire(ref_info, decode, accepted->mutable_reference_decode());
    ToWire(dist_info, decode, accepted->mutable_distorted_decode());
    if (!stream_->Write(response)) return grpc::Status(grpc::StatusCode::CANCELLED, "client went away");

    grpc::Status reader_error;
    for (uint64_t index = 0;; ++index) {
      pipeline.WaitForSlot();
      if (!answerer.error().ok()) break;
      if (context_->IsCancelled()) {
        const grpc::Status status(grpc::StatusCode::CANCELLED, "cancelled by the client");
        answerer.Fail(status);
        pipeline.Cancel(absl::CancelledError(status.error_message()));
        break;
      }
      if (config_.limits.max_frames_per_stream != 0 && index >= config_.limits.max_frames_per_stream) {
        reader_error = grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                                    absl::StrCat("the sources have more than max_frames_per_stream=",
                                                 config_.limits.max_frames_per_stream, " frames"));
        break;
      }
      auto frame = std::make_shared<AssembledFrame>();
      if (std::optional<AssembledFrame> spare = answerer.TakeSpare()) *frame = std::move(*spare);
      frame->index = index;
      frame->first_chunk = Clock::now();
      absl::StatusOr<bool> more = (*pair)->Next(&frame->reference, &frame->distorted);
      frame->last_chunk = Clock::now();
      if (!more.ok()) {
        reader_error = ToGrpc(more.status());
        break;
      }
      if (!*more) break;
      absl::Status submitted = pipeline.Submit(
          frame->reference, frame->distorted,
          [&answerer, frame](FramePipeline::Result result) { answerer.Answer(std::move(*frame), std::move(result)); });
      if (!submitted.ok()) {
        reader_error = ToGrpc(submitted);
        break;
      }
    }
    pipeline.Drain();
    if (grpc::Status error = answerer.error(); !error.ok()) return error;
    if (!reader_error.ok()) return reader_error;

    StreamTotalsInput totals;
    totals.counts = *counts_;
    totals.bytes_received = bytes_received->load();
    totals.wall_ns =
        static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
    totals.timing_sum = answerer.timing_sum();
    absl::StatusOr<v1::StreamSummary> summary =
        BuildStreamSummary(header_.job_id(), pipeline.scorer(), answerer.per_output(), totals);
    if (!summary.ok()) return ToGrpc(summary.status());
    response.Clear();
    *response.mutable_summary() = *std::move(summary);
    stream_->Write(response);
    return grpc::Status::OK;
  }

 private:
  const ServerConfig& config_;
  ServerMetrics* metrics_;
  const SessionResources& resources_;
  grpc::ServerContext* context_;
  Stream* stream_;
  const v1::StreamHeader& header_;
  FrameCounts* counts_;
};

// Routes one EncodedChunk to its side's upload.
absl::Status AcceptChunk(const v1::EncodedChunk& chunk, uint64_t max_chunk_bytes, EncodedSource* reference,
                         EncodedSource* distorted) {
  EncodedSource* side = chunk.picture() == v1::PICTURE_REFERENCE   ? reference
                        : chunk.picture() == v1::PICTURE_DISTORTED ? distorted
                                                                   : nullptr;
  if (side == nullptr) {
    return absl::InvalidArgumentError("encoded_chunk.picture: must be PICTURE_REFERENCE or PICTURE_DISTORTED");
  }
  return AppendUploadChunk(chunk, max_chunk_bytes, side);
}

}  // namespace

bool UsesDecodedSources(const v1::StreamHeader& header) {
  return IsDecoded(header.reference_source()) || IsDecoded(header.distorted_source());
}

grpc::Status RunDecodedStreamSession(const ServerConfig& config, ServerMetrics* metrics,
                                     const SessionResources& resources, grpc::ServerContext* context, Stream* stream,
                                     const v1::StreamHeader& header, FrameCounts* counts) {
  if (!IsDecoded(header.reference_source()) || !IsDecoded(header.distorted_source())) {
    return grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                        absl::StrCat("header.", IsDecoded(header.reference_source()) ? "distorted" : "reference",
                                     "_source: a raw side with a decoded side is not supported; send both sides as "
                                     "uploads or server paths (a Y4M file is an upload too)"));
  }
  if (absl::Status s = RequestedDecode(config.decode, header.decode(), "header.decode").status(); !s.ok()) {
    return ToGrpc(s);
  }
  EncodedSource reference, distorted;
  reference.name = "reference";
  reference.field = "header.reference_source";
  distorted.name = "distorted";
  distorted.field = "header.distorted_source";
  // Paths are checked (and opened) before anything else: a refusal ends the call now.
  for (auto [source, side] :
       {std::pair{&header.reference_source(), &reference}, std::pair{&header.distorted_source(), &distorted}}) {
    if (absl::Status s = OpenEncodedSource(config.decode, *source, side); !s.ok()) {
      if (s.code() == absl::StatusCode::kPermissionDenied || s.code() == absl::StatusCode::kNotFound) {
        spdlog::warn("job_id={} peer={} refused {}", header.job_id(), context->peer(), std::string(s.message()));
      }
      return ToGrpc(s);
    }
  }
  // Once every upload has arrived (at once for server paths), the server decodes and
  // scores while the client may send nothing: that time is the server's, not idleness.
  ServerTime server_time(stream->idle());
  const auto uploads_arrived = [&] {
    return (reference.spool == nullptr || reference.upload_ended) &&
           (distorted.spool == nullptr || distorted.upload_ended);
  };
  if (uploads_arrived()) server_time.Begin();
  std::atomic<uint64_t> bytes_received{0};
  std::atomic<bool> scoring_done{false};
  grpc::Status scoring_status;
  DecodedScoring scoring(config, metrics, resources, context, stream, header, counts);
  std::thread scorer_thread([&] {
    scoring_status = scoring.Run(&reference, &distorted, &bytes_received);
    // The decoders are done: later uploads go nowhere.
    scoring_done = true;
    for (EncodedSource* side : {&reference, &distorted}) EndUpload(side, absl::CancelledError("the stream ended"));
  });

  // This thread receives: uploads go to their spools as they arrive.
  grpc::Status reader_status;
  v1::ScoreRequest request;
  while (stream->Read(&request)) {
    // After an error, or once scoring ended, drain what the client still sends.
    if (!reader_status.ok() || scoring_done) continue;
    absl::Status s;
    if (request.has_encoded_chunk()) {
      s = AcceptChunk(request.encoded_chunk(), config.limits.max_chunk_bytes, &reference, &distorted);
      if (s.ok() && uploads_arrived()) server_time.Begin();
      bytes_received += request.encoded_chunk().data().size();
      metrics->bytes_received.At({}).Increment(static_cast<double>(request.encoded_chunk().data().size()));
    } else if (request.has_header()) {
      s = absl::InvalidArgumentError("header: only the first message may be a header");
    } else if (request.has_chunk()) {
      s = absl::InvalidArgumentError("chunk: raw pictures in a stream whose sources are decoded by the server");
    } else {
      s = absl::InvalidArgumentError("request: a message with no header or chunk");
    }
    if (!s.ok() && !scoring_done) {
      reader_status = ToGrpc(s);
      for (EncodedSource* side : {&reference, &distorted}) EndUpload(side, s);
    }
  }
  // A malformed message or the idle limit ended the reads: the stream ends with it.
  if (!stream->error().ok() && reader_status.ok()) {
    reader_status = stream->error();
    for (EncodedSource* side : {&reference, &distorted}) {
      EndUpload(side, absl::CancelledError(stream->error().error_message()));
    }
  }
  // Half-close (or cancellation): an upload without a `last` chunk ends here.
  for (EncodedSource* side : {&reference, &distorted}) {
    EndUpload(side, context->IsCancelled() ? absl::CancelledError("cancelled by the client") : absl::OkStatus());
  }
  scorer_thread.join();
  // A protocol error the reader saw explains the decoders' failure that followed it;
  // a malformed message ends the call even when scoring finished.
  if (!reader_status.ok() && (!scoring_status.ok() || !stream->error().ok())) return reader_status;
  return scoring_status;
}

}  // namespace exactq::server
