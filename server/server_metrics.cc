#include "server/server_metrics.h"

#include <prometheus/text_serializer.h>

namespace exactq::server {

namespace {
// From 100 us (a small frame's compute) to 30 s (SSIMULACRA2 at 8K on a CPU).
std::vector<double> LatencyBounds() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0};
}

prometheus::Family<prometheus::Counter>& Counter(prometheus::Registry& r, const char* name, const char* help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(r);
}
prometheus::Family<prometheus::Gauge>& Gauge(prometheus::Registry& r, const char* name, const char* help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(r);
}
prometheus::Family<prometheus::Histogram>& Histogram(prometheus::Registry& r, const char* name, const char* help) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(r);
}
}  // namespace

ServerMetrics::ServerMetrics(const std::vector<std::string>& metric_names, const BuildInfo& build)
    : frames_scored(Counter(*registry, "exactq_frames_scored_total", "Frames scored, by metric and backend."),
                    {"metric", "backend"}),
      bytes_received(Counter(*registry, "exactq_received_bytes_total", "Picture bytes received from clients."), {}),
      bytes_scored(Counter(*registry, "exactq_scored_bytes_total",
                           "Picture bytes (reference + distorted) of scored frames, by metric and backend."),
                   {"metric", "backend"}),
      streams_started(Counter(*registry, "exactq_streams_started_total", "Scoring streams and unary calls accepted."),
                      {}),
      fallbacks(Counter(*registry, "exactq_fallbacks_total", "Frames that auto placement sent to the CPU, by reason."),
                {"reason"}),
      errors(
          Counter(*registry, "exactq_errors_total", "Calls that ended with an error, by gRPC method and status code."),
          {"method", "code"}),
      pinned_frame_fallbacks(Counter(*registry, "exactq_pinned_frame_fallbacks_total",
                                     "Picture buffers allocated in ordinary memory because the page-locked limit was "
                                     "reached or page-locking failed."),
                             {}),
      active_streams(Gauge(*registry, "exactq_active_streams", "Streams being served."), {}),
      queue_depth(Gauge(*registry, "exactq_queue_depth", "Frames fully received and waiting for a backend."), {}),
      frames_in_flight(
          Gauge(*registry, "exactq_frames_in_flight", "Frames received in part or waiting or being scored."), {}),
      device_memory_used(
          Gauge(*registry, "exactq_device_memory_used_bytes", "Device memory held by the engine, per GPU."),
          {"device"}),
      configured_gpus(
          Gauge(*registry, "exactq_configured_gpus", "GPUs this process was given (--gpus, CUDA_VISIBLE_DEVICES)."),
          {}),
      usable_gpus(Gauge(*registry, "exactq_usable_gpus",
                        "GPUs taking new streams: not cooling down after a failure, not lost."),
                  {}),
      pinned_frame_bytes(Gauge(*registry, "exactq_pinned_frame_bytes",
                               "Page-locked host memory held for pictures (in use and kept for "
                               "reuse), --pinned_frame_bytes at most."),
                         {}),
      build_info(Gauge(*registry, "exactq_build_info",
                       "The server's version, source revision and whether CUDA is compiled in; "
                       "always 1."),
                 {"version", "revision", "cuda"}),
      stage_seconds(Histogram(*registry, "exactq_frame_stage_seconds",
                              "Per-frame stage latency: received, queued, host_to_device, compute, "
                              "device_to_host (a frame's whole time is exactq_frame_seconds)."),
                    {"stage"}, LatencyBounds()),
      frame_seconds(Histogram(*registry, "exactq_frame_seconds",
                              "A frame's whole time in the server, from its first byte to its answer."),
                    {}, LatencyBounds()) {
  for (const auto& metric : metric_names) {
    for (const char* backend : {"cpu", "cuda"}) {
      frames_scored.At({metric, backend});
      bytes_scored.At({metric, backend});
    }
  }
  bytes_received.At({});
  streams_started.At({});
  for (const char* reason : {"no_gpu", "unsupported_input", "out_of_memory", "device_error"}) {
    fallbacks.At({reason});
  }
  for (const char* method : kScoredMethods) {
    for (const char* code :
         {"INVALID_ARGUMENT", "RESOURCE_EXHAUSTED", "UNAVAILABLE", "CANCELLED", "DEADLINE_EXCEEDED", "INTERNAL"}) {
      errors.At({method, code});
    }
  }
  pinned_frame_fallbacks.At({});
  active_streams.At({});
  queue_depth.At({});
  frames_in_flight.At({});
  configured_gpus.At({});
  usable_gpus.At({});
  pinned_frame_bytes.At({});
  build_info.At({build.version, build.revision, build.cuda}).Set(1.0);
  for (const char* stage : {"received", "queued", "host_to_device", "compute", "device_to_host"}) {
    stage_seconds.At({stage});
  }
  frame_seconds.At({});
}

std::string ServerMetrics::Render() const { return prometheus::TextSerializer().Serialize(registry->Collect()); }

void ServerMetrics::SyncCounter(CounterSeries& counter, double cumulative) {
  std::lock_guard<std::mutex> lock(sync_mutex_);
  const double delta = cumulative - counter.Value();
  if (delta > 0) counter.Increment(delta);
}

}  // namespace exactq::server
