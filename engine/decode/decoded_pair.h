// DecodedPair: a reference and a distorted VideoDecoder run side by side, each on its
// own thread, their pictures handed out in pairs by presentation order.
//
// Start refuses sources that do not pair: different geometry or pixel format, or
// timing that would misalign (CheckSourcesPair). Each side decodes ahead into a queue
// of `queue_frames` pictures (a DecodeAhead), so the two decoders and the consumer
// overlap. When one
// side ends before the other, the common pairs have been handed out; Next then
// decodes the rest of the longer side to count it and fails with InvalidArgument
// naming both counts. A decoder's error (naming its frame) ends the pairs after the
// pairs before it.
//
//   absl::StatusOr<std::unique_ptr<DecodedPair>> pair =
//       DecodedPair::Start(std::move(reference), std::move(distorted), {});
//   Frame ref, dist;
//   while (true) {
//     absl::StatusOr<bool> more = (*pair)->Next(&ref, &dist);  // buffers are swapped
//     ...
//   }

#ifndef EXACTQ_ENGINE_DECODE_DECODED_PAIR_H_
#define EXACTQ_ENGINE_DECODE_DECODED_PAIR_H_

#include <cstdint>
#include <memory>
#include <memory_resource>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/decode/decode_ahead.h"
#include "engine/decode/video_decoder.h"
#include "engine/format/frame.h"

namespace exactq {

class DecodedPair {
 public:
  struct Options {
    int queue_frames = 2;  // pictures decoded ahead per side
    // Where decoded pictures live (page-locked memory for a GPU stream).
    std::pmr::memory_resource* frame_memory = std::pmr::get_default_resource();
  };

  static absl::StatusOr<std::unique_ptr<DecodedPair>> Start(std::unique_ptr<VideoDecoder> reference,
                                                            std::unique_ptr<VideoDecoder> distorted,
                                                            const Options& options);
  // Stops both decoders and joins their threads.
  ~DecodedPair();
  DecodedPair(const DecodedPair&) = delete;
  DecodedPair& operator=(const DecodedPair&) = delete;

  const DecodedStreamInfo& reference_info() const { return reference_->info(); }
  const DecodedStreamInfo& distorted_info() const { return distorted_->info(); }
  const FrameGeometry& geometry() const { return reference_info().geometry; }

  // The next pair, swapped into *reference and *distorted (their old buffers are
  // reused for later pictures). true: a pair; false: both sides ended together.
  absl::StatusOr<bool> Next(Frame* reference, Frame* distorted);

  // Pairs handed out so far.
  int64_t pairs() const { return pairs_; }

 private:
  DecodedPair(std::unique_ptr<VideoDecoder> reference, std::unique_ptr<VideoDecoder> distorted, const Options& options);

  std::unique_ptr<DecodeAhead> reference_;
  std::unique_ptr<DecodeAhead> distorted_;
  int64_t pairs_ = 0;
  absl::Status error_;  // sticky
};

}  // namespace exactq

#endif  // EXACTQ_ENGINE_DECODE_DECODED_PAIR_H_
