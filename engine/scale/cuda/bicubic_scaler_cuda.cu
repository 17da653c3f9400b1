#include "engine/platform/copy_to_device.h"
#include "engine/scale/cuda/bicubic_scaler_cuda.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/platform/cuda_status.h"
#include "engine/scale/bicubic_scaler.h"

namespace exactq {
namespace scale {
namespace {

constexpr char kWho[] = "BicubicScalerCuda";

// One output sample per thread: the definition's sum over the clamped source window,
// then its one rounding and the clamp (bicubic_scaler.h).
template <class Sample>
__global__ void ScalePlaneKernel(const Sample* __restrict__ source, int source_width, int source_height,
                                 Sample* __restrict__ target, int width, int height,
                                 const int32_t* __restrict__ h_first, const int32_t* __restrict__ h_weight, int h_taps,
                                 const int32_t* __restrict__ v_first, const int32_t* __restrict__ v_weight, int v_taps,
                                 int64_t max_value) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  const int32_t* wh = h_weight + static_cast<size_t>(x) * h_taps;
  const int32_t* wv = v_weight + static_cast<size_t>(y) * v_taps;
  int64_t sum = 0;
  for (int k = 0; k < v_taps; ++k) {
    const int row = min(max(v_first[y] + k, 0), source_height - 1);
    const Sample* in = source + static_cast<size_t>(row) * source_width;
    int64_t across = 0;
    for (int j = 0; j < h_taps; ++j) {
      const int column = min(max(h_first[x] + j, 0), source_width - 1);
      across += static_cast<int64_t>(in[column]) * wh[j];
    }
    sum += across * wv[k];
  }
  // floor((sum + 2^(2 kTapBits - 1)) / 2^(2 kTapBits)), clamped to [0, max_value].
  const int64_t half_rounded = sum + (int64_t{1} << (2 * kTapBits - 1));
  int64_t value = half_rounded < 0 ? 0 : (half_rounded >> (2 * kTapBits));
  value = value > max_value ? max_value : value;
  target[static_cast<size_t>(y) * width + x] = static_cast<Sample>(value);
}

template <class Sample>
void LaunchPlane(const uint8_t* source, uint8_t* target, const FrameGeometry& from, const FrameGeometry& to, int plane,
                 int h_taps, const int32_t* h_first, const int32_t* h_weight, int v_taps, const int32_t* v_first,
                 const int32_t* v_weight, cudaStream_t stream) {
  const int width = to.plane_width(plane);
  const int height = to.plane_height(plane);
  const dim3 block(32, 8);
  const dim3 grid((width + block.x - 1) / block.x, (height + block.y - 1) / block.y);
  ScalePlaneKernel<Sample><<<grid, block, 0, stream>>>(
      reinterpret_cast<const Sample*>(source + from.plane_offset(plane)), from.plane_width(plane),
      from.plane_height(plane), reinterpret_cast<Sample*>(target + to.plane_offset(plane)), width, height, h_first,
      h_weight, h_taps, v_first, v_weight, v_taps, (int64_t{1} << from.format.bit_depth) - 1);
}

}  // namespace

absl::StatusOr<std::unique_ptr<BicubicScalerCuda>> BicubicScalerCuda::Create(int device, const FrameGeometry& source,
                                                                             const FrameGeometry& target) {
  if (absl::Status s = ValidateGeometry(source); !s.ok()) return s;
  if (absl::Status s = ValidateGeometry(target); !s.ok()) return s;
  if (!(source.format == target.format)) {
    return absl::InvalidArgumentError(absl::StrCat("scale: the source is ", GeometryDescription(source),
                                                   " but the target is ", GeometryDescription(target),
                                                   ": the pixel format must be the same"));
  }
  std::unique_ptr<BicubicScalerCuda> scaler(new BicubicScalerCuda(device, source, target));
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaSetDevice(device));
  // Every plane's taps in one host buffer: h_first, h_weight, v_first, v_weight per plane.
  std::vector<int32_t> host;
  size_t offsets[3][4] = {};
  for (int p = 0; p < source.plane_count(); ++p) {
    const AxisTaps h = BicubicTaps(source.plane_width(p), target.plane_width(p));
    const AxisTaps v = BicubicTaps(source.plane_height(p), target.plane_height(p));
    scaler->planes_[p].h_taps = h.taps;
    scaler->planes_[p].v_taps = v.taps;
    const std::vector<int32_t>* parts[4] = {&h.first, &h.weight, &v.first, &v.weight};
    for (int i = 0; i < 4; ++i) {
      offsets[p][i] = host.size();
      host.insert(host.end(), parts[i]->begin(), parts[i]->end());
    }
  }
  scaler->taps_bytes_ = host.size() * sizeof(int32_t);
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaMalloc(&scaler->taps_, scaler->taps_bytes_));
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, CopyToDeviceAndWait(scaler->taps_, host.data(), scaler->taps_bytes_));
  const int32_t* base = static_cast<const int32_t*>(scaler->taps_);
  for (int p = 0; p < source.plane_count(); ++p) {
    scaler->planes_[p].h_first = base + offsets[p][0];
    scaler->planes_[p].h_weight = base + offsets[p][1];
    scaler->planes_[p].v_first = base + offsets[p][2];
    scaler->planes_[p].v_weight = base + offsets[p][3];
  }
  return scaler;
}

BicubicScalerCuda::~BicubicScalerCuda() {
  cudaSetDevice(device_);
  if (stream_ != nullptr) cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
  cudaFree(scratch_);
  cudaFree(taps_);
}

absl::Status BicubicScalerCuda::Enqueue(const uint8_t* source, uint8_t* target, GpuStreamHandle stream) {
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  for (int p = 0; p < source_.plane_count(); ++p) {
    const PlaneTaps& t = planes_[p];
    if (source_.bytes_per_sample() == 1) {
      LaunchPlane<uint8_t>(source, target, source_, target_, p, t.h_taps, t.h_first, t.h_weight, t.v_taps, t.v_first,
                           t.v_weight, cuda_stream);
    } else {
      LaunchPlane<uint16_t>(source, target, source_, target_, p, t.h_taps, t.h_first, t.h_weight, t.v_taps, t.v_first,
                            t.v_weight, cuda_stream);
    }
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaGetLastError());
  }
  return absl::OkStatus();
}

absl::Status BicubicScalerCuda::Scale(const Frame& source, Frame* target) {
  if (!(source.geometry() == source_)) {
    return absl::InvalidArgumentError(absl::StrCat("scale: a ", GeometryDescription(source.geometry()),
                                                   " picture for a scaler from ", GeometryDescription(source_)));
  }
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaSetDevice(device_));
  const size_t in_bytes = source_.frame_bytes();
  const size_t out_bytes = target_.frame_bytes();
  if (scratch_ == nullptr) {
    cudaStream_t stream;
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    stream_ = stream;
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaMalloc(&scratch_, in_bytes + out_bytes));
  }
  if (!(target->geometry() == target_)) {
    absl::StatusOr<Frame> made = Frame::Create(target_);
    if (!made.ok()) return made.status();
    *target = *std::move(made);
  }
  const auto stream = static_cast<cudaStream_t>(stream_);
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho,
                              cudaMemcpyAsync(scratch_, source.bytes(), in_bytes, cudaMemcpyHostToDevice, stream));
  if (absl::Status s = Enqueue(scratch_, scratch_ + in_bytes, stream_); !s.ok()) return s;
  EXACTQ_RETURN_IF_CUDA_ERROR(
      kWho, cudaMemcpyAsync(target->mutable_bytes(), scratch_ + in_bytes, out_bytes, cudaMemcpyDeviceToHost, stream));
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaStreamSynchronize(stream));
  return absl::OkStatus();
}

}  // namespace scale
}  // namespace exactq
