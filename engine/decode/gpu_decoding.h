// FFmpeg's CUDA hardware decoding (NVDEC through the driver's libnvcuvid), set up on a
// decoder context: the one place in engine/decode that names FFmpeg's hardware types.
// Internal to engine/decode; VideoDecoder decides when to use it (DecoderOptions).
#ifndef EXACTQ_ENGINE_DECODE_GPU_DECODING_H_
#define EXACTQ_ENGINE_DECODE_GPU_DECODING_H_

#include <cstdint>

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

// What one decoder on FFmpeg's NVDEC path holds in device memory at most, for the
// admission: a fixed part for the decoder's own state (kNvdecDecoderBytes), two surfaces
// per decode surface FFmpeg created it with (`decode_surfaces`: the codec's reference
// pictures, FFmpeg's spares and one per frame thread; NVDEC keeps as many output
// surfaces, and each picture FFmpeg hands out is a CUDA frame of its own), one surface
// per picture the caller holds (`pictures_held`), and when pictures stay on the device a
// planar copy of each held picture (`planar_picture_bytes`; 0 when they are
// downloaded). Surfaces are NV12 (P016 above 8 bits: `bytes_per_sample` 2) at the coded
// size, rows padded to 512 bytes and the height to 64. The parts are fitted to what
// decoders took on an H200 (gpu_decoder_memory_test, bench/decode/README.md): H.264,
// HEVC and VP9 at 8 and 10 bits took 0.45 to 0.77 of this.
inline constexpr uint64_t kNvdecDecoderBytes = uint64_t{128} << 20;
uint64_t GpuDecoderDeviceBytes(int coded_width, int coded_height, int bytes_per_sample, int decode_surfaces,
                               int pictures_held, uint64_t planar_picture_bytes);

}  // namespace exactq::decode::internal

#endif  // EXACTQ_ENGINE_DECODE_GPU_DECODING_H_
