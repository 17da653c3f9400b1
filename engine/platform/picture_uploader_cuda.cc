// PictureUploader with CUDA: a copy on a stream of its own into a DevicePicturePool's
// pictures (pageable pictures are staged by the driver).
#include <cuda_runtime_api.h>

#include <utility>

#include "engine/platform/cuda_status.h"
#include "engine/platform/device_picture_pool.h"
#include "engine/platform/picture_uploader.h"

namespace exactq {
namespace {

constexpr char kWho[] = "PictureUploader";

}  // namespace

struct PictureUploader::State {
  int device = 0;
  std::shared_ptr<DevicePicturePool> pool;
  cudaStream_t stream = nullptr;
  cudaEvent_t done = nullptr;

  ~State() {
    cudaSetDevice(device);
    if (stream != nullptr) cudaStreamSynchronize(stream);
    if (done != nullptr) cudaEventDestroy(done);
    if (stream != nullptr) cudaStreamDestroy(stream);
  }
};

bool PictureUploader::Available() { return true; }

absl::StatusOr<std::unique_ptr<PictureUploader>> PictureUploader::Create(int device, size_t picture_bytes) {
  auto state = std::make_unique<State>();
  state->device = device;
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaSetDevice(device));
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaStreamCreateWithFlags(&state->stream, cudaStreamNonBlocking));
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventCreateWithFlags(&state->done, cudaEventDisableTiming));
  state->pool = DevicePicturePool::Create(device, picture_bytes);
  return std::unique_ptr<PictureUploader>(new PictureUploader(std::move(state)));
}

PictureUploader::PictureUploader(std::unique_ptr<State> state) : state_(std::move(state)) {}
PictureUploader::~PictureUploader() = default;

absl::StatusOr<std::shared_ptr<const DevicePicture>> PictureUploader::Upload(const uint8_t* host) {
  State& st = *state_;
  absl::StatusOr<std::shared_ptr<DevicePicturePool::Picture>> picture = st.pool->Take();
  if (!picture.ok()) return picture.status();
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaSetDevice(st.device));
  EXACTQ_RETURN_IF_CUDA_ERROR(
      kWho, cudaMemcpyAsync((*picture)->mutable_bytes(), host, st.pool->bytes(), cudaMemcpyHostToDevice, st.stream));
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventRecord(st.done, st.stream));
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventSynchronize(st.done));
  return std::shared_ptr<const DevicePicture>(*std::move(picture));
}

}  // namespace exactq
