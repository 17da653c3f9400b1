// Scores a ladder (proto "LADDERS"): one reference against N renditions in one call,
// every file decoded by the server, the reference once.
//
// A writer thread sends the header and then every upload's bytes, one chunk of each in
// turn, so every decoder starts early; the calling thread reads the answers and
// reports each frame to `on_frame` with its rendition. Server paths send nothing but
// the header. A rendition that ends with an error (another frame count, a corrupt
// file) is in the run with its error; the call's own error comes back as ScoreFiles's
// does.
#ifndef EXACTQ_CLIENT_LADDER_CLIENT_H_
#define EXACTQ_CLIENT_LADDER_CLIENT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/decoded_score_client.h"
#include "client/score_client.h"
#include "exactq/v1/exactq.pb.h"

namespace exactq::client {

struct RenditionRun {
  std::string source;       // as the user named it
  int64_t size_bytes = -1;  // of an uploaded regular file; -1 unknown
  std::vector<v1::FrameResult> frames;
  v1::RenditionEnd end;
  bool ok() const { return end.code() == 0; }
};

struct LadderRun {
  std::string reference;  // as the user named it
  v1::LadderAccepted accepted;
  std::vector<RenditionRun> renditions;  // in the order given
};

struct LadderOptions {
  ScoreOptions score;  // connection, metrics, backend, job id, colour
  std::string scale;   // "bicubic" (default when empty) or "none"
  uint32_t decode_threads = 0;
  std::string decode;  // "auto", "gpu", "cpu"; empty: the server's --decode
};

struct LadderInput {
  std::string name;  // as the user named it (the server path when `upload` is null)
  DecodedInput input;
};

absl::StatusOr<LadderRun> ScoreLadder(LadderInput reference, std::vector<LadderInput> renditions,
                                      const LadderOptions& options,
                                      const std::function<void(uint32_t rendition, const v1::FrameResult&)>& on_frame);

}  // namespace exactq::client

#endif  // EXACTQ_CLIENT_LADDER_CLIENT_H_
