#include "server/wire_conversion.h"

#include "absl/strings/str_cat.h"
#include "server/client_text.h"

namespace exactq::server {

namespace {

absl::StatusOr<ChromaLayout> LayoutFromWire(v1::ChromaLayout layout) {
  switch (layout) {
    case v1::CHROMA_400:
      return ChromaLayout::k400;
    case v1::CHROMA_420:
      return ChromaLayout::k420;
    case v1::CHROMA_422:
      return ChromaLayout::k422;
    case v1::CHROMA_444:
      return ChromaLayout::k444;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("header.geometry.format.chroma: must be CHROMA_400, CHROMA_420, CHROMA_422 or "
                       "CHROMA_444, got ",
                       static_cast<int>(layout)));
  }
}

}  // namespace

absl::StatusOr<ScoringRequest> FromWire(const v1::StreamHeader& header, const ServerLimits& limits) {
  ScoringRequest request;
  if (header.job_id().size() > kMaxJobIdBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("header.job_id: ", header.job_id().size(), " bytes exceeds the limit of ", kMaxJobIdBytes));
  }
  if (!header.has_geometry()) {
    return absl::InvalidArgumentError("header.geometry: missing");
  }
  const v1::Geometry& g = header.geometry();
  if (g.width() == 0) return absl::InvalidArgumentError("header.geometry.width: must be >= 1");
  if (g.height() == 0) return absl::InvalidArgumentError("header.geometry.height: must be >= 1");
  if (g.width() > limits.max_width) {
    return absl::ResourceExhaustedError(
        absl::StrCat("header.geometry.width: ", g.width(), " exceeds the limit max_width=", limits.max_width));
  }
  if (g.height() > limits.max_height) {
    return absl::ResourceExhaustedError(
        absl::StrCat("header.geometry.height: ", g.height(), " exceeds the limit max_height=", limits.max_height));
  }
  const v1::PixelFormat& f = g.format();
  absl::StatusOr<ChromaLayout> layout = LayoutFromWire(f.chroma());
  if (!layout.ok()) return layout.status();
  if (f.bit_depth() < static_cast<uint32_t>(kMinBitDepth) || f.bit_depth() > static_cast<uint32_t>(kMaxBitDepth)) {
    return absl::InvalidArgumentError(
        absl::StrCat("header.geometry.format.bit_depth: must be 8 to 16, got ", f.bit_depth()));
  }
  request.geometry.width = static_cast<int>(g.width());
  request.geometry.height = static_cast<int>(g.height());
  request.geometry.format.layout = *layout;
  request.geometry.format.bit_depth = static_cast<int>(f.bit_depth());
  if (absl::Status s = ValidateGeometry(request.geometry); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("header.geometry: ", s.message()));
  }
  if (header.metrics_size() == 0) {
    return absl::InvalidArgumentError("header.metrics: at least one metric is required");
  }
  for (int i = 0; i < header.metrics_size(); ++i) {
    const v1::MetricRequest& m = header.metrics(i);
    if (m.name().empty()) {
      return absl::InvalidArgumentError(absl::StrCat("header.metrics[", i, "].name: empty"));
    }
    if (m.name().size() > kMaxMetricNameBytes) {
      return absl::InvalidArgumentError(absl::StrCat("header.metrics[", i, "].name: ", m.name().size(),
                                                     " bytes exceeds the limit of ", kMaxMetricNameBytes));
    }
    MetricSpec spec;
    spec.name = m.name();
    for (const auto& [key, value] : m.options()) spec.options[key] = value;
    request.metrics.push_back(std::move(spec));
  }
  switch (header.backend()) {
    case v1::BACKEND_AUTO:
      request.backend = BackendPreference::kAuto;
      break;
    case v1::BACKEND_CUDA:
      request.backend = BackendPreference::kCuda;
      break;
    case v1::BACKEND_CPU:
      request.backend = BackendPreference::kCpu;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("header.backend: unknown value ", static_cast<int>(header.backend())));
  }
  return request;
}

v1::Backend ToWire(Backend backend) { return backend == Backend::kCuda ? v1::BACKEND_CUDA : v1::BACKEND_CPU; }

void ToWire(const ScoredFrame& scored, v1::FrameResult* result) {
  for (const NamedScore& s : scored.scores) {
    v1::Score* score = result->add_scores();
    score->set_name(s.name);
    score->set_value(s.value);
  }
  result->set_backend(ToWire(scored.backend));
  result->set_device(scored.device);
  result->set_fallback_reason(scored.fallback_reason);
  v1::FrameTiming* timing = result->mutable_timing();
  timing->set_host_to_device_ns(scored.durations.host_to_device.count());
  timing->set_compute_ns(scored.durations.compute.count());
  timing->set_device_to_host_ns(scored.durations.device_to_host.count());
  timing->set_host_to_device_bytes(scored.host_to_device_bytes);
}

void ToWire(const FrameScorer& scorer, const char* server_version, v1::Provenance* provenance) {
  provenance->set_server_version(server_version);
  for (const MetricIdentity& id : scorer.metric_identities()) {
    v1::MetricVersion* version = provenance->add_metrics();
    version->set_name(id.name);
    version->set_definition_version(id.definition_version);
  }
}

}  // namespace exactq::server
