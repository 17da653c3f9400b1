// FFmpeg's CUDA hardware decoding (NVDEC through the driver's libnvcuvid), set up on a
// decoder context: the one place in engine/decode that names FFmpeg's hardware types.
// Internal to engine/decode; VideoDecoder decides when to use it (DecoderOptions).
#ifndef EXACTQ_ENGINE_DECODE_GPU_DECODING_H_
#define EXACTQ_ENGINE_DECODE_GPU_DECODING_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

extern "C" {
#include <libavcodec/avcodec.h>
}

namespace exactq::decode::internal {

// The decoder that FFmpeg's CUDA decoding runs through for `id` (the native decoder;
// for AV1 the native one, which decodes only with hardware), or null when FFmpeg has
// none with a CUDA configuration.
const AVCodec* CudaCapableDecoder(AVCodecID id);

// The CUDA device context of GPU `gpu` that every decoder of the process shares (made on
// first use, kept). FailedPrecondition naming the cause when it cannot be opened (no
// driver, no GPU, the ordinal out of range).
absl::StatusOr<AVBufferRef*> SharedCudaDevice(int gpu);

// Gives `context` (not yet opened) a reference to `device` and asks for GPU surfaces,
// with the software format as the fallback FFmpeg takes when the hardware refuses a
// stream's profile.
absl::Status AttachCudaDecoding(AVCodecContext* context, AVBufferRef* device);

// True for a picture that lives in GPU memory (a surface to download).
bool IsGpuSurface(const AVFrame& picture);

}  // namespace exactq::decode::internal

#endif  // EXACTQ_ENGINE_DECODE_GPU_DECODING_H_
