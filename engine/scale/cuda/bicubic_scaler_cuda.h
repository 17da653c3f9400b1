// The exact scaler's CUDA twin: a picture resized on the device to the samples
// scale::ScaleBicubic returns, byte for byte (engine/scale/bicubic_scaler.h is the
// definition). The taps are the definition's, computed on the host by scale::BicubicTaps
// (binary64, as the CPU computes them) and copied to the device once per geometry pair;
// each output sample is the definition's integer sum over its clamped source samples
// (int64: exact in any order), rounded once and clamped. Plain C++ header: CUDA handles
// travel as opaque pointers.
//
//   absl::StatusOr<std::unique_ptr<BicubicScalerCuda>> scaler =
//       BicubicScalerCuda::Create(/*device=*/0, rendition_geometry, reference_geometry);
//   (*scaler)->Enqueue(device_rendition, device_scaled, stream);   // pictures on the device
//   (*scaler)->Scale(rendition, &scaled);                          // host pictures, synchronous
#ifndef EXACTQ_ENGINE_SCALE_CUDA_BICUBIC_SCALER_CUDA_H_
#define EXACTQ_ENGINE_SCALE_CUDA_BICUBIC_SCALER_CUDA_H_

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/format/frame.h"
#include "engine/format/frame_geometry.h"
#include "engine/platform/device_frame.h"

namespace exactq {
namespace scale {

class BicubicScalerCuda {
 public:
  // InvalidArgument for an invalid geometry or different pixel formats (as the CPU);
  // device errors name the CUDA call.
  static absl::StatusOr<std::unique_ptr<BicubicScalerCuda>> Create(int device, const FrameGeometry& source,
                                                                   const FrameGeometry& target);
  ~BicubicScalerCuda();
  BicubicScalerCuda(const BicubicScalerCuda&) = delete;
  BicubicScalerCuda& operator=(const BicubicScalerCuda&) = delete;

  const FrameGeometry& source_geometry() const { return source_; }
  const FrameGeometry& target_geometry() const { return target_; }
  // Device memory this scaler holds (its taps), and what Scale adds for its pictures.
  uint64_t device_bytes() const { return taps_bytes_; }

  // Enqueues the scaling of a device picture (source geometry, Frame's byte layout) into
  // device memory at `target` (target geometry, target_geometry().frame_bytes()) on
  // `stream`; returns without waiting.
  absl::Status Enqueue(const uint8_t* source, uint8_t* target, GpuStreamHandle stream);

  // Host pictures: upload, scale, download, synchronously (tests and benchmarks). *target
  // takes target_geometry().
  absl::Status Scale(const Frame& source, Frame* target);

 private:
  struct PlaneTaps {
    int h_taps = 0;
    int v_taps = 0;
    const int32_t* h_first = nullptr;   // device: target plane width entries
    const int32_t* h_weight = nullptr;  // device: width * h_taps
    const int32_t* v_first = nullptr;   // device: target plane height entries
    const int32_t* v_weight = nullptr;  // device: height * v_taps
  };

  BicubicScalerCuda(int device, const FrameGeometry& source, const FrameGeometry& target)
      : device_(device), source_(source), target_(target) {}

  int device_;
  FrameGeometry source_;
  FrameGeometry target_;
  PlaneTaps planes_[3];
  void* taps_ = nullptr;  // one device allocation for every plane's taps
  uint64_t taps_bytes_ = 0;
  // Scale's device pictures and stream, made on its first call.
  uint8_t* scratch_ = nullptr;
  void* stream_ = nullptr;
};

}  // namespace scale
}  // namespace exactq

#endif  // EXACTQ_ENGINE_SCALE_CUDA_BICUBIC_SCALER_CUDA_H_
