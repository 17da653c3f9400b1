// DecodeAhead: one VideoDecoder on its own thread, decoding up to `queue_frames`
// pictures ahead of the consumer, optionally turning each into another picture on that
// same thread (a ladder's rendition scaled to its reference's size) before it is handed
// out. DecodedPair runs two of them, LadderSources one per source.
//
// Pictures are handed out by swapping buffers: Take moves the next picture into the
// caller's Frame and keeps the caller's old buffer for a later picture, so a steady
// stream allocates nothing. Handed-out pictures live in `frame_memory` (page-locked
// memory for a GPU stream); with a transform, the decoder's own pictures stay in a
// scratch buffer of the thread's.
//
//   DecodeAhead source(std::move(decoder), DecodeAhead::Options{.queue_frames = 2});
//   Frame picture;
//   absl::Status end;
//   while (source.Take(&picture, &end)) score(picture);
//   if (!end.ok()) return end;  // the decoder's error; OK: the clean end
//
// Take, CountRest and Stop are for one consumer thread.

#ifndef EXACTQ_ENGINE_DECODE_DECODE_AHEAD_H_
#define EXACTQ_ENGINE_DECODE_DECODE_AHEAD_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "engine/decode/video_decoder.h"
#include "engine/format/frame.h"
#include "engine/format/frame_geometry.h"

namespace exactq {

class DecodeAhead {
 public:
  // Runs on the decoding thread after each picture: writes the picture to hand out into
  // *out (already at `geometry`, from frame_memory) from the decoded one, which may hold
  // its pixels on a GPU only (Frame::device_picture; *out may then get a device picture
  // too). An error ends the source as a decoder error would.
  struct Transform {
    FrameGeometry geometry;  // of the pictures handed out
    std::function<absl::Status(const Frame& decoded, Frame* out)> apply;
  };

  struct Options {
    int queue_frames = 2;  // pictures decoded (and transformed) ahead; at least 1
    // Where handed-out pictures live.
    std::pmr::memory_resource* frame_memory = std::pmr::get_default_resource();
    std::optional<Transform> transform;  // none: the decoder's pictures as they are
  };

  // Starts the decoding thread.
  DecodeAhead(std::unique_ptr<VideoDecoder> decoder, Options options);
  // Stops the thread (Stop).
  ~DecodeAhead();
  DecodeAhead(const DecodeAhead&) = delete;
  DecodeAhead& operator=(const DecodeAhead&) = delete;

  const DecodedStreamInfo& info() const { return decoder_->info(); }
  // The geometry of the pictures handed out: the transform's, else the decoder's.
  const FrameGeometry& geometry() const;

  // Waits for the next picture and swaps it into *frame (the old buffer is kept for a
  // later picture when it is in frame_memory). true: a picture; false: the source
  // ended, *status saying how (OK: the clean end; else the decoder's or the
  // transform's error, after the pictures before the failing one), *frame untouched.
  bool Take(Frame* frame, absl::Status* status);

  // Pictures Take has handed out.
  int64_t taken() const { return taken_; }

  // From now on the thread decodes without queueing or transforming, only to count
  // what is left; returns at once (so several sources count in parallel).
  void CountAhead();
  // Waits for the end (CountAhead first, if not called) and returns the pictures not
  // handed out; *status as for Take. Take returns false afterwards.
  int64_t CountRest(absl::Status* status);

  // Asks the thread to stop after the picture it is on and returns at once (several
  // sources wind down together); Stop joins.
  void RequestStop();
  // Asks the thread to stop and joins it; Take returns what was queued, then false with
  // *status OK (a stopped source ends cleanly) or the error the thread had met.
  // Idempotent.
  void Stop();

 private:
  void Decode();
  // One picture into *out (from the decoder, through the transform if any); false at
  // the end, with *status set on an error.
  bool DecodeOne(Frame* out, absl::Status* status);

  const std::unique_ptr<VideoDecoder> decoder_;
  const Options options_;
  int64_t taken_ = 0;  // the consumer's

  Frame scratch_;  // the decoding thread's: decoded pictures awaiting the transform

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Frame> ready_;   // decoded, not handed out
  std::vector<Frame> spare_;  // buffers to decode into
  int64_t decoded_ = 0;       // pictures the thread finished, queued or only counted
  bool counting_ = false;
  bool ended_ = false;  // the thread finished: status_ says how
  bool stop_ = false;
  absl::Status status_;

  std::thread thread_;  // last: starts once everything above exists
};

}  // namespace exactq

#endif  // EXACTQ_ENGINE_DECODE_DECODE_AHEAD_H_
