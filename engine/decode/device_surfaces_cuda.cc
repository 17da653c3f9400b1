// DeviceSurfaces with CUDA: the surface converted by surface_planes.cu on the stream the
// decoder maps its surfaces on, into a DevicePicturePool's pictures.
#include <cuda_runtime_api.h>

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/decode/av_frame_conversion.h"
#include "engine/decode/device_surfaces.h"
#include "engine/decode/surface_planes.h"
#include "engine/platform/cuda_status.h"
#include "engine/platform/device_picture_pool.h"
#include "engine/platform/host_wait_event.h"

extern "C" {
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_cuda.h>
}

namespace exactq::decode::internal {
namespace {

constexpr char kWho[] = "DeviceSurfaces";

}  // namespace

struct DeviceSurfaces::State {
  int gpu = 0;
  std::shared_ptr<DevicePicturePool> pool;  // for the current geometry
  unsigned* dropped = nullptr;              // device: the bits the shifts dropped
  unsigned* dropped_host = nullptr;         // pinned
  cudaEvent_t done = nullptr;
};

bool DeviceSurfaces::Available() { return true; }

DeviceSurfaces::DeviceSurfaces(int gpu) : state_(std::make_unique<State>()) { state_->gpu = gpu; }

DeviceSurfaces::~DeviceSurfaces() {
  cudaSetDevice(state_->gpu);
  if (state_->done != nullptr) {
    cudaEventSynchronize(state_->done);
    cudaEventDestroy(state_->done);
  }
  cudaFree(state_->dropped);
  cudaFreeHost(state_->dropped_host);
}

absl::StatusOr<std::shared_ptr<const DevicePicture>> DeviceSurfaces::Convert(const AVFrame& surface,
                                                                             const FrameGeometry& geometry) {
  if (surface.format != AV_PIX_FMT_CUDA || surface.hw_frames_ctx == nullptr) {
    return absl::InternalError(absl::StrCat(kWho, ": not a CUDA surface"));
  }
  const auto* frames = reinterpret_cast<const AVHWFramesContext*>(surface.hw_frames_ctx->data);
  const auto* cuda = static_cast<const AVCUDADeviceContext*>(frames->device_ctx->hwctx);
  const auto stream = reinterpret_cast<cudaStream_t>(cuda->stream);
  absl::StatusOr<std::vector<SurfacePlane>> layout = SurfaceLayout(frames->sw_format, geometry);
  if (!layout.ok()) return layout.status();

  State& st = *state_;
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaSetDevice(st.gpu));
  if (st.done == nullptr) {
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, CreateHostWaitEvent(&st.done));
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaMalloc(reinterpret_cast<void**>(&st.dropped), sizeof(unsigned)));
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaMallocHost(reinterpret_cast<void**>(&st.dropped_host), sizeof(unsigned)));
  }
  if (st.pool == nullptr || st.pool->bytes() != geometry.frame_bytes()) {
    st.pool = DevicePicturePool::Create(st.gpu, geometry.frame_bytes());
  }
  absl::StatusOr<std::shared_ptr<DevicePicturePool::Picture>> picture = st.pool->Take();
  if (!picture.ok()) return picture.status();
  uint8_t* const buffer = (*picture)->mutable_bytes();

  std::vector<SurfacePlaneCopy> copies;
  for (int p = 0; p < geometry.plane_count(); ++p) {
    const SurfacePlane& plane = (*layout)[p];
    copies.push_back({surface.data[plane.surface_plane], static_cast<size_t>(surface.linesize[plane.surface_plane]),
                      plane.step, plane.offset, plane.shift, buffer + geometry.plane_offset(p), geometry.plane_width(p),
                      geometry.plane_height(p), geometry.bytes_per_sample()});
  }
  // The surface was mapped on `stream`: the copies follow it there. Waiting for them here
  // hands out a complete picture, and the decoder may release the surface.
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaMemsetAsync(st.dropped, 0, sizeof(unsigned), stream));
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho,
                              EnqueueSurfacePlanes(copies.data(), static_cast<int>(copies.size()), st.dropped, stream));
  EXACTQ_RETURN_IF_CUDA_ERROR(
      kWho, cudaMemcpyAsync(st.dropped_host, st.dropped, sizeof(unsigned), cudaMemcpyDeviceToHost, stream));
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventRecord(st.done, stream));
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventSynchronize(st.done));
  if (*st.dropped_host != 0) return SurfaceBitsError(frames->sw_format, geometry.format.bit_depth);
  return std::shared_ptr<const DevicePicture>(*std::move(picture));
}

}  // namespace exactq::decode::internal
