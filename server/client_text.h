// Text a client chose (job_id, strings echoed in error messages) as it may appear in a
// log line: bytes outside printable ASCII escaped (a newline becomes \n, so a client
// cannot forge a log line), and at most a bounded prefix kept, so that no client
// string makes a line longer than a few KiB.
//
//   spdlog::info("stream start job_id={}", ClientText(header.job_id()));
#ifndef EXACTQ_SERVER_CLIENT_TEXT_H_
#define EXACTQ_SERVER_CLIENT_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace exactq::server {

// The longest job_id a stream or unary call may carry (INVALID_ARGUMENT beyond).
inline constexpr size_t kMaxJobIdBytes = 256;
// The longest metric name (every real one is a few bytes; a longer one is refused
// before it is echoed in an error).
inline constexpr size_t kMaxMetricNameBytes = 64;

// Bytes of a client's string kept in a log line (escaped, up to four times as long).
inline constexpr size_t kLoggedClientBytes = 512;

std::string ClientText(std::string_view text, size_t max_bytes = kLoggedClientBytes);

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_CLIENT_TEXT_H_
