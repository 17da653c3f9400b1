// The StreamSummary of a scored stream: pooled scores per output (engine pooling) and
// the stream's totals. Used by decoded-source streams; the raw-picture session builds
// the same message inline (to be folded onto this).
#ifndef EXACTQ_SERVER_STREAM_SUMMARY_H_
#define EXACTQ_SERVER_STREAM_SUMMARY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/runtime/frame_scorer.h"
#include "exactq/v1/exactq.pb.h"
#include "server/frame_answerer.h"

namespace exactq::server {

struct StreamTotalsInput {
  FrameCounts counts;
  uint64_t bytes_received = 0;
  uint64_t wall_ns = 0;
  v1::FrameTiming timing_sum;
};

absl::StatusOr<v1::StreamSummary> BuildStreamSummary(const std::string& job_id, const FrameScorer& scorer,
                                                     const std::vector<std::vector<double>>& per_output,
                                                     const StreamTotalsInput& totals);

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_STREAM_SUMMARY_H_
