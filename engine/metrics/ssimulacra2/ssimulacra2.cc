#include "engine/metrics/ssimulacra2/ssimulacra2.h"

#include "absl/strings/str_cat.h"
#include "engine/metrics/metric_options.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_reference.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_score.h"

namespace exactq {

const MetricInfo& Ssimulacra2MetricInfo() {
  static const MetricInfo* const info = new MetricInfo{
      "ssimulacra2",
      ssimulacra2::kDefinitionVersion,
      "SSIMULACRA2 for YUV input, the VMAF fork's definition (lusoris/vmaf c2a3c7e0 scalar "
      "arithmetic): 0..100, higher is better; 4:2:0/4:2:2/4:4:4, 8..16 bits, >= 8x8",
      {"ssimulacra2"},
      {
          {"yuv_matrix", "0",
           "YUV to RGB: 0 = BT.709 limited range, 1 = BT.601 limited, 2 = BT.709 full, "
           "3 = BT.601 full"},
      },
  };
  return *info;
}

absl::StatusOr<Ssimulacra2Options> ParseSsimulacra2Options(const MetricOptions& options) {
  absl::StatusOr<MetricOptionParser> parser = MetricOptionParser::Create(Ssimulacra2MetricInfo(), options);
  if (!parser.ok()) return parser.status();
  absl::StatusOr<int64_t> matrix = parser->GetInt("yuv_matrix");
  if (!matrix.ok()) return matrix.status();
  if (*matrix < 0 || *matrix > 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("option 'yuv_matrix' of metric 'ssimulacra2' is ", *matrix,
                     "; it must be 0 (BT.709 limited), 1 (BT.601 limited), 2 (BT.709 full) or 3 "
                     "(BT.601 full)"));
  }
  Ssimulacra2Options parsed;
  parsed.yuv_matrix = static_cast<ssimulacra2::YuvMatrix>(*matrix);
  return parsed;
}

absl::StatusOr<std::unique_ptr<Metric>> CreateSsimulacra2Metric(const MetricOptions& options) {
  absl::StatusOr<Ssimulacra2Options> parsed = ParseSsimulacra2Options(options);
  if (!parsed.ok()) return parsed.status();
  return std::make_unique<Ssimulacra2Metric>(*parsed);
}

const MetricInfo& Ssimulacra2Metric::info() const { return Ssimulacra2MetricInfo(); }

absl::Status Ssimulacra2Metric::CheckInput(const FrameGeometry& geometry) const {
  return ssimulacra2::CheckSsimulacra2Input(geometry);
}

std::vector<std::string> Ssimulacra2Metric::OutputNames(const FrameGeometry&) const { return {"ssimulacra2"}; }

absl::StatusOr<FrameScores> Ssimulacra2Metric::ScoreFrame(const Frame& ref, const Frame& dist) {
  absl::StatusOr<double> score = engine_.Score(ref, dist, options_.yuv_matrix);
  if (!score.ok()) return score.status();
  return FrameScores{{"ssimulacra2", *score}};
}

}  // namespace exactq
