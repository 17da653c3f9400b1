#include "engine/pooling/pooling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace exactq {
namespace {

double CanonicalNan(double value) { return std::isnan(value) ? std::numeric_limits<double>::quiet_NaN() : value; }

}  // namespace

double NearestRankPercentile(absl::Span<const double> sorted, int percent) {
  // ceil(percent * n / 100) in integers, so no rounding can move the rank.
  const size_t n = sorted.size();
  const size_t rank = (static_cast<size_t>(percent) * n + 99) / 100;
  return sorted[rank == 0 ? 0 : rank - 1];
}

absl::StatusOr<PooledScores> PoolScores(absl::Span<const double> per_frame) {
  if (per_frame.empty()) return absl::InvalidArgumentError("no frames to pool");
  PooledScores pooled;
  pooled.count = per_frame.size();

  // libvmaf's loop: one pass in frame order, the same operations in the same order.
  double sum = 0.0;
  double inverse_sum = 0.0;
  bool any_nan = false;
  for (size_t i = 0; i < per_frame.size(); ++i) {
    const double x = per_frame[i];
    sum += x;
    inverse_sum += 1.0 / (x + 1.0);
    if (i == 0 || x < pooled.min) pooled.min = x;
    if (i == 0 || x > pooled.max) pooled.max = x;
    any_nan |= std::isnan(x);
  }
  const double n = static_cast<double>(per_frame.size());
  pooled.mean = sum / n;
  pooled.harmonic_mean = n / inverse_sum - 1.0;

  if (any_nan) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    pooled.p1 = pooled.p5 = pooled.p10 = pooled.median = nan;
  } else {
    std::vector<double> sorted(per_frame.begin(), per_frame.end());
    // -0.0 sorts before +0.0: a total order, so the chosen element (and its sign bit)
    // does not depend on how the library's sort treats equal keys.
    std::sort(sorted.begin(), sorted.end(),
              [](double a, double b) { return a < b || (a == b && std::signbit(a) && !std::signbit(b)); });
    pooled.p1 = NearestRankPercentile(sorted, 1);
    pooled.p5 = NearestRankPercentile(sorted, 5);
    pooled.p10 = NearestRankPercentile(sorted, 10);
    pooled.median = NearestRankPercentile(sorted, 50);
  }

  for (double* value : {&pooled.min, &pooled.max, &pooled.mean, &pooled.harmonic_mean}) {
    *value = CanonicalNan(*value);
  }
  return pooled;
}

}  // namespace exactq
