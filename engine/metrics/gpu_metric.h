// GpuMetric: what a metric's CUDA twin gives the runtime, so that the runtime can run
// any metric on a GPU without knowing its name.
//
// The runtime owns one DeviceFramePair per frame in flight: the pair's planes uploaded
// once (or produced on the device by a decoder), read by every metric of the request,
// never written by them. Each metric registers a GpuMetricFactory beside its CPU
// factory (registry.cc); the runtime sizes the device frame to the largest
// planes_read() of the request, admits the sum of device_bytes(), and per frame calls
// Enqueue on every twin before it calls Collect on any, so the metrics of one frame run
// on the device together.
//
//   const GpuMetricFactory* factory = FindGpuMetricFactory("ssim");  // registry.h
//   absl::StatusOr<std::unique_ptr<GpuMetric>> twin = factory->create(device, geometry, options);
//   (*twin)->Enqueue(frame, stream);                 // returns at once
//   absl::StatusOr<FrameScores> scores = (*twin)->Collect();  // the CPU metric's bits
//
// Plain C++: CUDA handles travel as opaque pointers, so code without CUDA (the registry,
// the runtime of a build without CUDA) includes this header too.
#ifndef EXACTQ_ENGINE_METRICS_GPU_METRIC_H_
#define EXACTQ_ENGINE_METRICS_GPU_METRIC_H_

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/format/frame_geometry.h"
#include "engine/metrics/metric.h"
#include "engine/platform/device_frame.h"

namespace exactq {

class GpuMetric {
 public:
  virtual ~GpuMetric() = default;

  // Enqueues one frame's work and returns without waiting for the device. The frame has
  // the geometry given at creation and at least planes_read() planes, and stays
  // unchanged until Collect returns. One frame at a time: Collect before the next.
  virtual absl::Status Enqueue(const DeviceFramePair& frame, GpuStreamHandle stream) = 0;

  // Waits for the frame enqueued last and returns its outputs: what the CPU metric's
  // ScoreInStream returns for the frame, in its order, with its bits (for a metric with
  // a sequence stage, its per-frame outputs: vmaf's features; the stage, shared by both
  // backends, makes the answer). After an error the twin is retired (the frame is scored
  // on the CPU), so a failed Collect leaves nothing on the device.
  virtual absl::StatusOr<FrameScores> Collect() = 0;
};

struct GpuMetricFactory {
  // Leading planes of each picture the twin reads (1: luma only; plane_count(): all).
  int (*planes_read)(const FrameGeometry& geometry, const MetricOptions& options);
  // Device memory one twin holds for frames of this geometry, the device frame not
  // counted: what the runtime admits against its limit before it creates the twin.
  uint64_t (*device_bytes)(const FrameGeometry& geometry, const MetricOptions& options);
  // INVALID_ARGUMENT for bad options, UNIMPLEMENTED when the twin cannot take this
  // input (the runtime then scores on the CPU), FAILED_PRECONDITION / INTERNAL /
  // RESOURCE_EXHAUSTED from the device, naming the CUDA call.
  absl::StatusOr<std::unique_ptr<GpuMetric>> (*create)(int device, const FrameGeometry& geometry,
                                                       const MetricOptions& options);
  // Whether the twin reads the previous frame's reference (DeviceFramePair's
  // previous_reference): the runtime then uploads its first plane with each pair.
  bool reads_previous_reference = false;
  // Whether the twin wants the pair at the same device addresses every frame (it replays
  // a CUDA graph captured with them): the runtime then copies pictures made on the
  // device (a GPU decoder's) into its own device frame, device to device, rather than
  // handing over their addresses, which change from frame to frame.
  bool wants_fixed_addresses = false;
};

}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_GPU_METRIC_H_
