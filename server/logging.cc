#include "server/logging.h"

#include <memory>

#include "nlohmann/json.hpp"
#include "spdlog/pattern_formatter.h"
#include "spdlog/sinks/stdout_sinks.h"
#include "spdlog/spdlog.h"

namespace exactq::server {

namespace {

// %* in a pattern: the message, escaped for a JSON string.
class JsonMessageFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    const std::string escaped = JsonEscape(std::string(msg.payload.data(), msg.payload.size()));
    dest.append(escaped.data(), escaped.data() + escaped.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<JsonMessageFlag>(); }
};

}  // namespace

std::string JsonEscape(const std::string& text) {
  // nlohmann's string dump: quotes, backslashes and control characters escaped; bytes
  // that are not UTF-8 replaced by U+FFFD, so the line stays valid JSON. Without the quotes.
  const std::string quoted = nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return quoted.substr(1, quoted.size() - 2);
}

absl::Status ConfigureLogging(const std::string& format, const std::string& level) {
  auto logger = spdlog::get("exactqd");
  if (logger == nullptr) logger = spdlog::stderr_logger_mt("exactqd");
  spdlog::set_default_logger(logger);
  if (format == "json") {
    auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
    formatter->add_flag<JsonMessageFlag>('*').set_pattern(
        R"({"time":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","logger":"%n","message":"%*"})");
    spdlog::set_formatter(std::move(formatter));
  } else if (format == "text") {
    spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%f %^%l%$ %v");
  } else {
    return absl::InvalidArgumentError("--log_format must be text or json, got " + format);
  }
  const spdlog::level::level_enum parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off") {
    return absl::InvalidArgumentError("--log_level must be trace, debug, info, warn, error, critical or off, got " +
                                      level);
  }
  spdlog::set_level(parsed);
  return absl::OkStatus();
}

}  // namespace exactq::server
