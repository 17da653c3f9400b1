#include "server/ladder_session.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/decode/video_decoder.h"
#include "engine/ladder/ladder_sources.h"
#include "engine/runtime/device_memory_ledger.h"
#include "engine/runtime/frame_pipeline.h"
#include "engine/runtime/frame_scorer.h"
#include "engine/runtime/pinned_frame_memory.h"
#include "engine/scale/bicubic_scaler.h"
#include "server/client_text.h"
#include "server/encoded_source.h"
#include "server/frame_answerer.h"
#include "server/scorer_service.h"
#include "server/session_log.h"
#include "server/stream_summary.h"
#include "server/version.h"
#include "server/wire_conversion.h"
#include "spdlog/spdlog.h"

namespace exactq::server {
namespace {

// Pictures each source decodes (and scales) ahead of the pipelines.
constexpr int kDecodeAheadFrames = 2;

grpc::Status Invalid(const std::string& message) { return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, message); }

absl::StatusOr<ScaleMode> ParseScale(const std::string& scale) {
  if (scale.empty() || scale == "bicubic") return ScaleMode::kBicubic;
  if (scale == "none") return ScaleMode::kNone;
  return absl::InvalidArgumentError(
      absl::StrCat("header.scale: \"", ClientText(scale, 40), "\" is not a scale; use \"bicubic\" or \"none\""));
}

// What the header asks, checked before any file is opened.
absl::Status CheckHeader(const v1::LadderHeader& header, const ServerConfig& config) {
  if (!IsDecoded(header.reference_source())) {
    return absl::InvalidArgumentError(
        "header.reference_source: a ladder's sources are decoded by the server: an upload or a server path "
        "(a Y4M file is an upload too)");
  }
  if (header.rendition_sources().empty()) {
    return absl::InvalidArgumentError("header.rendition_sources: a ladder needs at least one rendition");
  }
  if (static_cast<uint32_t>(header.rendition_sources_size()) > config.limits.max_renditions) {
    return absl::ResourceExhaustedError(
        absl::StrCat("header.rendition_sources: ", header.rendition_sources_size(),
                     " renditions exceed the limit max_renditions=", config.limits.max_renditions));
  }
  for (int i = 0; i < header.rendition_sources_size(); ++i) {
    if (!IsDecoded(header.rendition_sources(i))) {
      return absl::InvalidArgumentError(
          absl::StrCat("header.rendition_sources[", i, "]: must be an upload or a server path"));
    }
  }
  if (absl::Status s = RequestedDecode(config.decode, header.decode(), "header.decode").status(); !s.ok()) {
    return s;
  }
  return ParseScale(header.scale()).status();
}

// One rendition's scoring: its pipeline, its answers and how it ended.
struct Rendition {
  EncodedSource source;
  std::unique_ptr<FramePipeline> pipeline;
  std::unique_ptr<FrameAnswerer> answerer;
  std::optional<StreamAdmission::Ticket> cpu_slot;
  FrameCounts counts;
  grpc::Status ended;  // set when it ended before the reference (not OK)
  bool live = true;    // still given frames
};

class LadderScoring {
 public:
  LadderScoring(const ServerConfig& config, ServerMetrics* metrics, const SessionResources& resources,
                grpc::ServerContext* context, LadderRequestStream* stream, const v1::LadderHeader& header)
      : config_(config),
        metrics_(metrics),
        resources_(resources),
        context_(context),
        stream_(stream),
        header_(header) {}

  // Runs until the reference ends or fails; returns the call's status.
  grpc::Status Run(EncodedSource* reference, std::vector<Rendition>* renditions,
                   const std::atomic<uint64_t>* bytes_received) {
    const auto start = Clock::now();
    const size_t n = renditions->size();
    const ScaleMode scale = *ParseScale(header_.scale());

    DecoderOptions options;
    const uint32_t wanted_threads =
        header_.decode_threads() != 0 ? header_.decode_threads() : config_.decode.decode_threads;
    const uint32_t per_source =
        std::clamp<uint32_t>(wanted_threads, 1, std::max<uint32_t>(1, config_.decode.max_decode_threads));
    std::vector<DecodeThreadBudget::Grant> threads;  // one per source, kept while the decoders run
    options.max_width = static_cast<int>(std::min<uint32_t>(config_.limits.max_width, kMaxFrameDimension));
    options.max_height = static_cast<int>(std::min<uint32_t>(config_.limits.max_height, kMaxFrameDimension));
    const DecodeRequest decode = *RequestedDecode(config_.decode, header_.decode(), "header.decode");
    ApplyDecodeRequest(decode, &options);
    absl::StatusOr<std::unique_ptr<VideoDecoder>> reference_decoder =
        OpenDecoderWithThreads(std::move(reference->bytes), options, per_source, resources_.decode_threads, &threads);
    if (!reference_decoder.ok()) return ToGrpc(reference_decoder.status());
    std::vector<std::unique_ptr<VideoDecoder>> rendition_decoders;
    uint64_t largest_picture = 0;
    for (Rendition& r : *renditions) {
      absl::StatusOr<std::unique_ptr<VideoDecoder>> decoder =
          OpenDecoderWithThreads(std::move(r.source.bytes), options, per_source, resources_.decode_threads, &threads);
      if (!decoder.ok()) return ToGrpc(decoder.status());
      largest_picture = std::max<uint64_t>(largest_picture, (*decoder)->info().geometry.frame_bytes());
      rendition_decoders.push_back(*std::move(decoder));
    }
    const DecodedStreamInfo ref_info = (*reference_decoder)->info();
    options.threads = ref_info.threads;
    for (const auto& d : rendition_decoders) options.threads = std::max(options.threads, d->info().threads);

    // Every rendition is scored at the reference's geometry, as a stream of the
    // reference and that rendition would be.
    v1::StreamHeader scoring_header;
    scoring_header.set_job_id(header_.job_id());
    *scoring_header.mutable_metrics() = header_.metrics();
    scoring_header.set_backend(header_.backend());
    v1::PixelFormat requested;
    requested.set_range(header_.range());
    requested.set_matrix(header_.matrix());
    *scoring_header.mutable_geometry() = DecodedGeometry(ref_info, requested);
    absl::StatusOr<ScoringRequest> wanted = FromWire(scoring_header, config_.limits);
    if (!wanted.ok()) return ToGrpc(wanted.status());
    const FrameGeometry geometry = wanted->geometry;

    // Held per source: frames in flight (and one a sequence metric keeps), pictures
    // decoded ahead, and the decoder's own pictures (about threads + a few).
    const int frames_in_flight =
        static_cast<int>(std::max<uint32_t>(1, config_.limits.max_frames_in_flight_per_stream));
    const uint64_t held_per_source =
        static_cast<uint64_t>(frames_in_flight + 1 + kDecodeAheadFrames + options.threads + 4);
    const uint64_t picture_bytes = std::max<uint64_t>(largest_picture, geometry.frame_bytes());
    absl::StatusOr<MemoryBudget::Reservation> reservation =
        resources_.memory_budget->Reserve((n + 1) * held_per_source * picture_bytes);
    if (!reservation.ok()) return ToGrpc(reservation.status());

    std::vector<std::string> metric_names;
    for (const MetricSpec& m : wanted->metrics) metric_names.push_back(m.name);
    bool any_gpu = false;
    std::vector<int> scorer_gpus(n, -1);
    for (size_t i = 0; i < n; ++i) {
      Rendition& r = (*renditions)[i];
      absl::StatusOr<std::unique_ptr<FrameScorer>> scorer =
          CreateAdmittedScorer(*wanted, resources_.cpu_streams, context_, &r.cpu_slot);
      if (!scorer.ok()) return ToGrpc(scorer.status());
      any_gpu = any_gpu || (*scorer)->placement() != FrameScorer::kCpuDevice;
      scorer_gpus[i] = (*scorer)->gpu();
      const size_t output_count = (*scorer)->output_names().size();
      r.pipeline = std::make_unique<FramePipeline>(std::move(*scorer), FramePipeline::Options{frames_in_flight});
      const uint32_t index = static_cast<uint32_t>(i);
      r.answerer = std::make_unique<FrameAnswerer>(
          metrics_,
          [this, index](v1::FrameResult&& frame) {
            v1::LadderResponse response;
            response.mutable_frame()->set_rendition(index);
            *response.mutable_frame()->mutable_frame() = std::move(frame);
            return Write(response);
          },
          header_.job_id(), metric_names, output_count, geometry.frame_bytes(), &r.counts);
    }

    LadderSources::Options ladder_options;
    ladder_options.queue_frames = kDecodeAheadFrames;
    ladder_options.scale = scale;
    // Pictures decoded on the GPU every scorer uses stay there: the reference when all
    // renditions score on it (else, when they all score on one GPU, it is uploaded there
    // once for all of them), a rendition when its own scorer does (a scaled one is scaled
    // there too). Other host pictures bound for a GPU are page-locked.
    bool host_pictures_to_gpu = false;
    const bool one_gpu = scorer_gpus[0] >= 0 && std::all_of(scorer_gpus.begin(), scorer_gpus.end(),
                                                            [&](int g) { return g == scorer_gpus[0]; });
    if (one_gpu && !KeepPicturesOnScorerGpu(scorer_gpus[0], options, reference_decoder->get())) {
      ladder_options.reference_gpu = scorer_gpus[0];
      host_pictures_to_gpu = true;  // the reference's host pictures are uploaded
    } else if (!one_gpu) {
      host_pictures_to_gpu = any_gpu;
    }
    for (size_t i = 0; i < n; ++i) {
      const bool on_device = KeepPicturesOnScorerGpu(scorer_gpus[i], options, rendition_decoders[i].get());
      host_pictures_to_gpu = host_pictures_to_gpu || (scorer_gpus[i] >= 0 && !on_device);
    }
    // What the GPU decoders hold on their device, admitted beside the scorers; released
    // after the decoders close (declared before the sources that own them). The
    // reference's pictures stay while every rendition's frame is scored against them.
    std::vector<DeviceMemoryReservation> decoder_device_memory;
    const int pictures_held = frames_in_flight + 1 + kDecodeAheadFrames;
    for (size_t i = 0; i <= n; ++i) {
      const VideoDecoder& decoder = i == 0 ? **reference_decoder : *rendition_decoders[i - 1];
      absl::StatusOr<DeviceMemoryReservation> device_memory = ReserveDecoderDeviceMemory(
          decoder, options, pictures_held, i == 0 ? std::string("the reference") : absl::StrCat("rendition ", i - 1));
      if (!device_memory.ok()) return ToGrpc(device_memory.status());
      decoder_device_memory.push_back(*std::move(device_memory));
    }
    ladder_options.frame_memory = host_pictures_to_gpu ? PinnedFrameMemory() : std::pmr::get_default_resource();
    // A resized rendition's scaler gets as many threads as its decoder: with the GPU
    // decoding, scaling is most of a rendition's CPU work.
    ladder_options.scale_threads = options.threads;
    absl::StatusOr<std::unique_ptr<LadderSources>> ladder =
        LadderSources::Start(*std::move(reference_decoder), std::move(rendition_decoders), ladder_options);
    if (!ladder.ok()) return ToGrpc(ladder.status());

    v1::LadderResponse response;
    v1::LadderAccepted* accepted = response.mutable_accepted();
    accepted->set_job_id(header_.job_id());
    ToWire((*renditions)[0].pipeline->scorer(), kServerVersion, accepted->mutable_provenance());
    *accepted->mutable_geometry() = scoring_header.geometry();
    accepted->set_reference_decoder(absl::StrCat(ref_info.container, "/", ref_info.codec));
    ToWire(ref_info, decode, accepted->mutable_reference_decode());
    accepted->set_max_frames_in_flight(static_cast<uint32_t>(frames_in_flight));
    accepted->set_max_chunk_bytes(config_.limits.max_chunk_bytes);
    std::vector<std::string> described;
    for (size_t i = 0; i < n; ++i) {
      const DecodedStreamInfo& info = (*ladder)->rendition_info(i);
      v1::RenditionAccepted* out = accepted->add_renditions();
      out->set_rendition(static_cast<uint32_t>(i));
      *out->mutable_geometry() = DecodedGeometry(info, requested);
      out->set_decoder(absl::StrCat(info.container, "/", info.codec));
      ToWire(info, decode, out->mutable_decode());
      out->set_scaled((*ladder)->scaled(i));
      if ((*ladder)->scaled(i)) accepted->mutable_provenance()->set_scaler_version(scale::kScaleDefinitionVersion);
      described.push_back(absl::StrCat("\"", (*renditions)[i].source.label, "\" (", info.geometry.width, "x",
                                       info.geometry.height, (*ladder)->scaled(i) ? " scaled" : "", ")"));
    }
    spdlog::info(
        "ladder start job_id={} peer={} geometry={} metrics={} backend={} reference=\"{}\" ({}/{}) "
        "renditions={} [{}] frames_in_flight={} decode_threads={}",
        ClientText(header_.job_id()), context_->peer(), GeometryDescription(geometry), absl::StrJoin(metric_names, ","),
        v1::Backend_Name(header_.backend()), reference->label, ref_info.container, ref_info.codec, n,
        absl::StrJoin(described, ", "), frames_in_flight, options.threads);
    if (!Write(response)) return grpc::Status(grpc::StatusCode::CANCELLED, "client went away");

    grpc::Status call_error;
    std::vector<Frame> pictures(n);
    std::vector<bool> present(n);
    bool reference_ended = false;
    for (uint64_t index = 0;; ++index) {
      for (Rendition& r : *renditions) {
        if (!r.live) continue;
        r.pipeline->WaitForSlot();
        if (grpc::Status e = r.answerer->error(); !e.ok()) End(&r, e);
      }
      if (context_->IsCancelled()) {
        call_error = stream_->cancellation();
        break;
      }
      if (std::none_of(renditions->begin(), renditions->end(), [](const Rendition& r) { return r.live; })) break;
      if (config_.limits.max_frames_per_stream != 0 && index >= config_.limits.max_frames_per_stream) {
        call_error = grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                                  absl::StrCat("the sources have more than max_frames_per_stream=",
                                               config_.limits.max_frames_per_stream, " frames"));
        break;
      }
      // One reference picture, shared by every rendition's frame until the last is answered.
      auto reference_picture = std::make_shared<Frame>();
      const Clock::time_point asked = Clock::now();
      absl::StatusOr<bool> more = (*ladder)->Next(reference_picture.get(), &pictures, &present);
      const Clock::time_point got = Clock::now();
      if (!more.ok()) {
        call_error = ToGrpc(more.status());
        break;
      }
      if (!*more) {
        reference_ended = true;
        break;
      }
      for (size_t i = 0; i < n; ++i) {
        Rendition& r = (*renditions)[i];
        if (!r.live) continue;
        if (!present[i]) {
          r.live = false;  // its end comes from Finish
          continue;
        }
        auto frame = std::make_shared<AssembledFrame>();
        if (std::optional<AssembledFrame> spare = r.answerer->TakeSpare()) *frame = std::move(*spare);
        std::swap(frame->distorted, pictures[i]);  // pictures[i] gets the spare buffer back
        frame->index = index;
        frame->first_chunk = asked;
        frame->last_chunk = got;
        FrameAnswerer* answerer = r.answerer.get();
        absl::Status submitted = r.pipeline->Submit(*reference_picture, frame->distorted,
                                                    [answerer, frame, reference_picture](FramePipeline::Result result) {
                                                      answerer->Answer(std::move(*frame), std::move(result));
                                                    });
        if (!submitted.ok()) End(&r, ToGrpc(submitted));
      }
    }
    if (!call_error.ok()) {
      for (Rendition& r : *renditions) r.pipeline->Cancel(absl::CancelledError(call_error.error_message()));
    }
    for (Rendition& r : *renditions) r.pipeline->Drain();
    if (!call_error.ok()) return call_error;

    std::vector<absl::Status> ends(n);
    if (reference_ended) ends = (*ladder)->Finish();
    StreamTotalsInput totals;
    totals.bytes_received = bytes_received->load();
    totals.wall_ns =
        static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
    for (size_t i = 0; i < n; ++i) {
      Rendition& r = (*renditions)[i];
      counts_.frames += r.counts.frames;
      counts_.cpu += r.counts.cpu;
      counts_.cuda += r.counts.cuda;
      grpc::Status status = r.answerer->error();
      if (status.ok()) status = r.ended;
      if (status.ok()) status = ToGrpc(ends[i]);
      response.Clear();
      v1::RenditionEnd* end = response.mutable_rendition_end();
      end->set_rendition(static_cast<uint32_t>(i));
      end->set_code(static_cast<int32_t>(status.error_code()));
      end->set_message(status.error_message());
      if (status.ok()) {
        totals.counts = r.counts;
        totals.timing_sum = r.answerer->timing_sum();
        absl::StatusOr<v1::StreamSummary> summary =
            BuildStreamSummary(header_.job_id(), r.pipeline->scorer(), r.answerer->per_output(), totals);
        if (!summary.ok()) return ToGrpc(summary.status());
        *end->mutable_summary() = *std::move(summary);
      } else {
        spdlog::warn("ladder job_id={} rendition {} (\"{}\") ended after {} frames: code={} error=\"{}\"",
                     ClientText(header_.job_id()), i, r.source.label, r.counts.frames,
                     static_cast<int>(status.error_code()), ClientText(status.error_message()));
      }
      if (!Write(response)) return grpc::Status(grpc::StatusCode::CANCELLED, "client went away");
    }
    return grpc::Status::OK;
  }

  // Frames answered over every rendition.
  const FrameCounts& counts() const { return counts_; }

 private:
  bool Write(const v1::LadderResponse& response) {
    std::lock_guard<std::mutex> lock(write_mutex_);
    return WatchedWrite(stream_->idle(), [&] { return stream_->Write(response); });
  }

  // Ends a rendition before the reference: it gets no more frames.
  static void End(Rendition* r, const grpc::Status& status) {
    if (r->ended.ok()) r->ended = status;
    r->live = false;
  }

  const ServerConfig& config_;
  ServerMetrics* metrics_;
  const SessionResources& resources_;
  grpc::ServerContext* context_;
  LadderRequestStream* stream_;
  const v1::LadderHeader& header_;
  std::mutex write_mutex_;  // the renditions' pipelines answer on their own threads
  FrameCounts counts_;
};

}  // namespace

grpc::Status RunLadderSession(const ServerConfig& config, ServerMetrics* metrics, const SessionResources& resources,
                              grpc::ServerContext* context, LadderRequestStream* stream) {
  SessionLog log(metrics, context->peer(), "ladder");
  v1::LadderRequest request;
  if (!stream->Read(&request)) {
    if (!stream->error().ok()) return log.Finish(stream->error());
    return log.Finish(Invalid("header: the call ended before its header"));
  }
  if (!request.has_header()) return log.Finish(Invalid("header: the first message of a ladder must be a LadderHeader"));
  const v1::LadderHeader header = request.header();  // a copy: `request` is reused below
  log.job_id_ = ClientText(header.job_id());
  if (absl::Status s = CheckHeader(header, config); !s.ok()) return log.Finish(ToGrpc(s));

  EncodedSource reference;
  reference.name = "reference";
  reference.field = "header.reference_source";
  std::vector<Rendition> renditions(header.rendition_sources_size());
  // Paths are checked (and opened) before anything else: a refusal ends the call now.
  for (int i = -1; i < header.rendition_sources_size(); ++i) {
    EncodedSource* source = i < 0 ? &reference : &renditions[i].source;
    if (i >= 0) {
      source->name = absl::StrCat("rendition ", i);
      source->field = absl::StrCat("header.rendition_sources[", i, "]");
    }
    const v1::Source& wire = i < 0 ? header.reference_source() : header.rendition_sources(i);
    if (absl::Status s = OpenEncodedSource(config.decode, wire, source); !s.ok()) {
      if (s.code() == absl::StatusCode::kPermissionDenied || s.code() == absl::StatusCode::kNotFound) {
        spdlog::warn("job_id={} peer={} refused {}", log.job_id_, context->peer(), std::string(s.message()));
      }
      return log.Finish(ToGrpc(s));
    }
  }
  auto for_each_source = [&](auto&& f) {
    f(&reference);
    for (Rendition& r : renditions) f(&r.source);
  };

  // Once every upload has arrived (at once for server paths), the server decodes and
  // scores while the client may send nothing: that time is the server's, not idleness.
  ServerTime server_time(stream->idle());
  const auto uploads_arrived = [&] {
    bool arrived = true;
    for_each_source([&arrived](EncodedSource* s) { arrived = arrived && (s->spool == nullptr || s->upload_ended); });
    return arrived;
  };
  if (uploads_arrived()) server_time.Begin();
  std::atomic<uint64_t> bytes_received{0};
  std::atomic<bool> scoring_done{false};
  grpc::Status scoring_status;
  LadderScoring scoring(config, metrics, resources, context, stream, header);
  std::thread scorer_thread([&] {
    scoring_status = scoring.Run(&reference, &renditions, &bytes_received);
    // The decoders are done: later uploads go nowhere.
    scoring_done = true;
    for_each_source([](EncodedSource* s) { EndUpload(s, absl::CancelledError("the ladder ended")); });
  });

  // This thread receives: uploads go to their spools as they arrive.
  grpc::Status reader_status;
  while (stream->Read(&request)) {
    // After an error, or once scoring ended, drain what the client still sends.
    if (!reader_status.ok() || scoring_done) continue;
    absl::Status s;
    if (request.has_chunk()) {
      const v1::LadderChunk& chunk = request.chunk();
      bytes_received += chunk.chunk().data().size();
      metrics->bytes_received.At({}).Increment(static_cast<double>(chunk.chunk().data().size()));
      if (chunk.chunk().picture() == v1::PICTURE_REFERENCE) {
        s = AppendUploadChunk(chunk.chunk(), config.limits.max_chunk_bytes, &reference);
      } else if (chunk.chunk().picture() != v1::PICTURE_DISTORTED) {
        s = absl::InvalidArgumentError("chunk.chunk.picture: must be PICTURE_REFERENCE or PICTURE_DISTORTED");
      } else if (chunk.rendition() >= renditions.size()) {
        s = absl::InvalidArgumentError(absl::StrCat("chunk.rendition: ", chunk.rendition(), " is not a rendition (",
                                                    renditions.size(), " in the header)"));
      } else {
        s = AppendUploadChunk(chunk.chunk(), config.limits.max_chunk_bytes, &renditions[chunk.rendition()].source);
      }
      if (s.ok() && uploads_arrived()) server_time.Begin();
    } else if (request.has_header()) {
      s = absl::InvalidArgumentError("header: only the first message may be a header");
    } else {
      s = absl::InvalidArgumentError("request: a message with no header or chunk");
    }
    if (!s.ok() && !scoring_done) {
      reader_status = ToGrpc(s);
      for_each_source([&s](EncodedSource* source) { EndUpload(source, s); });
    }
  }
  // A malformed message or the idle limit ended the reads: the call ends with it.
  if (!stream->error().ok() && reader_status.ok()) {
    reader_status = stream->error();
    const absl::Status cancelled = absl::CancelledError(stream->error().error_message());
    for_each_source([&cancelled](EncodedSource* s) { EndUpload(s, cancelled); });
  }
  // Half-close (or cancellation): an upload without a `last` chunk ends here.
  const absl::Status end = context->IsCancelled() ? absl::CancelledError("cancelled by the client") : absl::OkStatus();
  for_each_source([&end](EncodedSource* s) { EndUpload(s, end); });
  scorer_thread.join();
  log.frames_ = scoring.counts().frames;
  log.frames_cpu_ = scoring.counts().cpu;
  log.frames_cuda_ = scoring.counts().cuda;
  // A protocol error the reader saw explains the decoders' failure that followed it;
  // a malformed message ends the call even when scoring finished.
  if (!reader_status.ok() && (!scoring_status.ok() || !stream->error().ok())) return log.Finish(reader_status);
  return log.Finish(scoring_status);
}

}  // namespace exactq::server
