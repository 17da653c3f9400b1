// PictureUploader with CUDA: a copy on the maker's stream into its pool's pictures
// (pageable pictures are staged by the driver).
#include <cuda_runtime_api.h>

#include <utility>

#include "engine/platform/cuda_status.h"
#include "engine/platform/device_picture_maker.h"
#include "engine/platform/picture_uploader.h"

namespace exactq {
namespace {

constexpr char kWho[] = "PictureUploader";

}  // namespace

struct PictureUploader::State {
  std::unique_ptr<DevicePictureMaker> maker;
};

bool PictureUploader::Available() { return true; }

absl::StatusOr<std::unique_ptr<PictureUploader>> PictureUploader::Create(int device, size_t picture_bytes) {
  auto state = std::make_unique<State>();
  absl::StatusOr<std::unique_ptr<DevicePictureMaker>> maker = DevicePictureMaker::Create(device, picture_bytes, kWho);
  if (!maker.ok()) return maker.status();
  state->maker = *std::move(maker);
  return std::unique_ptr<PictureUploader>(new PictureUploader(std::move(state)));
}

PictureUploader::PictureUploader(std::unique_ptr<State> state) : state_(std::move(state)) {}
PictureUploader::~PictureUploader() = default;

absl::StatusOr<std::shared_ptr<const DevicePicture>> PictureUploader::Upload(const uint8_t* host) {
  const size_t bytes = state_->maker->picture_bytes();
  return state_->maker->Make([&](uint8_t* picture, GpuStreamHandle stream) {
    return CudaStatus(cudaMemcpyAsync(picture, host, bytes, cudaMemcpyHostToDevice, static_cast<cudaStream_t>(stream)),
                      kWho, "cudaMemcpyAsync");
  });
}

}  // namespace exactq
