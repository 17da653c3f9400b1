// FFmpeg's own CUDA context (a build without the CUDA runtime: pictures are downloaded).
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/decode/cuda_decode_device.h"

extern "C" {
#include <libavutil/error.h>
#include <libavutil/hwcontext.h>
}

namespace exactq::decode::internal {

absl::StatusOr<AVBufferRef*> CreateCudaDecodeDevice(int gpu) {
  AVBufferRef* device = nullptr;
  const int e = av_hwdevice_ctx_create(&device, AV_HWDEVICE_TYPE_CUDA, std::to_string(gpu).c_str(), nullptr, 0);
  if (e < 0) {
    char text[AV_ERROR_MAX_STRING_SIZE] = {};
    av_strerror(e, text, sizeof text);
    return absl::FailedPreconditionError(absl::StrCat("no CUDA device ", gpu, " for the GPU decoder: ", text));
  }
  return device;
}

}  // namespace exactq::decode::internal
