#include "engine/decode/surface_planes.h"

namespace exactq::decode::internal {
namespace {

constexpr int kBlockX = 32;
constexpr int kBlockY = 8;

__global__ void BytePlane(SurfacePlaneCopy plane) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= plane.width || y >= plane.height) return;
  const uint8_t* row = plane.source + static_cast<size_t>(y) * plane.source_pitch;
  plane.destination[static_cast<size_t>(y) * plane.width + x] = row[plane.step * x + plane.offset];
}

__global__ void WordPlane(SurfacePlaneCopy plane, unsigned* dropped) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= plane.width || y >= plane.height) return;
  const auto* row = reinterpret_cast<const uint16_t*>(plane.source + static_cast<size_t>(y) * plane.source_pitch);
  const unsigned word = row[plane.step * x + plane.offset];
  const unsigned low = word & ((1u << plane.shift) - 1u);
  if (low != 0) atomicOr(dropped, low);
  reinterpret_cast<uint16_t*>(plane.destination)[static_cast<size_t>(y) * plane.width + x] =
      static_cast<uint16_t>(word >> plane.shift);
}

}  // namespace

cudaError_t EnqueueSurfacePlanes(const SurfacePlaneCopy* planes, int count, unsigned* dropped, cudaStream_t stream) {
  for (int p = 0; p < count; ++p) {
    const SurfacePlaneCopy& plane = planes[p];
    const size_t row_bytes = static_cast<size_t>(plane.width) * plane.bytes_per_sample;
    if (plane.step == 1 && plane.shift == 0) {  // a plane as it is: the copy engine's job
      const cudaError_t e = cudaMemcpy2DAsync(
          plane.destination, row_bytes, plane.source + static_cast<size_t>(plane.offset) * plane.bytes_per_sample,
          plane.source_pitch, row_bytes, plane.height, cudaMemcpyDeviceToDevice, stream);
      if (e != cudaSuccess) return e;
      continue;
    }
    const dim3 block(kBlockX, kBlockY);
    const dim3 grid((plane.width + kBlockX - 1) / kBlockX, (plane.height + kBlockY - 1) / kBlockY);
    if (plane.bytes_per_sample == 1) {
      BytePlane<<<grid, block, 0, stream>>>(plane);
    } else {
      WordPlane<<<grid, block, 0, stream>>>(plane, dropped);
    }
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

}  // namespace exactq::decode::internal
