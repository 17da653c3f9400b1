// DeviceSurfaces without CUDA: never available (VideoDecoder downloads the surfaces).
#include "engine/decode/device_surfaces.h"

namespace exactq::decode::internal {

struct DeviceSurfaces::State {};

bool DeviceSurfaces::Available() { return false; }
DeviceSurfaces::DeviceSurfaces(int) {}
DeviceSurfaces::~DeviceSurfaces() = default;

absl::StatusOr<std::shared_ptr<const DevicePicture>> DeviceSurfaces::Convert(const AVFrame&, const FrameGeometry&) {
  return absl::UnimplementedError("this build has no CUDA: GPU decoder pictures are downloaded");
}

}  // namespace exactq::decode::internal
