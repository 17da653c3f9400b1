// Scores two inputs that the server decodes: uploads (an encoded file's bytes, sent as
// EncodedChunks while the server decodes) or paths the server reads under its
// --source_root directories (proto "SOURCES").
//
// A writer thread sends the header and then both uploads' bytes, alternating chunks
// so both decoders start early; the calling thread reads the answers. Paths send
// nothing but the header. Errors come back as ScoreFiles's do: the server's status
// with its code, or a local read error.
#ifndef EXACTQ_CLIENT_DECODED_SCORE_CLIENT_H_
#define EXACTQ_CLIENT_DECODED_SCORE_CLIENT_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "client/input_file.h"
#include "client/report.h"
#include "client/score_client.h"

namespace exactq::client {

// One side: an upload (input set) or a server path.
struct DecodedInput {
  std::unique_ptr<InputFile> upload;
  std::string server_path;
};

// Chunks of this size are well under every server's max_chunk_bytes default (1 MiB).
inline constexpr uint64_t kUploadChunkBytes = 256 << 10;

absl::StatusOr<ScoringRun> ScoreDecodedInputs(DecodedInput reference, DecodedInput distorted,
                                              const ScoreOptions& options, uint32_t decode_threads,
                                              const std::function<void(const v1::FrameResult&)>& on_frame);

}  // namespace exactq::client

#endif  // EXACTQ_CLIENT_DECODED_SCORE_CLIENT_H_
