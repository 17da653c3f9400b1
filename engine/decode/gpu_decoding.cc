#include "engine/decode/gpu_decoding.h"

#include <map>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "engine/decode/cuda_decode_device.h"

extern "C" {
#include <libavutil/error.h>
#include <libavutil/hwcontext.h>
#include <libavutil/pixdesc.h>
}

namespace exactq::decode::internal {
namespace {

bool HasCudaConfig(const AVCodec* codec) {
  for (int i = 0;; ++i) {
    const AVCodecHWConfig* config = avcodec_get_hw_config(codec, i);
    if (config == nullptr) return false;
    if (config->device_type == AV_HWDEVICE_TYPE_CUDA && (config->methods & AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX) &&
        config->pix_fmt == AV_PIX_FMT_CUDA) {
      return true;
    }
  }
}

// CUDA surfaces when offered; else the first software format (the hardware refused the
// stream's profile, and FFmpeg decodes it in software: VideoDecoder notices).
AVPixelFormat PickCudaSurfaces(AVCodecContext*, const AVPixelFormat* offered) {
  for (const AVPixelFormat* f = offered; *f != AV_PIX_FMT_NONE; ++f) {
    if (*f == AV_PIX_FMT_CUDA) return *f;
  }
  for (const AVPixelFormat* f = offered; *f != AV_PIX_FMT_NONE; ++f) {
    const AVPixFmtDescriptor* desc = av_pix_fmt_desc_get(*f);
    if (desc != nullptr && (desc->flags & AV_PIX_FMT_FLAG_HWACCEL) == 0) return *f;
  }
  return AV_PIX_FMT_NONE;
}

}  // namespace

const AVCodec* CudaCapableDecoder(AVCodecID id) {
  const AVCodec* codec = avcodec_find_decoder(id);
  if (id == AV_CODEC_ID_AV1) codec = avcodec_find_decoder_by_name("av1");
  return codec != nullptr && HasCudaConfig(codec) ? codec : nullptr;
}

// One CUDA device context per GPU for every decoder of the process (a context costs
// hundreds of MB of device memory), made on first use and kept (cuda_decode_device.h).
absl::StatusOr<AVBufferRef*> SharedCudaDevice(int gpu) {
  static std::mutex mutex;
  static std::map<int, AVBufferRef*>* devices = new std::map<int, AVBufferRef*>();
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = devices->find(gpu); it != devices->end()) return it->second;
  absl::StatusOr<AVBufferRef*> device = CreateCudaDecodeDevice(gpu);
  if (!device.ok()) return device.status();
  (*devices)[gpu] = *device;
  return *device;
}

absl::Status AttachCudaDecoding(AVCodecContext* context, AVBufferRef* device) {
  context->hw_device_ctx = av_buffer_ref(device);  // the context owns this reference
  if (context->hw_device_ctx == nullptr) return absl::ResourceExhaustedError("out of memory for the GPU decoder");
  context->get_format = PickCudaSurfaces;
  return absl::OkStatus();
}

bool IsGpuSurface(const AVFrame& picture) { return picture.format == AV_PIX_FMT_CUDA; }

uint64_t GpuDecoderDeviceBytes(int coded_width, int coded_height, int bytes_per_sample, int decode_surfaces,
                               int pictures_held, uint64_t planar_picture_bytes) {
  auto round_up = [](uint64_t n, uint64_t to) { return (n + to - 1) / to * to; };
  const uint64_t pitch = round_up(static_cast<uint64_t>(coded_width) * bytes_per_sample, 512);
  const uint64_t rows = round_up(static_cast<uint64_t>(coded_height), 64);
  const uint64_t surface = pitch * rows * 3 / 2;  // luma and the interleaved half-height chroma
  const uint64_t surfaces = 2 * static_cast<uint64_t>(decode_surfaces) + static_cast<uint64_t>(pictures_held);
  return kNvdecDecoderBytes + surfaces * surface + static_cast<uint64_t>(pictures_held) * planar_picture_bytes;
}

}  // namespace exactq::decode::internal
