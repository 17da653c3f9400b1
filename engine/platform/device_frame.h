// DeviceFramePair: a reference/distorted pair resident on one device, the unit every
// GPU metric reads (engine/metrics/gpu_metric.h) and DeviceFrameBuffer uploads. Plain
// C++: CUDA handles travel as opaque pointers.
#ifndef EXACTQ_ENGINE_PLATFORM_DEVICE_FRAME_H_
#define EXACTQ_ENGINE_PLATFORM_DEVICE_FRAME_H_

#include <cstdint>

#include "engine/format/frame_geometry.h"

namespace exactq {

// A cudaStream_t or cudaEvent_t, without the CUDA header.
using GpuStreamHandle = void*;
using GpuEventHandle = void*;

// A reference/distorted pair resident on one device. Each picture's first `planes`
// planes are packed as in Frame's bytes (plane 0 at offset 0, geometry.plane_offset(p)
// for the others), so plane p starts at reference + geometry.plane_offset(p).
struct DeviceFramePair {
  int device = 0;
  FrameGeometry geometry;
  int planes = 0;                      // leading planes present on the device (1: luma only)
  const uint8_t* reference = nullptr;  // device memory
  const uint8_t* distorted = nullptr;  // device memory
  // The previous frame's reference, its first plane only (luma), for metrics that read it
  // (GpuMetricFactory::reads_previous_reference); null for a stream's first frame or when
  // no metric of the request reads it.
  const uint8_t* previous_reference = nullptr;
  // Completes when both pictures are on the device. Work on the stream given to Enqueue
  // is ordered after it already; a twin that runs on streams of its own makes them wait
  // for this event first.
  GpuEventHandle ready = nullptr;
};

}  // namespace exactq

#endif  // EXACTQ_ENGINE_PLATFORM_DEVICE_FRAME_H_
