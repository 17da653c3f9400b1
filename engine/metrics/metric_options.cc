#include "engine/metrics/metric_options.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace exactq {

absl::StatusOr<MetricOptionParser> MetricOptionParser::Create(const MetricInfo& info, const MetricOptions& given) {
  for (const auto& [name, value] : given) {
    bool declared = false;
    for (const MetricOptionInfo& option : info.options) declared |= option.name == name;
    if (!declared) {
      std::string known = absl::StrJoin(
          info.options, ", ", [](std::string* out, const MetricOptionInfo& option) { out->append(option.name); });
      return absl::InvalidArgumentError(absl::StrCat("unknown option '", name, "' for metric '", info.name,
                                                     "' (known: ", known.empty() ? "none" : known, ")"));
    }
  }
  return MetricOptionParser(info, given);
}

absl::StatusOr<std::string> MetricOptionParser::Text(absl::string_view name) const {
  const auto given = given_.find(std::string(name));
  if (given != given_.end()) return given->second;
  for (const MetricOptionInfo& option : info_.options) {
    if (option.name == name) return option.default_value;
  }
  return absl::InternalError(absl::StrCat("metric '", info_.name, "' reads undeclared option '", name, "'"));
}

absl::Status MetricOptionParser::BadValue(absl::string_view name, absl::string_view text,
                                          absl::string_view expected) const {
  return absl::InvalidArgumentError(
      absl::StrCat("option '", name, "' of metric '", info_.name, "' is '", text, "'; expected ", expected));
}

absl::StatusOr<bool> MetricOptionParser::GetBool(absl::string_view name) const {
  absl::StatusOr<std::string> text = Text(name);
  if (!text.ok()) return text.status();
  const std::string lowered = absl::AsciiStrToLower(*text);
  if (lowered == "true" || lowered == "1") return true;
  if (lowered == "false" || lowered == "0") return false;
  return BadValue(name, *text, "true or false");
}

absl::StatusOr<double> MetricOptionParser::GetDouble(absl::string_view name) const {
  absl::StatusOr<std::string> text = Text(name);
  if (!text.ok()) return text.status();
  double value = 0.0;
  if (!absl::SimpleAtod(*text, &value) || !std::isfinite(value)) {
    return BadValue(name, *text, "a finite number");
  }
  return value;
}

absl::StatusOr<int64_t> MetricOptionParser::GetInt(absl::string_view name) const {
  absl::StatusOr<std::string> text = Text(name);
  if (!text.ok()) return text.status();
  int64_t value = 0;
  if (!absl::SimpleAtoi(*text, &value)) return BadValue(name, *text, "an integer");
  return value;
}

}  // namespace exactq
