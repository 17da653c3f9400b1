// MetricOptionParser: typed access to a metric's string options, checked against the
// options the metric declares in its MetricInfo.
//
// Options arrive as text (a request field, a command line "enable_chroma=false").
// Creating the parser rejects any name the metric does not declare, so a typo is an
// error rather than a silently ignored setting; each getter returns the given value or
// the declared default, parsed, or InvalidArgument naming the option.
//
//   absl::StatusOr<MetricOptionParser> parser =
//       MetricOptionParser::Create(info, options);
//   absl::StatusOr<bool> enable_chroma = parser->GetBool("enable_chroma");

#ifndef EXACTQ_ENGINE_METRICS_METRIC_OPTIONS_H_
#define EXACTQ_ENGINE_METRICS_METRIC_OPTIONS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/metrics/metric.h"

namespace exactq {

class MetricOptionParser {
 public:
  // InvalidArgument naming the first given option that `info` does not declare.
  static absl::StatusOr<MetricOptionParser> Create(const MetricInfo& info, const MetricOptions& given);

  // "true"/"false" (also "1"/"0"), any case.
  absl::StatusOr<bool> GetBool(absl::string_view name) const;
  // A finite decimal number.
  absl::StatusOr<double> GetDouble(absl::string_view name) const;
  absl::StatusOr<int64_t> GetInt(absl::string_view name) const;

 private:
  MetricOptionParser(const MetricInfo& info, const MetricOptions& given) : info_(info), given_(given) {}
  // The given text, else the declared default; Internal for an undeclared name (a bug
  // in the metric, not in the request).
  absl::StatusOr<std::string> Text(absl::string_view name) const;
  absl::Status BadValue(absl::string_view name, absl::string_view text, absl::string_view expected) const;

  // Copies: a few short strings, and no lifetime rules for callers.
  MetricInfo info_;
  MetricOptions given_;
};

}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_METRIC_OPTIONS_H_
