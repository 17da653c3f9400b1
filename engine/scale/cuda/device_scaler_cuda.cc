// DeviceScaler with CUDA: BicubicScalerCuda on a stream of its own, into a
// DevicePicturePool's pictures.
#include <cuda_runtime_api.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/platform/cuda_status.h"
#include "engine/platform/device_picture_pool.h"
#include "engine/scale/cuda/bicubic_scaler_cuda.h"
#include "engine/scale/device_scaler.h"

namespace exactq::scale {
namespace {

constexpr char kWho[] = "DeviceScaler";

}  // namespace

struct DeviceScaler::State {
  int device = 0;
  std::unique_ptr<BicubicScalerCuda> twin;
  std::shared_ptr<DevicePicturePool> pool;
  cudaStream_t stream = nullptr;
  cudaEvent_t done = nullptr;

  ~State() {
    cudaSetDevice(device);
    if (stream != nullptr) cudaStreamSynchronize(stream);
    if (done != nullptr) cudaEventDestroy(done);
    if (stream != nullptr) cudaStreamDestroy(stream);
  }
};

bool DeviceScaler::Available() { return true; }

absl::StatusOr<std::unique_ptr<DeviceScaler>> DeviceScaler::Create(int device, const FrameGeometry& source,
                                                                   const FrameGeometry& target) {
  auto state = std::make_unique<State>();
  state->device = device;
  absl::StatusOr<std::unique_ptr<BicubicScalerCuda>> twin = BicubicScalerCuda::Create(device, source, target);
  if (!twin.ok()) return twin.status();
  state->twin = *std::move(twin);
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaSetDevice(device));
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaStreamCreateWithFlags(&state->stream, cudaStreamNonBlocking));
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventCreateWithFlags(&state->done, cudaEventDisableTiming));
  state->pool = DevicePicturePool::Create(device, target.frame_bytes());
  return std::unique_ptr<DeviceScaler>(new DeviceScaler(std::move(state)));
}

DeviceScaler::DeviceScaler(std::unique_ptr<State> state) : state_(std::move(state)) {}
DeviceScaler::~DeviceScaler() = default;
int DeviceScaler::device() const { return state_->device; }

absl::StatusOr<std::shared_ptr<const DevicePicture>> DeviceScaler::Scale(const DevicePicture& source) {
  State& st = *state_;
  if (source.device() != st.device) {
    return absl::InvalidArgumentError(
        absl::StrCat(kWho, ": a picture on cuda:", source.device(), " for a scaler on cuda:", st.device));
  }
  absl::StatusOr<std::shared_ptr<DevicePicturePool::Picture>> picture = st.pool->Take();
  if (!picture.ok()) return picture.status();
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaSetDevice(st.device));
  if (absl::Status s = st.twin->Enqueue(source.bytes(), (*picture)->mutable_bytes(), st.stream); !s.ok()) return s;
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventRecord(st.done, st.stream));
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventSynchronize(st.done));
  return std::shared_ptr<const DevicePicture>(*std::move(picture));
}

}  // namespace exactq::scale
