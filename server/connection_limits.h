// The gRPC transport's own limits, set on the server builder: what a hostile or
// careless client can make the library itself hold before a call reaches the service.
//
//   - Receive size: the larger of --max_message_bytes and what ScorePair needs (two
//     pictures of --max_unary_picture_bytes and a header), so the unary limit that
//     Capabilities advertises is the one that works.
//   - Compression: requests compressed with gzip or deflate are refused with
//     UNIMPLEMENTED before any message is inflated (gRPC inflates a message before any
//     size limit applies: 1 GiB of zeros arrives as 1 MB). Answers are never compressed
//     either; pictures do not compress on the way in and scores are small on the way out.
//   - Streams per connection (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS), a cap on the
//     server's threads (a resource quota; calls beyond it get RESOURCE_EXHAUSTED), and
//     the header list size (SETTINGS_MAX_HEADER_LIST_SIZE).
//   - Connection age: GOAWAY after --max_connection_age_seconds; the calls in flight
//     then get --max_connection_age_grace_seconds, 0 meaning as long as they need.
#ifndef EXACTQ_SERVER_CONNECTION_LIMITS_H_
#define EXACTQ_SERVER_CONNECTION_LIMITS_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>

#include "server/server_config.h"

namespace exactq::server {

// Largest header list (all metadata of one call) the server accepts, bytes.
inline constexpr int kMaxHeaderListBytes = 16 << 10;

// The receive limit for every call: max(max_message_bytes, 2 * max_unary_picture_bytes
// + 1 MiB for the header and framing).
uint64_t ReceiveLimitBytes(const ServerLimits& limits);

// Server threads when --max_server_threads is 0: two per admitted call and 32 more for
// health, capabilities and gRPC's pollers.
uint32_t DefaultServerThreads(const ServerLimits& limits);

void ApplyConnectionLimits(const ServerConfig& config, grpc::ServerBuilder* builder);

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_CONNECTION_LIMITS_H_
