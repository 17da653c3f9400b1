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
#include <string_view>
#include <vector>

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

// The header's form of one side.
void SetSource(const DecodedInput& input, v1::Source* source);

// One upload being sent: its file, where its chunks go and how far it got.
struct PendingUpload {
  InputFile* input = nullptr;
  v1::Picture picture = v1::PICTURE_UNSPECIFIED;
  uint32_t rendition = 0;  // ladders
  uint64_t offset = 0;     // of the next chunk
  bool done = false;
};

// Sends every upload's bytes, one chunk of each in turn (so every decoder on the
// server starts early), through `send(upload, data, last)`; returns OK early when send
// returns false (the server ended the call), or a local read error.
absl::Status SendUploadsInTurn(
    std::vector<PendingUpload>* uploads,
    const std::function<bool(const PendingUpload& upload, std::string_view data, bool last)>& send);

absl::StatusOr<ScoringRun> ScoreDecodedInputs(DecodedInput reference, DecodedInput distorted,
                                              const ScoreOptions& options, uint32_t decode_threads,
                                              const std::string& decode,
                                              const std::function<void(const v1::FrameResult&)>& on_frame);

}  // namespace exactq::client

#endif  // EXACTQ_CLIENT_DECODED_SCORE_CLIENT_H_
