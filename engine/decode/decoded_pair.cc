#include "engine/decode/decoded_pair.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/decode/source_timing.h"

namespace exactq {

DecodedPair::DecodedPair(std::unique_ptr<VideoDecoder> reference, std::unique_ptr<VideoDecoder> distorted,
                         const Options& options) {
  DecodeAhead::Options ahead;
  ahead.queue_frames = options.queue_frames;
  ahead.frame_memory = options.frame_memory;
  reference_ = std::make_unique<DecodeAhead>(std::move(reference), ahead);
  distorted_ = std::make_unique<DecodeAhead>(std::move(distorted), ahead);
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
  return std::unique_ptr<DecodedPair>(new DecodedPair(std::move(reference), std::move(distorted), options));
}

DecodedPair::~DecodedPair() {
  reference_->RequestStop();
  distorted_->RequestStop();
  reference_->Stop();
  distorted_->Stop();
}

absl::StatusOr<bool> DecodedPair::Next(Frame* reference, Frame* distorted) {
  if (!error_.ok()) return error_;
  // The caller's buffers go back for decoding as the next pictures come out.
  absl::Status ref_status, dist_status;
  const bool have_ref = reference_->Take(reference, &ref_status);
  if (!ref_status.ok()) return error_ = ref_status;
  const bool have_dist = distorted_->Take(distorted, &dist_status);
  if (!dist_status.ok()) return error_ = dist_status;
  if (have_ref && have_dist) {
    ++pairs_;
    return true;
  }
  if (!have_ref && !have_dist) return false;
  // One side ended first: count the rest of the other for the message.
  int64_t reference_frames = pairs_, distorted_frames = pairs_;
  absl::Status rest_status;
  if (have_ref) {
    reference_frames += 1 + reference_->CountRest(&rest_status);
  } else {
    distorted_frames += 1 + distorted_->CountRest(&rest_status);
  }
  if (!rest_status.ok()) return error_ = rest_status;
  return error_ = absl::InvalidArgumentError(absl::StrCat(
             "the sources have different frame counts: the reference has ", reference_frames,
             " frames and the distorted ", distorted_frames, "; the first ", pairs_, " pairs were scored"));
}

}  // namespace exactq
