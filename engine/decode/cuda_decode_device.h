// The CUDA device context FFmpeg's decoders of one GPU run in (SharedCudaDevice makes one
// per GPU and keeps it). With CUDA built in (cuda_decode_device_cuda.cc) it wraps the
// CUDA runtime's own context of the GPU, the one the metrics' kernels run in, and a
// stream of its own, so decoded surfaces are device memory the engine can read
// (DeviceSurfaces); without (cuda_decode_device_none.cc) FFmpeg makes a context of its
// own and pictures are downloaded. Internal to engine/decode.
#ifndef EXACTQ_ENGINE_DECODE_CUDA_DECODE_DEVICE_H_
#define EXACTQ_ENGINE_DECODE_CUDA_DECODE_DEVICE_H_

#include "absl/status/statusor.h"

struct AVBufferRef;

namespace exactq::decode::internal {

// A new AVHWDeviceContext reference of type CUDA for GPU `gpu`; FailedPrecondition
// naming the cause when there is none (no driver, no GPU, the ordinal out of range).
absl::StatusOr<AVBufferRef*> CreateCudaDecodeDevice(int gpu);

}  // namespace exactq::decode::internal

#endif  // EXACTQ_ENGINE_DECODE_CUDA_DECODE_DEVICE_H_
