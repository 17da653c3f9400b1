// One source of a call that the server decodes (proto "SOURCES"): an upload spooled as
// its chunks arrive, or a file under a --source_root. Shared by ScoreStream's decoded
// sessions and ScoreLadder.
#ifndef EXACTQ_SERVER_ENCODED_SOURCE_H_
#define EXACTQ_SERVER_ENCODED_SOURCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/decode/byte_source.h"
#include "engine/decode/spool_file.h"
#include "engine/decode/video_decoder.h"
#include "engine/runtime/device_memory_ledger.h"
#include "exactq/v1/exactq.pb.h"
#include "server/decode_thread_budget.h"
#include "server/server_config.h"

namespace exactq::server {

struct EncodedSource {
  std::string name;                   // in messages: "reference", "distorted", "rendition 2"
  std::string field;                  // the header field that named it: "header.reference_source"
  std::string label;                  // in messages: "reference upload ref.mkv", "distorted /clips/d.mp4"
  std::shared_ptr<SpoolFile> spool;   // uploads only
  std::unique_ptr<ByteSource> bytes;  // taken by the decoder
  uint64_t next_offset = 0;
  bool upload_ended = false;
};

// An upload or a server path (not raw pictures).
bool IsDecoded(const v1::Source& source);

// Opens a server path (refusals: PERMISSION_DENIED, NOT_FOUND) or creates an upload's
// spool (RESOURCE_EXHAUSTED when its announced size is over the limit). source->name
// and field must be set.
absl::Status OpenEncodedSource(const DecodeConfig& config, const v1::Source& wire, EncodedSource* source);

// Validates one chunk of the source's upload (offsets contiguous, size, nothing after
// `last`) and appends it to the spool.
absl::Status AppendUploadChunk(const v1::EncodedChunk& chunk, uint64_t max_chunk_bytes, EncodedSource* source);

// Ends the source's upload: finished at a half-close, aborted with `status` otherwise
// (the decoder reading it then fails with it). Nothing for a server path.
void EndUpload(EncodedSource* source, const absl::Status& status);

// Where a call's sources are decoded: what the header asks ("auto", "gpu", "cpu";
// empty: the server's --decode) within what the server allows (--gpus=none: auto
// decodes on the CPU saying so, gpu is FAILED_PRECONDITION).
struct DecodeRequest {
  DecodeDevice device = DecodeDevice::kCpu;
  int gpu = 0;
  std::string cpu_reason;  // the server's own reason for the CPU, when it overrode auto
};
// InvalidArgument naming `field` for another word.
absl::StatusOr<DecodeRequest> RequestedDecode(const DecodeConfig& config, const std::string& asked,
                                              const std::string& field);
void ApplyDecodeRequest(const DecodeRequest& request, DecoderOptions* options);

// Pictures that `decoder` decodes on the GPU stay there when its frames are scored on
// that same GPU (`scorer_gpu`, FrameScorer::gpu()): no download and no upload. True
// when they will (the frames carry device pictures); false: host pictures as before.
bool KeepPicturesOnScorerGpu(int scorer_gpu, const DecoderOptions& options, VideoDecoder* decoder);

// The device memory `decoder` holds while the GPU decodes it (its surfaces, and with
// `pictures_held` of its pictures held at once, their planar copies once they stay on
// the device), admitted on its GPU beside the scorers (max_device_bytes); an empty
// reservation when the CPU decodes it. ResourceExhausted naming `side` when the GPU has
// no room left. Call it after KeepPicturesOnScorerGpu. The decoder's memory is taken
// when it opens (FFmpeg sizes it from the first picture), so a refused stream gives it
// back when its decoder closes, at once.
absl::StatusOr<DeviceMemoryReservation> ReserveDecoderDeviceMemory(const VideoDecoder& decoder,
                                                                   const DecoderOptions& options, int pictures_held,
                                                                   const std::string& side);

// Opens one side's decoder with up to `threads` decoder threads from `budget` (null: no
// budget, `threads` as asked), taken only when its codec threads (a Y4M side takes
// none), then keeps only those it decodes on, so the rest go to other streams. The
// grant is appended to *grants, which must outlive the decoder.
absl::StatusOr<std::unique_ptr<VideoDecoder>> OpenDecoderWithThreads(std::unique_ptr<ByteSource> bytes,
                                                                     DecoderOptions options, uint32_t threads,
                                                                     DecodeThreadBudget* budget,
                                                                     std::vector<DecodeThreadBudget::Grant>* grants);

// Where the decoder made its pictures, and why not on the GPU when it was asked for.
void ToWire(const DecodedStreamInfo& info, const DecodeRequest& request, v1::DecodeInfo* wire);

// The geometry the decoder found, with the format's range and matrix taken from
// `requested` where set, else from the bitstream's tags.
v1::Geometry DecodedGeometry(const DecodedStreamInfo& info, const v1::PixelFormat& requested);

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_ENCODED_SOURCE_H_
