// DeviceSurfaces: one decoder's GPU surfaces turned into DevicePictures (planar, the
// wire layout) on the same GPU, so a picture the GPU decodes never comes to the host
// when it is scored there. Built with CUDA only (device_surfaces_cuda.cc); without,
// Available() is false and VideoDecoder downloads the surfaces as before.
//
// The surface must come from a decoder opened on SharedCudaDevice(gpu): in a CUDA build
// that device is the CUDA runtime's own (primary) context with a stream of its own
// (cuda_decode_device.h), so the engine's kernels read the surfaces where they are.
// Internal to engine/decode.
#ifndef EXACTQ_ENGINE_DECODE_DEVICE_SURFACES_H_
#define EXACTQ_ENGINE_DECODE_DEVICE_SURFACES_H_

#include <memory>

#include "absl/status/statusor.h"
#include "engine/format/device_picture.h"
#include "engine/format/frame_geometry.h"

extern "C" {
#include <libavutil/frame.h>
}

namespace exactq::decode::internal {

class DeviceSurfaces {
 public:
  // Whether this build converts surfaces on the device.
  static bool Available();

  explicit DeviceSurfaces(int gpu);
  ~DeviceSurfaces();
  DeviceSurfaces(const DeviceSurfaces&) = delete;
  DeviceSurfaces& operator=(const DeviceSurfaces&) = delete;

  // The surface's picture (an AV_PIX_FMT_CUDA frame of the decoder) in `geometry`'s
  // planar layout, complete on return, in device memory from a pool that grows to the
  // pictures held at once. Unimplemented for a surface format SurfaceLayout refuses,
  // Internal for samples with bits below their depth (as CopyGpuSurface), CUDA errors
  // by name.
  absl::StatusOr<std::shared_ptr<const DevicePicture>> Convert(const AVFrame& surface, const FrameGeometry& geometry);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace exactq::decode::internal

#endif  // EXACTQ_ENGINE_DECODE_DEVICE_SURFACES_H_
