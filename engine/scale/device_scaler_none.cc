// DeviceScaler without CUDA: never available (pictures are scaled on the host).
#include "engine/scale/device_scaler.h"

namespace exactq::scale {

struct DeviceScaler::State {};

bool DeviceScaler::Available() { return false; }

absl::StatusOr<std::unique_ptr<DeviceScaler>> DeviceScaler::Create(int, const FrameGeometry&, const FrameGeometry&) {
  return absl::UnimplementedError("this build has no CUDA: pictures are scaled on the host");
}

DeviceScaler::DeviceScaler(std::unique_ptr<State> state) : state_(std::move(state)) {}
DeviceScaler::~DeviceScaler() = default;
int DeviceScaler::device() const { return -1; }

absl::StatusOr<std::shared_ptr<const DevicePicture>> DeviceScaler::Scale(const DevicePicture&) {
  return absl::UnimplementedError("this build has no CUDA");
}

}  // namespace exactq::scale
