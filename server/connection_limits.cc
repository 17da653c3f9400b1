#include "server/connection_limits.h"

#include <algorithm>
#include <climits>

#include <grpcpp/resource_quota.h>

namespace exactq::server {

uint64_t ReceiveLimitBytes(const ServerLimits& limits) {
  const uint64_t unary = 2 * limits.max_unary_picture_bytes + (1 << 20);
  return std::min<uint64_t>(std::max(limits.max_message_bytes, unary), INT_MAX);
}

uint32_t DefaultServerThreads(const ServerLimits& limits) { return 2 * limits.max_streams + 32; }

void ApplyConnectionLimits(const ServerConfig& config, grpc::ServerBuilder* builder) {
  const ServerLimits& limits = config.limits;
  builder->SetMaxReceiveMessageSize(static_cast<int>(ReceiveLimitBytes(limits)));
  builder->SetCompressionAlgorithmSupportStatus(GRPC_COMPRESS_DEFLATE, false);
  builder->SetCompressionAlgorithmSupportStatus(GRPC_COMPRESS_GZIP, false);
  builder->AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, static_cast<int>(limits.max_streams_per_connection));
  builder->AddChannelArgument(GRPC_ARG_MAX_METADATA_SIZE, kMaxHeaderListBytes);
  grpc::ResourceQuota quota("exactqd");
  quota.SetMaxThreads(
      static_cast<int>(limits.max_server_threads != 0 ? limits.max_server_threads : DefaultServerThreads(limits)));
  builder->SetResourceQuota(quota);

  builder->AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, config.keepalive_time_seconds * 1000);
  builder->AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, config.keepalive_timeout_seconds * 1000);
  builder->AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  // Clients may ping every 10 s without being told off (GOAWAY too_many_pings).
  builder->AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 10000);
  builder->AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS, config.max_connection_age_seconds * 1000);
  builder->AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS,
                              config.max_connection_age_grace_seconds > 0
                                  ? config.max_connection_age_grace_seconds * 1000
                                  : INT_MAX);  // gRPC's "infinite"
}

}  // namespace exactq::server
