#include "engine/metrics/ssim/ssim.h"

#include "engine/metrics/metric_options.h"
#include "engine/metrics/ssim/ssim_reference.h"

namespace exactq {

const MetricInfo& SsimMetricInfo() {
  static const MetricInfo* const info = new MetricInfo{
      "ssim",
      ssim::kDefinitionVersion,
      "the VMAF fork's fixed-point SSIM on luma (integer 9x9 Gaussian windows, truncated "
      "at edges; raster-order double sum), any depth 8..16",
      {"ssim", "ssim_db"},
      {
          {"enable_db", "false", "also output ssim_db = -10*log10(1 - ssim)"},
          {"clip_db", "false", "cap ssim_db at ceil(10*log10(peak^2 / (0.5 / (W*H)))) instead of +inf"},
      },
  };
  return *info;
}

absl::StatusOr<ssim::SsimOptions> ParseSsimOptions(const MetricOptions& options) {
  absl::StatusOr<MetricOptionParser> parser = MetricOptionParser::Create(SsimMetricInfo(), options);
  if (!parser.ok()) return parser.status();
  absl::StatusOr<bool> enable_db = parser->GetBool("enable_db");
  if (!enable_db.ok()) return enable_db.status();
  absl::StatusOr<bool> clip_db = parser->GetBool("clip_db");
  if (!clip_db.ok()) return clip_db.status();
  return ssim::SsimOptions{*enable_db, *clip_db};
}

absl::StatusOr<std::unique_ptr<Metric>> CreateSsimMetric(const MetricOptions& options) {
  absl::StatusOr<ssim::SsimOptions> parsed = ParseSsimOptions(options);
  if (!parsed.ok()) return parsed.status();
  return std::make_unique<SsimMetric>(*parsed);
}

const MetricInfo& SsimMetric::info() const { return SsimMetricInfo(); }

absl::Status SsimMetric::CheckInput(const FrameGeometry& geometry) const {
  return ssim::CheckSsimInput(geometry, geometry);
}

std::vector<std::string> SsimMetric::OutputNames(const FrameGeometry& /*geometry*/) const {
  return ssim::SsimOutputNames(options_);
}

absl::StatusOr<FrameScores> SsimMetric::ScoreFrame(const Frame& ref, const Frame& dist) {
  return engine_.Score(ref, dist, options_);
}

}  // namespace exactq
