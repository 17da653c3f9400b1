#include "server/stream_summary.h"

#include "engine/pooling/pooling.h"
#include "server/version.h"
#include "server/wire_conversion.h"

namespace exactq::server {

absl::StatusOr<v1::StreamSummary> BuildStreamSummary(const std::string& job_id, const FrameScorer& scorer,
                                                     const std::vector<std::vector<double>>& per_output,
                                                     const StreamTotalsInput& in) {
  v1::StreamSummary summary;
  summary.set_job_id(job_id);
  const std::vector<std::string>& outputs = scorer.output_names();
  for (size_t i = 0; i < outputs.size() && i < per_output.size(); ++i) {
    if (per_output[i].empty()) break;
    absl::StatusOr<PooledScores> pooled = PoolScores(per_output[i]);
    if (!pooled.ok()) return pooled.status();
    v1::PooledScore* out = summary.add_pooled();
    out->set_name(outputs[i]);
    out->set_min(pooled->min);
    out->set_max(pooled->max);
    out->set_mean(pooled->mean);
    out->set_harmonic_mean(pooled->harmonic_mean);
    out->set_p1(pooled->p1);
    out->set_p5(pooled->p5);
    out->set_p10(pooled->p10);
    out->set_median(pooled->median);
  }
  v1::StreamTotals* totals = summary.mutable_totals();
  totals->set_bytes_received(in.bytes_received);
  *totals->mutable_timing_sum() = in.timing_sum;
  totals->set_frames(in.counts.frames);
  totals->set_frames_cpu(in.counts.cpu);
  totals->set_frames_cuda(in.counts.cuda);
  totals->set_wall_ns(in.wall_ns);
  totals->set_frames_per_second(
      in.wall_ns > 0 ? static_cast<double>(in.counts.frames) / (static_cast<double>(in.wall_ns) * 1e-9) : 0.0);
  ToWire(scorer, kServerVersion, summary.mutable_provenance());
  return summary;
}

}  // namespace exactq::server
