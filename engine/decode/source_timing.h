// SourceTiming: when a source's pictures are presented, and the check that two sources
// pair frame by frame.
//
// ExactQ pairs a reference and a distorted picture by presentation order (the n-th
// with the n-th). That is right only when both play at the same rate and start at the
// same time; otherwise every pair compares different moments and the scores are
// silently wrong. So a pair of sources whose rates differ, or whose first pictures are
// presented at different times (an edit list that delays or trims one, a start offset
// in a container), is refused by name. A source that does not carry timing (raw YUV,
// an elementary stream) takes the other's.
//
//   absl::Status s = CheckSourcesPair(reference.timing, distorted.timing);

#ifndef EXACTQ_ENGINE_DECODE_SOURCE_TIMING_H_
#define EXACTQ_ENGINE_DECODE_SOURCE_TIMING_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace exactq {

struct SourceTiming {
  // Frames per second as a fraction; 0/0 when the source does not say.
  int64_t rate_num = 0;
  int64_t rate_den = 0;
  // Presentation time of the first picture, in seconds from the container's start;
  // meaningful only when `start_known`.
  double start_seconds = 0;
  bool start_known = false;

  bool rate_known() const { return rate_num > 0 && rate_den > 0; }
};

// "24000/1001 fps, first picture at 0.042 s" (for messages).
std::string TimingDescription(const SourceTiming& timing);

// InvalidArgument naming both rates, or both start times, when the pairs would be
// misaligned: different rates, or first pictures more than half a frame apart.
absl::Status CheckSourcesPair(const SourceTiming& reference, const SourceTiming& distorted);

}  // namespace exactq

#endif  // EXACTQ_ENGINE_DECODE_SOURCE_TIMING_H_
