// The device pipeline of the `ssimulacra2` CUDA twin (ssimulacra2_cuda.h): every step of
// ssimulacra2_reference.cc on the device, in its operations and order, for one frame pair
// whose raw planes are already in device memory.
//
// Plain C++ (no device code), so the host class compiled by g++ can include it. The
// kernels (ssimulacra2_cuda_pipeline.cu, nvcc --fmad=false) run the bodies of
// ssimulacra2_cuda_kernels.h, which call the shared functions of ssimulacra2_math.h:
//   YuvToLinear   one thread per pixel of scale 0 and image: nearest chroma straight from
//                 the raw planes, YuvToLinearRgb (B.2-B.3) with the uploaded EOTF table;
//   per scale s (ScaleCount of the frame, at most 6):
//     Downsample  (s > 0) one thread per output sample, image and channel (B.5);
//     Xyb         one thread per pixel and image (B.4);
//     BlurRows    one thread per (row, channel, kind): the horizontal recursive Gaussian
//                 of mu1, mu2, s11, s22, s12 (kinds 0..4; the products rounded once on
//                 load, as the reference's Multiply) walked along the row in the
//                 reference's order (B.6);
//     BlurColumns one thread per (column, channel, kind): the vertical pass down the
//                 column (row-major planes: a warp's loads are coalesced);
//     per channel: Terms  one thread per pixel: the six fp64 terms of B.8 written as six
//                 planes of doubles; then six exact ordered sums (engine/exact,
//                 EnqueueOrderedSum over the planes, raster order), each with its own
//                 workspace;
//   Gather        one thread per sum: the 108 results (0 for scales not computed) into one
//                 array of doubles, FrameSums::sums order.
// Nothing is copied to the host here; the caller copies the 864-byte result once.
#ifndef EXACTQ_ENGINE_METRICS_SSIMULACRA2_CUDA_SSIMULACRA2_CUDA_PIPELINE_H_
#define EXACTQ_ENGINE_METRICS_SSIMULACRA2_CUDA_SSIMULACRA2_CUDA_PIPELINE_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "engine/metrics/ssimulacra2/cuda/ssimulacra2_cuda_kernels.h"

namespace exactq {
namespace ssimulacra2 {
namespace gpu {

// Device scratch for a frame of this size: the linear-RGB pyramid (ping-pong), XYB, the
// blur planes, six term planes and 108 ordered-sum workspaces. About 290 bytes per pixel.
size_t ScratchBytes(int width, int height);

// What must be done once per process and device before the pipeline can be captured in
// a CUDA graph (the walk's shared-memory attribute). Idempotent.
cudaError_t PreparePipeline();

// Enqueues the whole frame on `stream`; f.sums holds the 108 sums when the stream gets
// there. Returns the first launch error.
cudaError_t EnqueuePipeline(const DeviceFrame& f, cudaStream_t stream);

}  // namespace gpu
}  // namespace ssimulacra2
}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_SSIMULACRA2_CUDA_SSIMULACRA2_CUDA_PIPELINE_H_
