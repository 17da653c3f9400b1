// Translation between exactq.v1 messages and engine types. Every error names the
// request field it is about ("header.geometry.width: ...").
#ifndef EXACTQ_SERVER_WIRE_CONVERSION_H_
#define EXACTQ_SERVER_WIRE_CONVERSION_H_

#include <vector>

#include "absl/status/statusor.h"
#include "engine/format/frame_geometry.h"
#include "engine/runtime/frame_scorer.h"
#include "exactq/v1/exactq.pb.h"
#include "server/server_config.h"

namespace exactq::server {

struct ScoringRequest {
  FrameGeometry geometry;
  std::vector<MetricSpec> metrics;
  BackendPreference backend = BackendPreference::kAuto;
};

// Validates a header against the server's limits; INVALID_ARGUMENT for malformed
// values, RESOURCE_EXHAUSTED for values over a limit.
absl::StatusOr<ScoringRequest> FromWire(const v1::StreamHeader& header, const ServerLimits& limits);

v1::Backend ToWire(Backend backend);
void ToWire(const ScoredFrame& scored, v1::FrameResult* result);
void ToWire(const FrameScorer& scorer, const char* server_version, v1::Provenance* provenance);

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_WIRE_CONVERSION_H_
