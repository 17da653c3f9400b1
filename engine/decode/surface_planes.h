// The GPU decoder's surface turned into planar wire-layout planes on the device: the
// kernel behind DeviceSurfaces (device_surfaces.h), following SurfaceLayout
// (av_frame_conversion.h), which CopyGpuSurface follows on the host. Plain samples are
// moved, never computed: the planes hold the surface's exact samples.
#ifndef EXACTQ_ENGINE_DECODE_SURFACE_PLANES_H_
#define EXACTQ_ENGINE_DECODE_SURFACE_PLANES_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace exactq::decode::internal {

struct SurfacePlaneCopy {
  const uint8_t* source;  // device: the surface plane's first row
  size_t source_pitch;    // bytes between the surface's rows
  int step;               // samples between consecutive output samples (2: interleaved chroma)
  int offset;             // samples before the first output sample of a row
  int shift;              // 16-bit words: right shift to the sample's depth (0 at 8 bits)
  uint8_t* destination;   // device: packed rows of `width` samples
  int width;
  int height;
  int bytes_per_sample;  // 1 or 2
};

// Enqueues on `stream` the copies of `count` planes; the OR of every bit the shifts drop
// is ORed into *dropped (device memory; a nonzero value means the surface does not hold
// samples of the depth asked for).
cudaError_t EnqueueSurfacePlanes(const SurfacePlaneCopy* planes, int count, unsigned* dropped, cudaStream_t stream);

}  // namespace exactq::decode::internal

#endif  // EXACTQ_ENGINE_DECODE_SURFACE_PLANES_H_
