// PictureUploader without CUDA: never available.
#include "engine/platform/picture_uploader.h"

namespace exactq {

struct PictureUploader::State {};

bool PictureUploader::Available() { return false; }
absl::StatusOr<std::unique_ptr<PictureUploader>> PictureUploader::Create(int, size_t) {
  return absl::UnimplementedError("this build has no CUDA");
}
PictureUploader::PictureUploader(std::unique_ptr<State> state) : state_(std::move(state)) {}
PictureUploader::~PictureUploader() = default;
absl::StatusOr<std::shared_ptr<const DevicePicture>> PictureUploader::Upload(const uint8_t*) {
  return absl::UnimplementedError("this build has no CUDA");
}

}  // namespace exactq
