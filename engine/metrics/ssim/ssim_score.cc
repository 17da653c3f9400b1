#include "engine/metrics/ssim/ssim_score.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"

namespace exactq {
namespace ssim {

double SsimMaxDb(const FrameGeometry& geometry, bool clip_db) {
  if (!clip_db) return std::numeric_limits<double>::infinity();
  // The fork's operations: peak*peak in unsigned 32 bits (65535^2 still fits), the MSE
  // of half a code value spread over the frame, then ceil(10 * log10(ratio)).
  const uint32_t peak = geometry.max_sample_value();
  const double mse = 0.5 / (static_cast<double>(geometry.width) * static_cast<double>(geometry.height));
  return std::ceil(10.0 * std::log10(static_cast<double>(peak * peak) / mse));
}

double SsimDb(double linear, double max_db) {
  if (linear >= 1.0) return max_db;
  const double db = -10.0 * std::log10(1.0 - linear);
  return db < max_db ? db : max_db;
}

std::vector<std::string> SsimOutputNames(const SsimOptions& options) {
  std::vector<std::string> names = {"ssim"};
  if (options.enable_db) names.push_back("ssim_db");
  return names;
}

absl::StatusOr<FrameScores> SsimOutputs(const SsimSums& sums, const FrameGeometry& geometry,
                                        const SsimOptions& options) {
  const double linear = sums.term_sum / sums.weight_sum;
  if (!std::isfinite(linear)) {
    return absl::InternalError(absl::StrCat("ssim: non-finite score ", linear, " = ", sums.term_sum, " / ",
                                            sums.weight_sum, " on ", GeometryDescription(geometry)));
  }
  FrameScores scores = {{"ssim", linear}};
  if (options.enable_db) {
    scores.push_back({"ssim_db", SsimDb(linear, SsimMaxDb(geometry, options.clip_db))});
  }
  return scores;
}

}  // namespace ssim
}  // namespace exactq
