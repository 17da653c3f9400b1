// The CUDA runtime's primary context of the GPU, handed to FFmpeg as the decoders'
// context, with a non-blocking stream of its own (the legacy default stream would wait
// for the engine's work). FFmpeg does not destroy a context it did not create.
//
// Tried and dropped: FFmpeg's `primary_ctx=1` option. It refuses a primary context that
// is already active with other flags than blocking sync (ENOTSUP, seen inside exactqd
// on the H200), and the metrics' runtime has made it active with the default flags.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include "absl/strings/str_cat.h"
#include "engine/decode/cuda_decode_device.h"

extern "C" {
#include <libavutil/error.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_cuda.h>
}

namespace exactq::decode::internal {
namespace {

absl::Status NoDevice(int gpu, const std::string& why) {
  return absl::FailedPreconditionError(absl::StrCat("no CUDA device ", gpu, " for the GPU decoder: ", why));
}

absl::Status FromCuda(int gpu, cudaError_t e, const char* call) {
  if (e == cudaSuccess) return absl::OkStatus();
  return NoDevice(gpu, absl::StrCat(call, ": ", cudaGetErrorName(e), " (", cudaGetErrorString(e), ")"));
}

}  // namespace

absl::StatusOr<AVBufferRef*> CreateCudaDecodeDevice(int gpu) {
  // The runtime's primary context, made current on this thread; the driver's
  // cuCtxGetCurrent names it (found through the runtime: nothing links libcuda).
  if (absl::Status s = FromCuda(gpu, cudaSetDevice(gpu), "cudaSetDevice"); !s.ok()) return s;
  if (absl::Status s = FromCuda(gpu, cudaFree(nullptr), "cudaFree"); !s.ok()) return s;
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (absl::Status s =
          FromCuda(gpu, cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &entry, 4000, cudaEnableDefault, &found),
                   "cudaGetDriverEntryPointByVersion(cuCtxGetCurrent)");
      !s.ok()) {
    return s;
  }
  if (found != cudaDriverEntryPointSuccess || entry == nullptr)
    return NoDevice(gpu, "the driver has no cuCtxGetCurrent");
  CUcontext context = nullptr;
  if (const CUresult r = reinterpret_cast<CUresult (*)(CUcontext*)>(entry)(&context);
      r != CUDA_SUCCESS || context == nullptr) {
    return NoDevice(gpu, absl::StrCat("cuCtxGetCurrent: error ", static_cast<int>(r)));
  }
  cudaStream_t stream = nullptr;
  if (absl::Status s =
          FromCuda(gpu, cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
      !s.ok()) {
    return s;
  }
  AVBufferRef* device = av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_CUDA);
  if (device == nullptr) {
    cudaStreamDestroy(stream);
    return absl::ResourceExhaustedError("out of memory for the GPU decoder's device");
  }
  auto* cuda = static_cast<AVCUDADeviceContext*>(reinterpret_cast<AVHWDeviceContext*>(device->data)->hwctx);
  cuda->cuda_ctx = context;
  cuda->stream = reinterpret_cast<CUstream>(stream);
  if (const int e = av_hwdevice_ctx_init(device); e < 0) {
    av_buffer_unref(&device);
    cudaStreamDestroy(stream);
    char text[AV_ERROR_MAX_STRING_SIZE] = {};
    av_strerror(e, text, sizeof text);
    return NoDevice(gpu, absl::StrCat("av_hwdevice_ctx_init: ", text));
  }
  return device;
}

}  // namespace exactq::decode::internal
