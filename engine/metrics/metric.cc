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

double CanonicalizeNan(double value) { return std::isnan(value) ? std::numeric_limits<double>::quiet_NaN() : value; }

namespace {

absl::Status CheckPair(const Metric& metric, const Frame& ref, const Frame& dist, const Frame* previous_reference) {
  if (ref.geometry() != dist.geometry()) {
    return absl::InvalidArgumentError(absl::StrCat(metric.name(), ": reference is ",
                                                   GeometryDescription(ref.geometry()), " but distorted is ",
                                                   GeometryDescription(dist.geometry())));
  }
  if (previous_reference != nullptr && previous_reference->geometry() != ref.geometry()) {
    return absl::InvalidArgumentError(absl::StrCat(metric.name(), ": the previous reference is ",
                                                   GeometryDescription(previous_reference->geometry()),
                                                   " but this one is ", GeometryDescription(ref.geometry())));
  }
  return metric.CheckInput(ref.geometry());
}

absl::StatusOr<FrameScores> Canonical(absl::StatusOr<FrameScores> scores) {
  if (scores.ok()) {
    for (NamedScore& score : *scores) score.value = CanonicalizeNan(score.value);
  }
  return scores;
}

}  // namespace

absl::StatusOr<FrameScores> Metric::Score(const Frame& ref, const Frame& dist) {
  if (absl::Status status = CheckPair(*this, ref, dist, nullptr); !status.ok()) return status;
  return Canonical(ScoreFrame(ref, dist));
}

absl::StatusOr<FrameScores> Metric::ScoreInStream(const Frame& ref, const Frame& dist,
                                                  const Frame* previous_reference) {
  if (absl::Status status = CheckPair(*this, ref, dist, previous_reference); !status.ok()) return status;
  return Canonical(ScoreFrameInStream(ref, dist, previous_reference));
}

}  // namespace exactq
