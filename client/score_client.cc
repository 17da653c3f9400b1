#include "client/score_client.h"

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/support/proto_buffer_writer.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "client/chunk_message.h"
#include "engine/format/frame_geometry.h"
#include "proto/layout_wire.h"

namespace exactq::client {

namespace {

absl::StatusOr<std::string> ReadPem(const std::string& path, const char* flag) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) return absl::InvalidArgumentError(absl::StrCat(flag, ": cannot read ", path));
  if (text.str().empty()) return absl::InvalidArgumentError(absl::StrCat(flag, ": ", path, " is empty"));
  return text.str();
}

}  // namespace

// A call's final status. Reaching the server was checked when connecting, so every
// status here is the server's answer (UNAVAILABLE included: a draining server, a GPU
// that failed under a forced backend).
absl::Status FromGrpc(const grpc::Status& status, const std::string& server) {
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      absl::StrCat("server ", server, ": ", status.error_message()));
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> Connect(const ConnectionOptions& options) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  // Keep long streams alive through idle middleboxes; the server permits 10 s pings.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 30000);
  // dns:/// targets of a headless Service resolve to every replica: spread calls over them.
  args.SetLoadBalancingPolicyName("round_robin");
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (!options.tls_ca_file.empty() || !options.tls_cert_file.empty()) {
    grpc::SslCredentialsOptions ssl;
    if (!options.tls_ca_file.empty()) {
      absl::StatusOr<std::string> roots = ReadPem(options.tls_ca_file, "--tls_ca_file");
      if (!roots.ok()) return roots.status();
      ssl.pem_root_certs = *roots;
    }
    if (!options.tls_cert_file.empty() || !options.tls_key_file.empty()) {
      absl::StatusOr<std::string> cert = ReadPem(options.tls_cert_file, "--tls_cert_file");
      if (!cert.ok()) return cert.status();
      absl::StatusOr<std::string> key = ReadPem(options.tls_key_file, "--tls_key_file");
      if (!key.ok()) return key.status();
      ssl.pem_cert_chain = *cert;
      ssl.pem_private_key = *key;
    }
    credentials = grpc::SslCredentials(ssl);
    if (!options.tls_server_name.empty()) {
      args.SetSslTargetNameOverride(options.tls_server_name);
    }
  }
  std::shared_ptr<grpc::Channel> channel = grpc::CreateCustomChannel(options.server, credentials, args);
  if (!channel->WaitForConnected(std::chrono::system_clock::now() +
                                 std::chrono::seconds(options.connect_timeout_seconds))) {
    return absl::UnavailableError(absl::StrCat("cannot reach the server at ", options.server, " within ",
                                               options.connect_timeout_seconds, " s",
                                               options.tls_ca_file.empty() ? "" : " (check the TLS settings too)"));
  }
  return channel;
}

v1::Geometry GeometryToWire(const FrameGeometry& geometry) {
  v1::Geometry g;
  g.set_width(geometry.width);
  g.set_height(geometry.height);
  g.mutable_format()->set_chroma(LayoutToWire(geometry.format.layout));
  g.mutable_format()->set_bit_depth(geometry.format.bit_depth);
  return g;
}

uint64_t SelectedFrames(uint64_t total, const ScoreOptions& options) {
  const uint64_t end = options.end_frame.has_value() ? std::min(total, *options.end_frame) : total;
  if (end <= options.first_frame) return 0;
  const uint64_t step = std::max<uint32_t>(options.subsample, 1);
  return (end - options.first_frame + step - 1) / step;
}

absl::StatusOr<ScoringRun> ScoreFiles(PictureSource& reference, PictureSource& distorted, const ScoreOptions& options,
                                      const std::function<void(const v1::FrameResult&)>& on_frame) {
  const FrameGeometry& geometry = reference.geometry();
  if (!(geometry == distorted.geometry())) {
    return absl::InvalidArgumentError(absl::StrCat("the files differ in geometry: reference ",
                                                   GeometryDescription(geometry), ", distorted ",
                                                   GeometryDescription(distorted.geometry())));
  }
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = Connect(options.connection);
  if (!channel.ok()) return channel.status();
  // Two pairs of pictures, used in turn by the writer: gRPC may still hold one pair's
  // bytes (until the kernel has them) while the next is read. They outlive the call; if
  // gRPC were to hold a slice past it, they are left allocated rather than freed under it.
  struct PicturePair {
    Frame ref, dist;
    PictureRefs refs;
  };
  auto pairs = std::make_unique<PicturePair[]>(2);
  struct KeepWhileReferenced {
    std::unique_ptr<PicturePair[]>* pairs;
    ~KeepWhileReferenced() {
      for (int i = 0; i < 2; ++i) {
        if (!(*pairs)[i].refs.WaitUntilUnusedFor(std::chrono::seconds(10))) {
          (void)pairs->release();
          return;
        }
      }
    }
  } keep_while_referenced{&pairs};
  grpc::ClientContext context;
  // Requests go as raw messages (pictures referenced, not copied: chunk_message.h),
  // answers come back typed.
  const grpc::internal::RpcMethod method("/exactq.v1.Scorer/ScoreStream", grpc::internal::RpcMethod::BIDI_STREAMING);
  std::unique_ptr<grpc::ClientReaderWriter<grpc::ByteBuffer, v1::ScoreResponse>> stream(
      grpc::internal::ClientReaderWriterFactory<grpc::ByteBuffer, v1::ScoreResponse>::Create(channel->get(), method,
                                                                                             &context));

  v1::ScoreRequest request;
  v1::StreamHeader* header = request.mutable_header();
  header->set_job_id(options.job_id);
  *header->mutable_geometry() = GeometryToWire(geometry);
  v1::PixelFormat* format = header->mutable_geometry()->mutable_format();
  if (options.range.has_value()) {
    format->set_range(*options.range);
  } else if (reference.color_range().has_value()) {
    format->set_range(*reference.color_range() == ColorRange::kFull ? v1::COLOR_RANGE_FULL : v1::COLOR_RANGE_LIMITED);
  }
  if (options.matrix.has_value()) format->set_matrix(*options.matrix);
  for (const v1::MetricRequest& m : options.metrics) *header->add_metrics() = m;
  header->set_backend(options.backend);
  if (std::optional<int64_t> n = reference.frame_count(); n.has_value()) {
    header->set_expected_frames(SelectedFrames(static_cast<uint64_t>(*n), options));
  }
  const uint64_t step = std::max<uint32_t>(options.subsample, 1);

  // The writer thread's own error (a file problem), reported in preference to the
  // CANCELLED status the server then returns.
  std::mutex error_mutex;
  absl::Status local_error;
  // The writer sends frames only once the server has accepted the header, so that it
  // can honour the server's chunk limit.
  std::mutex accepted_mutex;
  std::condition_variable accepted_cv;
  std::optional<uint64_t> server_chunk_limit;  // 0: the call ended before acceptance
  std::thread writer([&] {
    grpc::ByteBuffer header_message;
    bool own_buffer = false;
    if (!grpc::GenericSerialize<grpc::ProtoBufferWriter, v1::ScoreRequest>(request, &header_message, &own_buffer)
             .ok() ||
        !stream->Write(header_message)) {
      return;
    }
    uint64_t chunk_bytes = options.chunk_bytes;
    {
      std::unique_lock<std::mutex> lock(accepted_mutex);
      accepted_cv.wait(lock, [&] { return server_chunk_limit.has_value(); });
      if (*server_chunk_limit == 0) return;
      chunk_bytes = std::min(chunk_bytes, *server_chunk_limit);
    }
    uint64_t index = 0;  // frames sent, numbered from 0 on the wire
    for (uint64_t file_index = 0;; ++file_index) {
      if (options.end_frame.has_value() && file_index >= *options.end_frame) break;
      PicturePair& pair = pairs[file_index % 2];
      pair.refs.WaitUntilUnused();
      Frame& ref_frame = pair.ref;
      Frame& dist_frame = pair.dist;
      absl::StatusOr<bool> more_ref = reference.Next(&ref_frame);
      absl::StatusOr<bool> more_dist = more_ref.ok() ? distorted.Next(&dist_frame) : absl::StatusOr<bool>(false);
      absl::Status error = !more_ref.ok() ? more_ref.status() : more_dist.status();
      if (error.ok() && *more_ref != *more_dist) {
        error = absl::InvalidArgumentError(
            absl::StrCat("the ", *more_ref ? "distorted" : "reference", " file ended at frame ", file_index,
                         " but the ", *more_ref ? "reference" : "distorted", " file has more frames"));
      }
      if (!error.ok()) {
        {
          std::lock_guard<std::mutex> lock(error_mutex);
          local_error = error;
        }
        // Only whole frames were sent: half-close, so that the server answers every
        // one of them (the caller keeps what was scored) before the call ends.
        stream->WritesDone();
        return;
      }
      if (!*more_ref) break;
      if (file_index < options.first_frame || (file_index - options.first_frame) % step != 0) continue;
      for (const auto& [frame, picture] :
           {std::pair{&ref_frame, v1::PICTURE_REFERENCE}, std::pair{&dist_frame, v1::PICTURE_DISTORTED}}) {
        const uint64_t size = frame->size_bytes();
        for (uint64_t offset = 0; offset < size; offset += chunk_bytes) {
          const uint64_t n = std::min<uint64_t>(chunk_bytes, size - offset);
          const grpc::ByteBuffer message =
              ChunkMessage({index, picture, offset, offset + n == size}, frame->bytes() + offset, n, &pair.refs);
          if (!stream->Write(message)) return;  // the server ended the call
        }
      }
      ++index;
    }
    stream->WritesDone();
  });

  ScoringRun run;
  v1::ScoreResponse response;
  while (stream->Read(&response)) {
    switch (response.kind_case()) {
      case v1::ScoreResponse::kAccepted: {
        run.accepted = response.accepted();
        if (options.on_accepted) options.on_accepted(run.accepted);
        std::lock_guard<std::mutex> lock(accepted_mutex);
        server_chunk_limit = run.accepted.max_chunk_bytes() > 0 ? run.accepted.max_chunk_bytes() : options.chunk_bytes;
        accepted_cv.notify_all();
        break;
      }
      case v1::ScoreResponse::kFrame:
        run.frames.push_back(response.frame());
        // The files' frame number: the wire numbers the frames sent from 0.
        run.frames.back().set_frame_index(options.first_frame + run.frames.back().frame_index() * step);
        if (on_frame) on_frame(run.frames.back());
        break;
      case v1::ScoreResponse::kSummary:
        run.summary = response.summary();
        break;
      default:
        break;
    }
  }
  {
    std::lock_guard<std::mutex> lock(accepted_mutex);
    if (!server_chunk_limit.has_value()) server_chunk_limit = 0;  // refused: release the writer
    accepted_cv.notify_all();
  }
  writer.join();
  const grpc::Status status = stream->Finish();
  {
    std::lock_guard<std::mutex> lock(error_mutex);
    if (!local_error.ok()) return local_error;
  }
  if (!status.ok()) return FromGrpc(status, options.connection.server);
  return run;
}

absl::StatusOr<int> CheckHealth(const ConnectionOptions& connection) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = Connect(connection);
  if (!channel.ok()) return channel.status();
  grpc::GenericStub stub(*channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(connection.connect_timeout_seconds));
  grpc::Slice empty("");  // HealthCheckRequest{service: ""}: no bytes
  grpc::ByteBuffer request(&empty, 1);
  grpc::ByteBuffer response;
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  grpc::Status status;
  stub.UnaryCall(&context, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request, &response,
                 [&](grpc::Status s) {
                   std::lock_guard<std::mutex> lock(mutex);
                   status = std::move(s);
                   done = true;
                   done_cv.notify_all();
                 });
  {
    std::unique_lock<std::mutex> lock(mutex);
    done_cv.wait(lock, [&] { return done; });
  }
  if (!status.ok()) return FromGrpc(status, connection.server);
  std::vector<grpc::Slice> slices;
  std::string bytes;
  if (response.Dump(&slices).ok()) {
    for (const grpc::Slice& slice : slices) bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  // HealthCheckResponse{status = 1}: field 1, varint.
  if (bytes.empty()) return 0;
  if (bytes.size() == 2 && bytes[0] == 0x08) return static_cast<int>(bytes[1]);
  return absl::InternalError("server " + connection.server + ": unreadable health answer");
}

absl::StatusOr<v1::Capabilities> GetCapabilities(const ConnectionOptions& connection) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = Connect(connection);
  if (!channel.ok()) return channel.status();
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(connection.connect_timeout_seconds));
  v1::Capabilities capabilities;
  grpc::Status status = v1::Scorer::NewStub(*channel)->GetCapabilities(&context, {}, &capabilities);
  if (!status.ok()) return FromGrpc(status, connection.server);
  return capabilities;
}

}  // namespace exactq::client
