#include "client/ladder_client.h"

#include <grpcpp/grpcpp.h>

#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"

namespace exactq::client {

absl::StatusOr<LadderRun> ScoreLadder(LadderInput reference, std::vector<LadderInput> renditions,
                                      const LadderOptions& options,
                                      const std::function<void(uint32_t, const v1::FrameResult&)>& on_frame) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = Connect(options.score.connection);
  if (!channel.ok()) return channel.status();
  std::unique_ptr<v1::Scorer::Stub> stub = v1::Scorer::NewStub(*channel);
  grpc::ClientContext context;
  auto stream = stub->ScoreLadder(&context);

  v1::LadderRequest request;
  v1::LadderHeader* header = request.mutable_header();
  header->set_job_id(options.score.job_id);
  for (const v1::MetricRequest& m : options.score.metrics) *header->add_metrics() = m;
  header->set_backend(options.score.backend);
  header->set_scale(options.scale);
  header->set_decode_threads(options.decode_threads);
  header->set_decode(options.decode);
  if (options.score.range.has_value()) header->set_range(*options.score.range);
  if (options.score.matrix.has_value()) header->set_matrix(*options.score.matrix);
  SetSource(reference.input, header->mutable_reference_source());
  for (const LadderInput& r : renditions) SetSource(r.input, header->add_rendition_sources());

  LadderRun run;
  run.reference = reference.name;
  for (const LadderInput& r : renditions) {
    RenditionRun out;
    out.source = r.name;
    if (r.input.upload != nullptr) out.size_bytes = r.input.upload->size_bytes();
    run.renditions.push_back(std::move(out));
  }

  std::mutex error_mutex;
  absl::Status local_error;
  std::thread writer([&] {
    if (!stream->Write(request)) return;
    std::vector<PendingUpload> uploads;
    if (reference.input.upload != nullptr) uploads.push_back({reference.input.upload.get(), v1::PICTURE_REFERENCE});
    for (size_t i = 0; i < renditions.size(); ++i) {
      if (renditions[i].input.upload != nullptr) {
        uploads.push_back({renditions[i].input.upload.get(), v1::PICTURE_DISTORTED, static_cast<uint32_t>(i)});
      }
    }
    v1::LadderRequest chunk_request;
    absl::Status sent = SendUploadsInTurn(&uploads, [&](const PendingUpload& upload, std::string_view data, bool last) {
      v1::LadderChunk* chunk = chunk_request.mutable_chunk();
      chunk->set_rendition(upload.rendition);
      v1::EncodedChunk* bytes = chunk->mutable_chunk();
      bytes->set_picture(upload.picture);
      bytes->set_offset(upload.offset);
      bytes->set_data(data.data(), data.size());
      bytes->set_last(last);
      return stream->Write(chunk_request);  // false: the server ended the call
    });
    if (!sent.ok()) {
      std::lock_guard<std::mutex> lock(error_mutex);
      local_error = sent;
      context.TryCancel();
      return;
    }
    stream->WritesDone();
  });

  v1::LadderResponse response;
  absl::Status protocol_error;
  while (stream->Read(&response)) {
    switch (response.kind_case()) {
      case v1::LadderResponse::kAccepted:
        run.accepted = response.accepted();
        break;
      case v1::LadderResponse::kFrame: {
        const uint32_t i = response.frame().rendition();
        if (i >= run.renditions.size()) {
          protocol_error = absl::InternalError(absl::StrCat("the server answered for rendition ", i));
          break;
        }
        run.renditions[i].frames.push_back(response.frame().frame());
        if (on_frame) on_frame(i, run.renditions[i].frames.back());
        break;
      }
      case v1::LadderResponse::kRenditionEnd: {
        const uint32_t i = response.rendition_end().rendition();
        if (i < run.renditions.size()) run.renditions[i].end = response.rendition_end();
        break;
      }
      default:
        break;
    }
  }
  writer.join();
  const grpc::Status status = stream->Finish();
  {
    std::lock_guard<std::mutex> lock(error_mutex);
    if (!local_error.ok()) return local_error;
  }
  if (!status.ok()) return FromGrpc(status, options.score.connection.server);
  if (!protocol_error.ok()) return protocol_error;
  return run;
}

}  // namespace exactq::client
