#include "server/server_metrics.h"

namespace exactq::server {

namespace {
// From 100 us (a small frame's compute) to 30 s (SSIMULACRA2 at 8K on a CPU).
std::vector<double> LatencyBounds() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
          0.1,    0.25,    0.5,    1.0,   2.5,    5.0,   10.0, 30.0};
}
}  // namespace

ServerMetrics::ServerMetrics(const std::vector<std::string>& metric_names,
                             const std::string& version)
    : frames_scored(registry.AddCounter("exactq_frames_scored_total",
                                        "Frames scored, by metric and backend.",
                                        {"metric", "backend"})),
      bytes_received(registry.AddCounter("exactq_received_bytes_total",
                                         "Picture bytes received from clients.")),
      bytes_scored(registry.AddCounter("exactq_scored_bytes_total",
                                       "Picture bytes (reference + distorted) of scored frames, by metric and backend.",
                                       {"metric", "backend"})),
      streams_started(registry.AddCounter("exactq_streams_started_total",
                                          "Scoring streams and unary calls accepted.")),
      fallbacks(registry.AddCounter("exactq_fallbacks_total",
                                    "Frames that auto placement sent to the CPU, by reason.",
                                    {"reason"})),
      errors(registry.AddCounter("exactq_errors_total",
                                 "Calls that ended with an error, by gRPC status code.",
                                 {"code"})),
      active_streams(registry.AddGauge("exactq_active_streams", "Streams being served.")),
      queue_depth(registry.AddGauge("exactq_queue_depth",
                                    "Frames fully received and waiting for a backend.")),
      frames_in_flight(registry.AddGauge("exactq_frames_in_flight",
                                         "Frames received in part or waiting or being scored.")),
      device_memory_used(registry.AddGauge("exactq_device_memory_used_bytes",
                                           "Device memory held by the engine, per GPU.",
                                           {"device"})),
      configured_gpus(registry.AddGauge("exactq_configured_gpus",
                                        "GPUs this process was given (--gpus, CUDA_VISIBLE_DEVICES).")),
      usable_gpus(registry.AddGauge("exactq_usable_gpus",
                                    "GPUs taking new streams: not cooling down after a failure, not lost.")),
      pinned_frame_bytes(registry.AddGauge(
          "exactq_pinned_frame_bytes",
          "Page-locked host memory held for pictures (in use and kept for reuse), --pinned_frame_bytes at most.")),
      pinned_frame_fallbacks(registry.AddGauge(
          "exactq_pinned_frame_fallbacks",
          "Picture buffers allocated in ordinary memory because the page-locked limit was reached or "
          "page-locking failed, since start.")),
      build_info(registry.AddGauge("exactq_build_info", "The server's version; always 1.",
                                   {"version"})),
      stage_seconds(registry.AddHistogram(
          "exactq_frame_stage_seconds",
          "Per-frame stage latency: received, queued, host_to_device, compute, "
          "device_to_host, total.",
          {"stage"}, LatencyBounds())) {
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
  for (const char* code : {"INVALID_ARGUMENT", "RESOURCE_EXHAUSTED", "UNAVAILABLE",
                           "CANCELLED", "DEADLINE_EXCEEDED", "INTERNAL"}) {
    errors.At({code});
  }
  active_streams.At({});
  queue_depth.At({});
  frames_in_flight.At({});
  configured_gpus.At({});
  usable_gpus.At({});
  pinned_frame_bytes.At({});
  pinned_frame_fallbacks.At({});
  build_info.At({version}).Set(1.0);
  for (const char* stage : {"received", "queued", "host_to_device", "compute",
                            "device_to_host", "total"}) {
    stage_seconds.At({stage});
  }
}

}  // namespace exactq::server
