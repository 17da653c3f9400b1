// DeviceScaler: a picture that lives on a GPU (Frame::device_picture, the GPU decoder's)
// scaled there by the exact scaler's CUDA twin, to the samples scale::BicubicScaler
// gives on the host, byte for byte, into a picture on the same GPU. Built with CUDA only
// (cuda/device_scaler_cuda.cc); without, Available() is false and callers scale on the
// host.
//
//   absl::StatusOr<std::unique_ptr<DeviceScaler>> scaler = DeviceScaler::Create(gpu, rendition, reference);
//   absl::StatusOr<std::shared_ptr<const DevicePicture>> scaled = (*scaler)->Scale(*frame.device_picture());
#ifndef EXACTQ_ENGINE_SCALE_DEVICE_SCALER_H_
#define EXACTQ_ENGINE_SCALE_DEVICE_SCALER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "engine/format/device_picture.h"
#include "engine/format/frame_geometry.h"

namespace exactq::scale {

class DeviceScaler {
 public:
  static bool Available();
  // InvalidArgument as BicubicScaler::Create; device errors name the CUDA call.
  static absl::StatusOr<std::unique_ptr<DeviceScaler>> Create(int device, const FrameGeometry& source,
                                                              const FrameGeometry& target);
  ~DeviceScaler();
  DeviceScaler(const DeviceScaler&) = delete;
  DeviceScaler& operator=(const DeviceScaler&) = delete;

  int device() const;
  // The source picture (source geometry, on this scaler's device) scaled to the target
  // geometry, complete on return. For one thread at a time.
  absl::StatusOr<std::shared_ptr<const DevicePicture>> Scale(const DevicePicture& source);

 private:
  struct State;
  explicit DeviceScaler(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace exactq::scale

#endif  // EXACTQ_ENGINE_SCALE_DEVICE_SCALER_H_
