// PictureUploader: host pictures copied once into DevicePictures on one GPU, for a
// picture that many scorers on that GPU read (a ladder's reference: one upload, not one
// per rendition). Built with CUDA only (picture_uploader_cuda.cc); without, Available()
// is false.
#ifndef EXACTQ_ENGINE_PLATFORM_PICTURE_UPLOADER_H_
#define EXACTQ_ENGINE_PLATFORM_PICTURE_UPLOADER_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "engine/format/device_picture.h"

namespace exactq {

class PictureUploader {
 public:
  static bool Available();
  // Pictures of `picture_bytes` bytes to GPU `device`; device errors name the CUDA call.
  static absl::StatusOr<std::unique_ptr<PictureUploader>> Create(int device, size_t picture_bytes);
  ~PictureUploader();
  PictureUploader(const PictureUploader&) = delete;
  PictureUploader& operator=(const PictureUploader&) = delete;

  // A device picture holding `host`'s picture_bytes bytes, complete on return. For one
  // thread at a time.
  absl::StatusOr<std::shared_ptr<const DevicePicture>> Upload(const uint8_t* host);

 private:
  struct State;
  explicit PictureUploader(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace exactq

#endif  // EXACTQ_ENGINE_PLATFORM_PICTURE_UPLOADER_H_
