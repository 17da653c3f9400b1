#include "engine/decode/decoded_pair.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/decode/source_timing.h"

namespace exactq {

DecodedPair::DecodedPair(std::unique_ptr<VideoDecoder> reference, std::unique_ptr<VideoDecoder> distorted,
                         const Options& options)
    : options_(options) {
  reference_.name = "reference";
  reference_.decoder = std::move(reference);
  distorted_.name = "distorted";
  distorted_.decoder = std::move(distorted);
}

absl::StatusOr<std::unique_ptr<DecodedPair>> DecodedPair::Start(std::unique_ptr<VideoDecoder> reference,
                                                                std::unique_ptr<VideoDecoder> distorted,
                                                                const Options& options) {
  const DecodedStreamInfo& r = reference->info();
  const DecodedStreamInfo& d = distorted->info();
  if (r.geometry != d.geometry) {
    return absl::InvalidArgumentError(absl::StrCat("the sources' pictures differ: the reference decodes to ",
                                                   GeometryDescription(r.geometry), ", the distorted to ",
                                                   GeometryDescription(d.geometry)));
  }
  if (absl::Status s = CheckSourcesPair(r.timing, d.timing); !s.ok()) return s;
  std::unique_ptr<DecodedPair> pair(new DecodedPair(std::move(reference), std::move(distorted), options));
  for (Side* side : {&pair->reference_, &pair->distorted_}) {
    side->thread = std::thread([p = pair.get(), side] { p->Decode(side); });
  }
  return pair;
}

DecodedPair::~DecodedPair() {
  Stop(&reference_);
  Stop(&distorted_);
}

void DecodedPair::Stop(Side* side) {
  {
    std::lock_guard<std::mutex> lock(side->mutex);
    side->stop = true;
  }
  side->changed.notify_all();
  if (side->thread.joinable()) side->thread.join();
}

void DecodedPair::Decode(Side* side) {
  const int capacity = std::max(1, options_.queue_frames);
  while (true) {
    Frame frame;
    {
      std::unique_lock<std::mutex> lock(side->mutex);
      side->changed.wait(lock, [&] { return side->stop || static_cast<int>(side->ready.size()) < capacity; });
      if (side->stop) return;
      if (!side->spare.empty()) {
        frame = std::move(side->spare.back());
        side->spare.pop_back();
      }
    }
    if (frame.size_bytes() == 0) {
      absl::StatusOr<Frame> fresh = Frame::Create(side->decoder->info().geometry, options_.frame_memory);
      if (!fresh.ok()) {
        std::lock_guard<std::mutex> lock(side->mutex);
        side->status = fresh.status();
        side->ended = true;
        side->changed.notify_all();
        return;
      }
      frame = *std::move(fresh);
    }
    // Decoding runs unlocked: the consumer takes ready pictures meanwhile.
    absl::StatusOr<bool> more = side->decoder->ReadFrame(&frame);
    std::lock_guard<std::mutex> lock(side->mutex);
    if (!more.ok() || !*more) {
      if (!more.ok()) side->status = more.status();
      side->ended = true;
      side->changed.notify_all();
      return;
    }
    ++side->decoded;
    side->ready.push_back(std::move(frame));
    side->changed.notify_all();
  }
}

bool DecodedPair::Take(Side* side, Frame* frame, absl::Status* status) {
  std::unique_lock<std::mutex> lock(side->mutex);
  side->changed.wait(lock, [&] { return !side->ready.empty() || side->ended; });
  if (side->ready.empty()) {
    *status = side->status;
    return false;
  }
  *frame = std::move(side->ready.front());
  side->ready.pop_front();
  side->changed.notify_all();
  return true;
}

int64_t DecodedPair::CountRest(Side* side, absl::Status* status) {
  Frame scratch;
  int64_t count = 0;
  while (Take(side, &scratch, status)) ++count;
  return count;
}

absl::StatusOr<bool> DecodedPair::Next(Frame* reference, Frame* distorted) {
  if (!error_.ok()) return error_;
  // Hand the caller's buffers back for decoding; take the next pictures.
  Frame ref_picture, dist_picture;
  absl::Status ref_status, dist_status;
  const bool have_ref = Take(&reference_, &ref_picture, &ref_status);
  if (!ref_status.ok()) return error_ = ref_status;
  const bool have_dist = Take(&distorted_, &dist_picture, &dist_status);
  if (!dist_status.ok()) return error_ = dist_status;
  if (have_ref && have_dist) {
    for (auto [side, caller, picture] : {std::tuple{&reference_, reference, &ref_picture},
                                         std::tuple{&distorted_, distorted, &dist_picture}}) {
      std::swap(*caller, *picture);
      if (picture->size_bytes() != 0) {
        std::lock_guard<std::mutex> lock(side->mutex);
        side->spare.push_back(std::move(*picture));
      }
    }
    ++pairs_;
    return true;
  }
  if (!have_ref && !have_dist) return false;
  // One side ended first: count the rest of the other for the message.
  int64_t reference_frames = pairs_, distorted_frames = pairs_;
  absl::Status rest_status;
  if (have_ref) {
    reference_frames += 1 + CountRest(&reference_, &rest_status);
  } else {
    distorted_frames += 1 + CountRest(&distorted_, &rest_status);
  }
  if (!rest_status.ok()) return error_ = rest_status;
  return error_ = absl::InvalidArgumentError(absl::StrCat(
             "the sources have different frame counts: the reference has ", reference_frames,
             " frames and the distorted ", distorted_frames, "; the first ", pairs_, " pairs were scored"));
}

}  // namespace exactq
