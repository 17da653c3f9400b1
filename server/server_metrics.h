// The series the server exports on /metrics, by name. Every labelled series that a
// dashboard or alert reads is created at zero on start, so quiet counters exist.
#ifndef EXACTQ_SERVER_SERVER_METRICS_H_
#define EXACTQ_SERVER_SERVER_METRICS_H_

#include <string>
#include <vector>

#include "server/prometheus_registry.h"

namespace exactq::server {

struct ServerMetrics {
  // metric_names: every metric the engine offers; backends: "cpu", "cuda".
  ServerMetrics(const std::vector<std::string>& metric_names, const std::string& version);

  PrometheusRegistry registry;
  Family<CounterSeries>& frames_scored;     // {metric, backend}
  Family<CounterSeries>& bytes_received;    // picture bytes received
  Family<CounterSeries>& bytes_scored;      // {metric, backend}: picture bytes of scored frames
  Family<CounterSeries>& streams_started;
  Family<CounterSeries>& fallbacks;         // {reason}
  Family<CounterSeries>& errors;            // {code}: gRPC status code names
  Family<GaugeSeries>& active_streams;
  Family<GaugeSeries>& queue_depth;         // frames received, not yet scored
  Family<GaugeSeries>& frames_in_flight;
  Family<GaugeSeries>& device_memory_used;  // {device}
  Family<GaugeSeries>& configured_gpus;     // GPUs given to the process
  Family<GaugeSeries>& usable_gpus;         // of those, the ones that take new streams
  Family<GaugeSeries>& pinned_frame_bytes;      // page-locked host bytes for pictures (read at scrape)
  Family<GaugeSeries>& pinned_frame_fallbacks;  // pictures that got ordinary memory instead, so far
  Family<GaugeSeries>& build_info;          // {version}
  Family<HistogramSeries>& stage_seconds;   // {stage}
};

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_SERVER_METRICS_H_
