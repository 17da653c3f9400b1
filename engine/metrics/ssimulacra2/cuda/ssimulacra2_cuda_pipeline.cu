// The kernels of the ssimulacra2 CUDA twin; ssimulacra2_cuda_pipeline.h describes them.
// Built with --fmad=false, -prec-div=true, -ftz=false (tools/cuda.bzl): every f32/f64
// operation is the IEEE operation the reference performs, in its order, because each
// kernel runs a body of ssimulacra2_cuda_kernels.h, and the bodies call the shared
// templates of ssimulacra2_math.h on ScalarLanes.
#include "engine/metrics/ssimulacra2/cuda/ssimulacra2_cuda_pipeline.h"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "engine/exact/ordered_sum_kernels.cuh"
#include "engine/metrics/ssimulacra2/cuda/ssimulacra2_cuda_kernels.h"

namespace exactq {
namespace ssimulacra2 {
namespace gpu {
namespace {

namespace xg = ::exactq::exact::gpu;

// The planes, then 18 ordered-sum workspaces per scale (one per sum).
struct Layout {
  Planes planes;
  char* workspaces[kMaxScales][kImageChannels][kSumsPerChannel] = {};
  size_t total = 0;
};

Layout MakeLayout(void* base, int width, int height) {
  Layout l;
  l.planes = CarvePlanes(base, width, height);
  size_t offset = l.planes.bytes;
  int w = width;
  int h = height;
  const int scales = ScaleCountOf(width, height);
  for (int s = 0; s < scales; ++s) {
    const size_t n = static_cast<size_t>(w) * h;
    const size_t bytes = AlignScratch(xg::WorkspaceBytes(xg::ChunkCount(n)));
    for (auto& channel : l.workspaces[s]) {
      for (char*& ws : channel) {
        ws = base == nullptr ? nullptr : static_cast<char*>(base) + offset;
        offset += bytes;
      }
    }
    w = HalfSide(w);
    h = HalfSide(h);
  }
  l.total = offset;
  return l;
}

__device__ inline int PixelX() { return static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); }
__device__ inline int PixelY() { return static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y); }
__device__ inline int64_t LinearIndex() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }

template <class T>
__global__ void YuvToLinearKernel(DeviceFrame f, Planes p) {
  YuvToLinearAt<T>(f, p, PixelX(), PixelY(), static_cast<int>(blockIdx.z));
}

__global__ void DownsampleKernel(Planes p, int cur, int w, int h) {
  DownsampleAt(p, cur, w, h, PixelX(), PixelY(), static_cast<int>(blockIdx.z));
}

__global__ void XybKernel(Planes p, int cur, int w, int h, float cube_root_of_bias) {
  XybAt(p, cur, w, h, cube_root_of_bias, PixelX(), PixelY(), static_cast<int>(blockIdx.z));
}

__global__ void BlurRowsKernel(Planes p, int w, int h) { BlurRowAt(p, w, h, LinearIndex()); }

__global__ void BlurColumnsKernel(Planes p, int w, int h) { BlurColumnAt(p, w, h, LinearIndex()); }

__global__ void TermsKernel(Planes p, size_t n, int c) { TermsAt(p, n, c, static_cast<size_t>(LinearIndex())); }

struct SumOutputs {
  const xg::WalkOutput* p[kSumCount];
};

// The 108 results into one array (0 for scales not computed).
__global__ void GatherKernel(SumOutputs outputs, double* sums) {
  const int j = static_cast<int>(threadIdx.x);
  if (j >= kSumCount) return;
  sums[j] = outputs.p[j] == nullptr ? 0.0 : __longlong_as_double(static_cast<long long>(outputs.p[j]->sum_bits));
}

dim3 PixelGrid(int w, int h, int z, dim3 block) {
  return dim3(static_cast<unsigned>((w + block.x - 1) / block.x), static_cast<unsigned>((h + block.y - 1) / block.y),
              static_cast<unsigned>(z));
}

unsigned LinearGrid(int64_t n, int block) { return static_cast<unsigned>((n + block - 1) / block); }

}  // namespace

size_t ScratchBytes(int width, int height) { return MakeLayout(nullptr, width, height).total; }

cudaError_t PreparePipeline() { return xg::AllowWalkSharedMemory<xg::DeviceArrayTerms>(); }

cudaError_t EnqueuePipeline(const DeviceFrame& f, cudaStream_t stream) {
  const Layout l = MakeLayout(f.scratch, f.width, f.height);
  const Planes& p = l.planes;
  const dim3 block(32, 8);
  if (f.bit_depth > 8) {
    YuvToLinearKernel<uint16_t><<<PixelGrid(f.width, f.height, 2, block), block, 0, stream>>>(f, p);
  } else {
    YuvToLinearKernel<uint8_t><<<PixelGrid(f.width, f.height, 2, block), block, 0, stream>>>(f, p);
  }
  if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;

  SumOutputs outputs{};
  const int scales = ScaleCountOf(f.width, f.height);
  int w = f.width;
  int h = f.height;
  for (int s = 0; s < scales; ++s) {
    const int cur = s % 2;
    if (s > 0) {
      DownsampleKernel<<<PixelGrid(HalfSide(w), HalfSide(h), 2 * kImageChannels, block), block, 0, stream>>>(
          p, cur, w, h);
      w = HalfSide(w);
      h = HalfSide(h);
    }
    XybKernel<<<PixelGrid(w, h, 2, block), block, 0, stream>>>(p, cur, w, h, f.cube_root_of_bias);
    constexpr int kLineBlock = 64;
    BlurRowsKernel<<<LinearGrid(int64_t{h} * kBlurLines, kLineBlock), kLineBlock, 0, stream>>>(p, w, h);
    BlurColumnsKernel<<<LinearGrid(int64_t{w} * kBlurLines, kLineBlock), kLineBlock, 0, stream>>>(p, w, h);
    if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
    const size_t n = static_cast<size_t>(w) * h;
    for (int c = 0; c < kImageChannels; ++c) {
      constexpr int kTermBlock = 256;
      TermsKernel<<<LinearGrid(static_cast<int64_t>(n), kTermBlock), kTermBlock, 0, stream>>>(p, n, c);
      if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
      for (int k = 0; k < kSumsPerChannel; ++k) {
        const xg::Workspace ws = xg::CarveWorkspace(l.workspaces[s][c][k], xg::ChunkCount(n));
        if (cudaError_t err =
                xg::EnqueueOrderedSum(xg::DeviceArrayTerms{p.terms + k * p.plane}, n, ws, xg::PlanOptions{}, stream);
            err != cudaSuccess) {
          return err;
        }
        outputs.p[(s * kImageChannels + c) * kSumsPerChannel + k] = ws.output;
      }
    }
  }
  GatherKernel<<<1, 128, 0, stream>>>(outputs, f.sums);
  return cudaGetLastError();
}

}  // namespace gpu
}  // namespace ssimulacra2
}  // namespace exactq
