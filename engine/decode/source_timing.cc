#include "engine/decode/source_timing.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace exactq {

std::string TimingDescription(const SourceTiming& timing) {
  std::string rate = timing.rate_known() ? absl::StrCat(timing.rate_num, "/", timing.rate_den, " fps") : "rate unknown";
  if (!timing.start_known) return rate;
  return absl::StrFormat("%s, first picture at %.6f s", rate, timing.start_seconds);
}

absl::Status CheckSourcesPair(const SourceTiming& reference, const SourceTiming& distorted) {
  if (reference.rate_known() && distorted.rate_known() &&
      reference.rate_num * distorted.rate_den != distorted.rate_num * reference.rate_den) {
    return absl::InvalidArgumentError(
        absl::StrCat("the sources' frame rates differ (reference ", reference.rate_num, "/", reference.rate_den,
                     " fps, distorted ", distorted.rate_num, "/", distorted.rate_den,
                     " fps): pairing by presentation order would compare different moments; convert one first"));
  }
  if (reference.start_known && distorted.start_known) {
    const SourceTiming& rated = reference.rate_known() ? reference : distorted;
    // Without a rate on either side, a frame of 1/24 s is the coarsest common case.
    const double frame_seconds =
        rated.rate_known() ? static_cast<double>(rated.rate_den) / static_cast<double>(rated.rate_num) : 1.0 / 24;
    if (std::fabs(reference.start_seconds - distorted.start_seconds) > frame_seconds / 2) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "the sources start at different times (reference's first picture at %.6f s, distorted's at %.6f s; an edit "
          "list or start offset): pairing by presentation order would be misaligned",
          reference.start_seconds, distorted.start_seconds));
    }
  }
  return absl::OkStatus();
}

}  // namespace exactq
