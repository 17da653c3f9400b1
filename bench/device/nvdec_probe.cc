// Asks the driver whether the GPU's video decoder answers in this container: loads
// libcuda and libnvcuvid the way FFmpeg's CUDA decoders do, queries the decode
// capabilities for the codecs the server decodes, and creates (then destroys) one 4K
// HEVC decoder. Prints every CUresult by name, so a refusal is evidence, not a guess.
//
//   nvdec_probe            # exit 0: the decoder answers; 1: it does not (the output says why)
#include <dlfcn.h>
#include <ffnvcodec/dynlink_loader.h>

#include <cstdio>
#include <cstring>

namespace {

const char* ErrorName(CudaFunctions* cu, CUresult r) {
  const char* s = nullptr;
  if (cu->cuGetErrorName != nullptr && cu->cuGetErrorName(r, &s) == CUDA_SUCCESS && s != nullptr) return s;
  return "unknown";
}

struct Query {
  const char* name;
  cudaVideoCodec codec;
  unsigned bit_depth_minus8;
};

}  // namespace

int main() {
  CudaFunctions* cu = nullptr;
  CuvidFunctions* cuvid = nullptr;
  if (cuda_load_functions(&cu, nullptr) != 0) {
    std::printf("libcuda.so.1: cannot load (%s)\n", dlerror());
    return 1;
  }
  if (cuvid_load_functions(&cuvid, nullptr) != 0) {
    const char* why = dlerror();
    std::printf("libnvcuvid.so.1: cannot load (%s)\n", why != nullptr ? why : "a symbol is missing");
    return 1;
  }
  std::printf("libcuda.so.1 and libnvcuvid.so.1 loaded\n");
  CUresult r = cu->cuInit(0);
  std::printf("cuInit: %s\n", ErrorName(cu, r));
  if (r != CUDA_SUCCESS) return 1;
  CUdevice device;
  CUcontext context;
  if ((r = cu->cuDeviceGet(&device, 0)) != CUDA_SUCCESS || (r = cu->cuCtxCreate(&context, 0, device)) != CUDA_SUCCESS) {
    std::printf("context: %s\n", ErrorName(cu, r));
    return 1;
  }

  const Query queries[] = {{"h264 8-bit", cudaVideoCodec_H264, 0},  {"hevc 8-bit", cudaVideoCodec_HEVC, 0},
                           {"hevc 10-bit", cudaVideoCodec_HEVC, 2}, {"av1 8-bit", cudaVideoCodec_AV1, 0},
                           {"av1 10-bit", cudaVideoCodec_AV1, 2},   {"vp9 8-bit", cudaVideoCodec_VP9, 0},
                           {"vp9 10-bit", cudaVideoCodec_VP9, 2}};
  bool any_supported = false;
  for (const Query& q : queries) {
    CUVIDDECODECAPS caps;
    std::memset(&caps, 0, sizeof(caps));
    caps.eCodecType = q.codec;
    caps.eChromaFormat = cudaVideoChromaFormat_420;
    caps.nBitDepthMinus8 = q.bit_depth_minus8;
    r = cuvid->cuvidGetDecoderCaps(&caps);
    std::printf("caps %-12s %s supported=%d nvdecs=%d max=%ux%u output_formats=0x%x\n", q.name, ErrorName(cu, r),
                caps.bIsSupported, caps.nNumNVDECs, caps.nMaxWidth, caps.nMaxHeight, caps.nOutputFormatMask);
    any_supported = any_supported || (r == CUDA_SUCCESS && caps.bIsSupported);
  }

  CUVIDDECODECREATEINFO info;
  std::memset(&info, 0, sizeof(info));
  info.CodecType = cudaVideoCodec_HEVC;
  info.ChromaFormat = cudaVideoChromaFormat_420;
  info.OutputFormat = cudaVideoSurfaceFormat_NV12;
  info.ulWidth = info.ulMaxWidth = info.ulTargetWidth = 3840;
  info.ulHeight = info.ulMaxHeight = info.ulTargetHeight = 2160;
  info.ulNumDecodeSurfaces = 8;
  info.ulNumOutputSurfaces = 1;
  info.DeinterlaceMode = cudaVideoDeinterlaceMode_Weave;
  info.ulCreationFlags = cudaVideoCreate_PreferCUVID;
  CUvideodecoder decoder = nullptr;
  r = cuvid->cuvidCreateDecoder(&decoder, &info);
  std::printf("create 4K hevc decoder: %s\n", ErrorName(cu, r));
  const bool created = r == CUDA_SUCCESS;
  if (created) cuvid->cuvidDestroyDecoder(decoder);
  cu->cuCtxDestroy(context);
  std::printf("verdict: the video decoder %s\n", created && any_supported ? "answers" : "does not answer");
  return created && any_supported ? 0 : 1;
}
