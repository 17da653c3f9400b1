#include "engine/metrics/metric.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"

namespace exactq {

std::optional<double> FindScore(const FrameScores& scores, absl::string_view name) {
  for (const NamedScore& score : scores) {
    if (score.name == name) return score.value;
  }
  return std::nullopt;
}

double CanonicalizeNan(double value) {
  return std::isnan(value) ? std::numeric_limits<double>::quiet_NaN() : value;
}

absl::StatusOr<FrameScores> Metric::Score(const Frame& ref, const Frame& dist) {
  if (ref.geometry() != dist.geometry()) {
    return absl::InvalidArgumentError(absl::StrCat(
        name(), ": reference is ", GeometryDescription(ref.geometry()), " but distorted is ",
        GeometryDescription(dist.geometry())));
  }
  if (absl::Status status = CheckInput(ref.geometry()); !status.ok()) return status;
  absl::StatusOr<FrameScores> scores = ScoreFrame(ref, dist);
  if (!scores.ok()) return scores;
  for (NamedScore& score : *scores) score.value = CanonicalizeNan(score.value);
  return scores;
}

}  // namespace exactq
