#include "engine/metrics/psnr/psnr.h"

#include "absl/strings/str_cat.h"
#include "engine/metrics/metric_options.h"
#include "engine/metrics/psnr/plane_sse.h"
#include "engine/metrics/psnr/psnr_math.h"

namespace exactq {
namespace {

constexpr const char* kPsnrOutputs[] = {"psnr_y", "psnr_cb", "psnr_cr"};
constexpr const char* kMseOutputs[] = {"mse_y", "mse_cb", "mse_cr"};

}  // namespace

const MetricInfo& PsnrMetricInfo() {
  static const MetricInfo* const info = new MetricInfo{
      "psnr",
      /*definition_version=*/1,
      "libvmaf's integer PSNR per plane (peak 2^bpc-1, clamp 6*bpc+12 dB), any depth 8..16",
      {"psnr_y", "mse_y", "psnr_cb", "mse_cb", "psnr_cr", "mse_cr"},
      {
          {"enable_chroma", "true", "score the Cb and Cr planes too (4:0:0 has none)"},
          {"enable_mse", "false", "also output each plane's mean squared error"},
          {"min_sse", "0", "if > 0, clamp at ceil(PSNR of this SSE) instead of 6*bpc+12"},
          {"reduced_hbd_peak", "false", "above 8 bits, use peak 255*2^(bpc-8) (8-bit content scaled up)"},
      },
  };
  return *info;
}

absl::StatusOr<PsnrOptions> ParsePsnrOptions(const MetricOptions& options) {
  absl::StatusOr<MetricOptionParser> parser = MetricOptionParser::Create(PsnrMetricInfo(), options);
  if (!parser.ok()) return parser.status();
  absl::StatusOr<bool> enable_chroma = parser->GetBool("enable_chroma");
  if (!enable_chroma.ok()) return enable_chroma.status();
  absl::StatusOr<bool> enable_mse = parser->GetBool("enable_mse");
  if (!enable_mse.ok()) return enable_mse.status();
  absl::StatusOr<double> min_sse = parser->GetDouble("min_sse");
  if (!min_sse.ok()) return min_sse.status();
  if (*min_sse < 0.0) {
    return absl::InvalidArgumentError(
        absl::StrCat("option 'min_sse' of metric 'psnr' is ", *min_sse, "; it must be >= 0"));
  }
  absl::StatusOr<bool> reduced_hbd_peak = parser->GetBool("reduced_hbd_peak");
  if (!reduced_hbd_peak.ok()) return reduced_hbd_peak.status();
  return PsnrOptions{*enable_chroma, *enable_mse, *min_sse, *reduced_hbd_peak};
}

absl::StatusOr<std::unique_ptr<Metric>> CreatePsnrMetric(const MetricOptions& options) {
  absl::StatusOr<PsnrOptions> parsed = ParsePsnrOptions(options);
  if (!parsed.ok()) return parsed.status();
  return std::make_unique<PsnrMetric>(*parsed);
}

const MetricInfo& PsnrMetric::info() const { return PsnrMetricInfo(); }

absl::Status PsnrMetric::CheckInput(const FrameGeometry& geometry) const { return ValidateGeometry(geometry); }

int PsnrScoredPlanes(const PsnrOptions& options, const FrameGeometry& geometry) {
  return options.enable_chroma ? geometry.plane_count() : 1;
}

int PsnrMetric::ScoredPlanes(const FrameGeometry& geometry) const { return PsnrScoredPlanes(options_, geometry); }

std::vector<std::string> PsnrMetric::OutputNames(const FrameGeometry& geometry) const {
  std::vector<std::string> names;
  for (int plane = 0; plane < ScoredPlanes(geometry); ++plane) {
    names.push_back(kPsnrOutputs[plane]);
    if (options_.enable_mse) names.push_back(kMseOutputs[plane]);
  }
  return names;
}

FrameScores PsnrScoresFromSse(const PsnrOptions& options, const FrameGeometry& geometry,
                              absl::Span<const uint64_t> plane_sse) {
  const int bit_depth = geometry.format.bit_depth;
  const uint32_t peak = PsnrPeak(bit_depth, options.reduced_hbd_peak);
  FrameScores scores;
  for (size_t plane = 0; plane < plane_sse.size(); ++plane) {
    const uint64_t samples = geometry.plane_samples(static_cast<int>(plane));
    const double mse = MseFromSse(plane_sse[plane], samples);
    const double max_db = PsnrMaxDb(bit_depth, peak, options.min_sse, samples);
    scores.push_back({kPsnrOutputs[plane], PsnrFromMse(mse, peak, max_db)});
    if (options.enable_mse) scores.push_back({kMseOutputs[plane], mse});
  }
  return scores;
}

absl::StatusOr<FrameScores> PsnrMetric::ScoreFrame(const Frame& ref, const Frame& dist) {
  const FrameGeometry& geometry = ref.geometry();
  uint64_t sse[3] = {0, 0, 0};
  const int planes = ScoredPlanes(geometry);
  for (int plane = 0; plane < planes; ++plane) sse[plane] = PlaneSse(ref, dist, plane);
  return PsnrScoresFromSse(options_, geometry, absl::MakeConstSpan(sse, static_cast<size_t>(planes)));
}

}  // namespace exactq
