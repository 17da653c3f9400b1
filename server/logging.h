// Server logging: spdlog to stderr as text, or as one JSON object per line for log
// collectors (--log_format=json), at a chosen level.
#ifndef EXACTQ_SERVER_LOGGING_H_
#define EXACTQ_SERVER_LOGGING_H_

#include <string>

#include "absl/status/status.h"

namespace exactq::server {

// format: "text" or "json"; level: trace, debug, info, warn, error, critical, off.
absl::Status ConfigureLogging(const std::string& format, const std::string& level);

// `text` as the inside of a JSON string (quotes, backslashes, control characters escaped).
std::string JsonEscape(const std::string& text);

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_LOGGING_H_
