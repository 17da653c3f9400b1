// DeviceScaler with CUDA: BicubicScalerCuda on the maker's stream, into its pool's
// pictures.
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/platform/device_picture_maker.h"
#include "engine/scale/cuda/bicubic_scaler_cuda.h"
#include "engine/scale/device_scaler.h"

namespace exactq::scale {
namespace {

constexpr char kWho[] = "DeviceScaler";

}  // namespace

struct DeviceScaler::State {
  std::unique_ptr<BicubicScalerCuda> twin;
  std::unique_ptr<DevicePictureMaker> maker;
};

bool DeviceScaler::Available() { return true; }

absl::StatusOr<std::unique_ptr<DeviceScaler>> DeviceScaler::Create(int device, const FrameGeometry& source,
                                                                   const FrameGeometry& target) {
  auto state = std::make_unique<State>();
  absl::StatusOr<std::unique_ptr<BicubicScalerCuda>> twin = BicubicScalerCuda::Create(device, source, target);
  if (!twin.ok()) return twin.status();
  state->twin = *std::move(twin);
  absl::StatusOr<std::unique_ptr<DevicePictureMaker>> maker =
      DevicePictureMaker::Create(device, target.frame_bytes(), kWho);
  if (!maker.ok()) return maker.status();
  state->maker = *std::move(maker);
  return std::unique_ptr<DeviceScaler>(new DeviceScaler(std::move(state)));
}

DeviceScaler::DeviceScaler(std::unique_ptr<State> state) : state_(std::move(state)) {}
DeviceScaler::~DeviceScaler() = default;
int DeviceScaler::device() const { return state_->maker->device(); }

absl::StatusOr<std::shared_ptr<const DevicePicture>> DeviceScaler::Scale(const DevicePicture& source) {
  State& st = *state_;
  if (source.device() != st.maker->device()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kWho, ": a picture on cuda:", source.device(), " for a scaler on cuda:", st.maker->device()));
  }
  return st.maker->Make(
      [&](uint8_t* picture, GpuStreamHandle stream) { return st.twin->Enqueue(source.bytes(), picture, stream); });
}

}  // namespace exactq::scale
