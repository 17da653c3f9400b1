#include "client/decoded_score_client.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"

namespace exactq::client {

void SetSource(const DecodedInput& input, v1::Source* source) {
  if (input.upload != nullptr) {
    v1::EncodedUpload* upload = source->mutable_upload();
    upload->set_name(input.upload->name());
    if (input.upload->size_bytes() >= 0) upload->set_size_bytes(static_cast<uint64_t>(input.upload->size_bytes()));
  } else {
    source->mutable_server_path()->set_path(input.server_path);
  }
}

absl::Status SendUploadsInTurn(
    std::vector<PendingUpload>* uploads,
    const std::function<bool(const PendingUpload& upload, std::string_view data, bool last)>& send) {
  std::string buffer(kUploadChunkBytes, '\0');
  bool any_left = !uploads->empty();
  while (any_left) {
    any_left = false;
    for (PendingUpload& upload : *uploads) {
      if (upload.done) continue;
      const size_t n = std::fread(buffer.data(), 1, buffer.size(), upload.input->stream());
      if (n < buffer.size() && std::ferror(upload.input->stream())) {
        return absl::InvalidArgumentError(absl::StrCat(upload.input->name(), ": read failed: ", std::strerror(errno)));
      }
      const bool last = n < buffer.size();  // a short read: the end of the input
      if (!send(upload, std::string_view(buffer.data(), n), last)) return absl::OkStatus();
      upload.offset += n;
      upload.done = last;
      any_left = any_left || !last;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ScoringRun> ScoreDecodedInputs(DecodedInput reference, DecodedInput distorted,
                                              const ScoreOptions& options, uint32_t decode_threads,
                                              const std::string& decode,
                                              const std::function<void(const v1::FrameResult&)>& on_frame) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = Connect(options.connection);
  if (!channel.ok()) return channel.status();
  std::unique_ptr<v1::Scorer::Stub> stub = v1::Scorer::NewStub(*channel);
  grpc::ClientContext context;
  auto stream = stub->ScoreStream(&context);

  v1::ScoreRequest request;
  v1::StreamHeader* header = request.mutable_header();
  header->set_job_id(options.job_id);
  // Geometry comes from the bitstream; the user's colour overrides win over its tags.
  if (options.range.has_value()) header->mutable_geometry()->mutable_format()->set_range(*options.range);
  if (options.matrix.has_value()) header->mutable_geometry()->mutable_format()->set_matrix(*options.matrix);
  for (const v1::MetricRequest& m : options.metrics) *header->add_metrics() = m;
  header->set_backend(options.backend);
  header->set_decode_threads(decode_threads);
  header->set_decode(decode);
  SetSource(reference, header->mutable_reference_source());
  SetSource(distorted, header->mutable_distorted_source());

  std::mutex error_mutex;
  absl::Status local_error;
  std::thread writer([&] {
    if (!stream->Write(request)) return;
    std::vector<PendingUpload> uploads;
    if (reference.upload != nullptr) uploads.push_back({reference.upload.get(), v1::PICTURE_REFERENCE});
    if (distorted.upload != nullptr) uploads.push_back({distorted.upload.get(), v1::PICTURE_DISTORTED});
    v1::ScoreRequest chunk_request;
    absl::Status sent = SendUploadsInTurn(&uploads, [&](const PendingUpload& upload, std::string_view data, bool last) {
      v1::EncodedChunk* chunk = chunk_request.mutable_encoded_chunk();
      chunk->set_picture(upload.picture);
      chunk->set_offset(upload.offset);
      chunk->set_data(data.data(), data.size());
      chunk->set_last(last);
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

  ScoringRun run;
  v1::ScoreResponse response;
  while (stream->Read(&response)) {
    switch (response.kind_case()) {
      case v1::ScoreResponse::kAccepted:
        run.accepted = response.accepted();
        if (options.on_accepted) options.on_accepted(run.accepted);
        break;
      case v1::ScoreResponse::kFrame:
        run.frames.push_back(response.frame());
        if (on_frame) on_frame(run.frames.back());
        break;
      case v1::ScoreResponse::kSummary:
        run.summary = response.summary();
        break;
      default:
        break;
    }
  }
  // A server that ends the call early (a refused path, a corrupt file) fails the
  // writer's next Write, so it stops on its own.
  writer.join();
  const grpc::Status status = stream->Finish();
  {
    std::lock_guard<std::mutex> lock(error_mutex);
    if (!local_error.ok()) return local_error;
  }
  if (!status.ok()) return FromGrpc(status, options.connection.server);
  return run;
}

}  // namespace exactq::client
