// Streams two picture sources to an ExactQ server and collects the answers.
//
// A writer thread reads both files frame by frame and sends each picture in chunks;
// the calling thread reads the answers as they come and reports each frame to
// `on_frame` (progress). A local error (a truncated file, files of different
// lengths) stops the sending: the frames already sent are answered (and reported to
// `on_frame`), then the local error is returned; a server error comes back with its
// gRPC code.
#ifndef EXACTQ_CLIENT_SCORE_CLIENT_H_
#define EXACTQ_CLIENT_SCORE_CLIENT_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/picture_source.h"
#include "client/report.h"
#include "exactq/v1/exactq.grpc.pb.h"

namespace exactq::client {

// How to reach the server: plaintext, TLS (ca_file) or mutual TLS (plus cert and key).
struct ConnectionOptions {
  std::string server = "localhost:50051";
  std::string tls_ca_file;    // PEM roots that signed the server's certificate
  std::string tls_cert_file;  // PEM client certificate, for mutual TLS
  std::string tls_key_file;
  std::string tls_server_name;  // overrides the name checked in the server's certificate
  int connect_timeout_seconds = 10;
};

absl::StatusOr<std::shared_ptr<grpc::Channel>> Connect(const ConnectionOptions& options);

// A call's final status as the client reports it: the server's code, "server HOST: ...".
absl::Status FromGrpc(const grpc::Status& status, const std::string& server);

struct ScoreOptions {
  ConnectionOptions connection;
  std::vector<v1::MetricRequest> metrics;
  v1::Backend backend = v1::BACKEND_AUTO;
  std::string job_id;
  uint64_t chunk_bytes = 1 << 20;
  std::optional<v1::ColorRange> range;  // overrides the file's tag
  std::optional<v1::ColorMatrix> matrix;
  // Which frames of the files to score: from first_frame up to (not including)
  // end_frame, every subsample-th. Answers carry the files' frame numbers.
  uint64_t first_frame = 0;
  std::optional<uint64_t> end_frame;
  uint32_t subsample = 1;
  // Called once the server accepts the stream (before any frame).
  std::function<void(const v1::StreamAccepted&)> on_accepted;
};

// How many frames ScoreFiles sends out of `total` in the files.
uint64_t SelectedFrames(uint64_t total, const ScoreOptions& options);

absl::StatusOr<ScoringRun> ScoreFiles(PictureSource& reference, PictureSource& distorted, const ScoreOptions& options,
                                      const std::function<void(const v1::FrameResult&)>& on_frame);

// The server's gRPC health (grpc.health.v1, service ""): 1 SERVING, 2 NOT_SERVING,
// 0 UNKNOWN. Over the same TLS settings as scoring (Kubernetes' gRPC probes speak
// plaintext only; `exactq health` is the exec probe of a TLS server).
absl::StatusOr<int> CheckHealth(const ConnectionOptions& connection);

// Asks the server what it can do.
absl::StatusOr<v1::Capabilities> GetCapabilities(const ConnectionOptions& connection);

// The wire form of an engine geometry.
v1::Geometry GeometryToWire(const FrameGeometry& geometry);

}  // namespace exactq::client

#endif  // EXACTQ_CLIENT_SCORE_CLIENT_H_
