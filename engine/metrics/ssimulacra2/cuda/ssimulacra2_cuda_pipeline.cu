// The kernels of the ssimulacra2 CUDA twin; ssimulacra2_cuda_pipeline.h describes them.
// Built with --fmad=false, -prec-div=true, -ftz=false (tools/cuda.bzl): every f32/f64
// operation is the IEEE operation the reference performs, in its order, because each
// kernel runs a body of ssimulacra2_cuda_kernels.h, and the bodies call the shared
// templates of ssimulacra2_math.h on ScalarLanes.
#include "engine/metrics/ssimulacra2/cuda/ssimulacra2_cuda_pipeline.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <cub/device/device_reduce.cuh>

#include "engine/exact/ordered_sum_kernels.cuh"
#include "engine/exact/ordered_sum_segments.cuh"
#include "engine/metrics/ssimulacra2/cuda/ssimulacra2_cuda_kernels.h"

namespace exactq {
namespace ssimulacra2 {
namespace gpu {
namespace {

namespace xg = ::exactq::exact::gpu;

static_assert(kSumAccepted == xg::kSegmentAccepted && kSumRefused == xg::kSegmentRefused &&
                  kSumOverflow == xg::kSegmentOverflow,
              "SumResults::status carries the segment pipeline's status");

// The tree sum's result sits at the start of its region, its temporary storage after.
constexpr size_t kTreeOutputBytes = 256;

size_t TreeTempBytes(size_t n) {
  size_t bytes = 0;
  // A size query: no launch, no device access.
  cub::DeviceReduce::Sum(nullptr, bytes, static_cast<const double*>(nullptr), static_cast<double*>(nullptr),
                         static_cast<int>(n));
  return bytes;
}

// One sum's workspace region: whichever of the three ways of summing a frame uses.
size_t SumRegionBytes(size_t n) {
  const int64_t chunks = xg::ChunkCount(n);
  return AlignScratch(std::max({xg::SegmentWorkspaceBytes(chunks), xg::WorkspaceBytes(chunks),
                                kTreeOutputBytes + TreeTempBytes(n)}));
}

// The planes, then 18 workspace regions per scale (one per sum).
struct Layout {
  Planes planes;
  char* regions[kMaxScales][kImageChannels][kSumsPerChannel] = {};
  size_t region_bytes[kMaxScales] = {};
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
    const size_t bytes = SumRegionBytes(n);
    l.region_bytes[s] = bytes;
    for (auto& channel : l.regions[s]) {
      for (char*& region : channel) {
        region = base == nullptr ? nullptr : static_cast<char*>(base) + offset;
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

// One warp per block: 32 rows of blur line blockIdx.y from row 32 * blockIdx.x, in tiles
// of 32 columns (ssimulacra2_cuda_kernels.h, BlurTileLoad/Walk/Store).
__global__ void __launch_bounds__(kBlurTile) BlurRowsTiledKernel(Planes p, int w, int h) {
  __shared__ BlurRowTiles tiles;
  const int lane = static_cast<int>(threadIdx.x);
  const int row0 = static_cast<int>(blockIdx.x) * kBlurTile;
  const int line = static_cast<int>(blockIdx.y);
  BlurState<float> state = ZeroBlurState(0.0f);
  const int groups = BlurRowGroups(w);
  BlurTileRegs next;
  BlurTileFetch(p, w, h, line, row0, 0, lane, next);
  for (int b = 0; b < groups; ++b) {
    BlurTilePut(p, line, b, lane, next, tiles);
    __syncwarp();
    if (b + 1 < groups) BlurTileFetch(p, w, h, line, row0, b + 1, lane, next);
    BlurTileWalk(w, h, row0, b, lane, tiles, state);
    __syncwarp();
    if (b > 0) {
      BlurTileStore(p, w, h, line, row0, b - 1, lane, tiles);
      __syncwarp();
    }
  }
  BlurTileStore(p, w, h, line, row0, groups - 1, lane, tiles);
}

__global__ void BlurColumnsKernel(Planes p, int w, int h) { BlurColumnAt(p, w, h, LinearIndex()); }

__global__ void TermsKernel(Planes p, size_t n, int c) { TermsAt(p, n, c, static_cast<size_t>(LinearIndex())); }

// Where TermsWithChunkSumsKernel leaves each chunk's approximate sum of each term plane:
// the segment workspaces' chunk_sums, so the segment pipeline skips its own pass over the
// planes (EnqueueSegmentedSumFromChunkSums).
struct ChunkSumOutputs {
  double* p[kSumsPerChannel];
};

constexpr int kTermsChunkThreads = 256;
static_assert(xg::kChunkTerms % kTermsChunkThreads == 0, "a block covers whole chunks");

// One block per chunk of 1024 pixels (4 per thread): channel c's six terms into their
// planes, as TermsKernel, and each plane's chunk sum (an approximate sum: any order of
// adds will do, it only places the exact walk's checks).
__global__ void __launch_bounds__(kTermsChunkThreads) TermsWithChunkSumsKernel(Planes p, size_t n, int c,
                                                                               ChunkSumOutputs out) {
  constexpr int kWarps = kTermsChunkThreads / 32;
  __shared__ double warp_sums[kWarps][kSumsPerChannel];
  const size_t chunk = blockIdx.x;
  double acc[kSumsPerChannel] = {};
#pragma unroll
  for (int j = 0; j < xg::kChunkTerms / kTermsChunkThreads; ++j) {
    const size_t i = chunk * xg::kChunkTerms + static_cast<size_t>(j) * kTermsChunkThreads + threadIdx.x;
    if (i < n) {
      double terms[kSumsPerChannel];
      TermsAt(p, c, i, terms);
#pragma unroll
      for (int k = 0; k < kSumsPerChannel; ++k) {
        TermPlane(p, c, k)[i] = terms[k];
        acc[k] = __dadd_rn(acc[k], terms[k]);
      }
    }
  }
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int warp = static_cast<int>(threadIdx.x) >> 5;
#pragma unroll
  for (int k = 0; k < kSumsPerChannel; ++k) {
#pragma unroll
    for (int d = 16; d >= 1; d >>= 1) acc[k] = __dadd_rn(acc[k], __shfl_xor_sync(0xffffffffu, acc[k], d));
    if (lane == 0) warp_sums[warp][k] = acc[k];
  }
  __syncthreads();
  if (threadIdx.x < kSumsPerChannel) {
    const int k = static_cast<int>(threadIdx.x);
    double total = 0.0;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) total = __dadd_rn(total, warp_sums[w][k]);
    out.p[k][chunk] = total;
  }
}

// Where each of the 108 results lies when the sums are done: the bits of the double, and
// the segment pipeline's status (null: none, 0).
struct SumSources {
  const unsigned long long* bits[kSumCount];
  const int32_t* status[kSumCount];
};

// The 108 results into SumResults (0 for scales not computed).
__global__ void GatherKernel(SumSources sources, SumResults* results) {
  const int j = static_cast<int>(threadIdx.x);
  if (j >= kSumCount) return;
  results->sums[j] = sources.bits[j] == nullptr ? 0.0 : __longlong_as_double(static_cast<long long>(*sources.bits[j]));
  results->status[j] = sources.status[j] == nullptr ? 0 : *sources.status[j];
}

dim3 PixelGrid(int w, int h, int z, dim3 block) {
  return dim3(static_cast<unsigned>((w + block.x - 1) / block.x), static_cast<unsigned>((h + block.y - 1) / block.y),
              static_cast<unsigned>(z));
}

unsigned LinearGrid(int64_t n, int block) { return static_cast<unsigned>((n + block - 1) / block); }

// One sum of n terms at `terms` on `stream`, in `region`; sets where its result will be.
// Whether the segment pipeline sums this plane (then the terms kernel writes its chunk
// sums into the workspace).
bool SegmentSum(SumPath path, size_t n) { return path == SumPath::kSegments && xg::SegmentPipelineFits(n); }

cudaError_t EnqueueOneSum(SumPath path, int segment_plan_mode, const double* terms, size_t n, char* region,
                          size_t region_bytes, cudaStream_t stream, const unsigned long long** bits,
                          const int32_t** status) {
  const int64_t chunks = xg::ChunkCount(n);
  *status = nullptr;
  if (SegmentSum(path, n)) {
    const xg::SegmentWorkspace ws = xg::CarveSegmentWorkspace(region, chunks);
    *bits = reinterpret_cast<const unsigned long long*>(&ws.output->sum_bits);
    *status = &ws.output->status;
    xg::PlanOptions plan;
    plan.mode = static_cast<exact::PlanMode>(segment_plan_mode);
    // TermsWithChunkSumsKernel left the chunk sums in ws.chunk_sums.
    return xg::EnqueueSegmentedSumFromChunkSums(xg::DeviceArrayTerms{terms}, n, ws, plan, stream);
  }
  if (path == SumPath::kInexactTree) {
    double* out = reinterpret_cast<double*>(region);
    *bits = reinterpret_cast<const unsigned long long*>(out);
    size_t temp_bytes = region_bytes - kTreeOutputBytes;
    return cub::DeviceReduce::Sum(region + kTreeOutputBytes, temp_bytes, terms, out, static_cast<int>(n), stream);
  }
  // kEventWalk, or a plane too large for the segment pipeline (beyond 2^30 terms).
  const xg::Workspace ws = xg::CarveWorkspace(region, chunks);
  *bits = reinterpret_cast<const unsigned long long*>(&ws.output->sum_bits);
  return xg::EnqueueOrderedSum(xg::DeviceArrayTerms{terms}, n, ws, xg::PlanOptions{}, stream);
}

}  // namespace

cudaError_t CreatePipelineStreams(cudaStream_t main, PipelineStreams* streams) {
  PipelineStreams& ps = *streams;
  ps.main = main;
  for (auto& channel : ps.sums) {
    for (cudaStream_t& s : channel) {
      if (cudaError_t err = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); err != cudaSuccess) return err;
    }
  }
  const auto make = [](cudaEvent_t* e) { return cudaEventCreateWithFlags(e, cudaEventDisableTiming); };
  for (int s = 0; s < kMaxScales; ++s) {
    if (cudaError_t err = make(&ps.blurred[s]); err != cudaSuccess) return err;
    for (int c = 0; c < kImageChannels; ++c) {
      if (cudaError_t err = make(&ps.terms[s][c]); err != cudaSuccess) return err;
      for (int k = 0; k < kSumsPerChannel; ++k) {
        if (cudaError_t err = make(&ps.summed[s][c][k]); err != cudaSuccess) return err;
      }
    }
  }
  return cudaSuccess;
}

void DestroyPipelineStreams(PipelineStreams* streams) {
  PipelineStreams& ps = *streams;
  for (auto& channel : ps.sums) {
    for (cudaStream_t& s : channel) {
      if (s != nullptr) cudaStreamDestroy(s);
      s = nullptr;
    }
  }
  for (int s = 0; s < kMaxScales; ++s) {
    if (ps.blurred[s] != nullptr) cudaEventDestroy(ps.blurred[s]);
    ps.blurred[s] = nullptr;
    for (int c = 0; c < kImageChannels; ++c) {
      if (ps.terms[s][c] != nullptr) cudaEventDestroy(ps.terms[s][c]);
      ps.terms[s][c] = nullptr;
      for (int k = 0; k < kSumsPerChannel; ++k) {
        if (ps.summed[s][c][k] != nullptr) cudaEventDestroy(ps.summed[s][c][k]);
        ps.summed[s][c][k] = nullptr;
      }
    }
  }
  ps.main = nullptr;
}

size_t ScratchBytes(int width, int height) { return MakeLayout(nullptr, width, height).total; }

cudaError_t PrepareScratch(void* scratch, int width, int height, cudaStream_t stream) {
  const Layout l = MakeLayout(scratch, width, height);
  int w = width;
  int h = height;
  for (int s = 0; s < ScaleCountOf(width, height); ++s) {
    const size_t n = static_cast<size_t>(w) * h;
    const int64_t chunks = xg::ChunkCount(n);
    for (auto& channel : l.regions[s]) {
      for (char* region : channel) {
        if (cudaError_t err = xg::ZeroSegmentState(xg::CarveSegmentWorkspace(region, chunks), chunks, stream);
            err != cudaSuccess) {
          return err;
        }
      }
    }
    w = HalfSide(w);
    h = HalfSide(h);
  }
  return cudaSuccess;
}

cudaError_t PreparePipeline() {
  if (cudaError_t err = xg::AllowWalkSharedMemory<xg::DeviceArrayTerms>(); err != cudaSuccess) return err;
  return xg::AllowSegmentWalkSharedMemory();
}

cudaError_t EnqueuePipeline(const DeviceFrame& f, SumPath path, const PipelineStreams& ps, int segment_plan_mode) {
  const Layout l = MakeLayout(f.scratch, f.width, f.height);
  const Planes& p = l.planes;
  cudaStream_t main = ps.main;
  const dim3 block(32, 8);
  if (f.bit_depth > 8) {
    YuvToLinearKernel<uint16_t><<<PixelGrid(f.width, f.height, 2, block), block, 0, main>>>(f, p);
  } else {
    YuvToLinearKernel<uint8_t><<<PixelGrid(f.width, f.height, 2, block), block, 0, main>>>(f, p);
  }
  if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;

  SumSources sources{};
  const int scales = ScaleCountOf(f.width, f.height);
  int w = f.width;
  int h = f.height;
  for (int s = 0; s < scales; ++s) {
    const int cur = s % 2;
    if (s > 0) {
      // The previous scale's Terms read nothing the downsample writes (lin), so it runs
      // while they may still run.
      DownsampleKernel<<<PixelGrid(HalfSide(w), HalfSide(h), 2 * kImageChannels, block), block, 0, main>>>(
          p, cur, w, h);
      w = HalfSide(w);
      h = HalfSide(h);
      // Xyb and the blur overwrite what the previous scale's Terms read.
      for (int c = 0; c < kImageChannels; ++c) {
        if (cudaError_t err = cudaStreamWaitEvent(main, ps.terms[s - 1][c], 0); err != cudaSuccess) return err;
      }
    }
    XybKernel<<<PixelGrid(w, h, 2, block), block, 0, main>>>(p, cur, w, h, f.cube_root_of_bias);
    constexpr int kLineBlock = 64;
    BlurRowsTiledKernel<<<dim3(static_cast<unsigned>((h + kBlurTile - 1) / kBlurTile), kBlurLines), kBlurTile, 0,
                          main>>>(p, w, h);
    BlurColumnsKernel<<<LinearGrid(int64_t{w} * kBlurLines, kLineBlock), kLineBlock, 0, main>>>(p, w, h);
    if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
    if (cudaError_t err = cudaEventRecord(ps.blurred[s], main); err != cudaSuccess) return err;
    const size_t n = static_cast<size_t>(w) * h;
    for (int c = 0; c < kImageChannels; ++c) {
      // Fork: channel c's terms on its first sum stream, after the blur; and after the
      // previous scale's sums of channel c on the other five streams, which read the
      // same planes (the first stream's own sum is before it in stream order).
      cudaStream_t terms_stream = ps.sums[c][0];
      if (cudaError_t err = cudaStreamWaitEvent(terms_stream, ps.blurred[s], 0); err != cudaSuccess) return err;
      if (s > 0) {
        for (int k = 1; k < kSumsPerChannel; ++k) {
          if (cudaError_t err = cudaStreamWaitEvent(terms_stream, ps.summed[s - 1][c][k], 0); err != cudaSuccess) {
            return err;
          }
        }
      }
      if (SegmentSum(path, n)) {
        ChunkSumOutputs chunk_sums;
        for (int k = 0; k < kSumsPerChannel; ++k) {
          chunk_sums.p[k] = xg::CarveSegmentWorkspace(l.regions[s][c][k], xg::ChunkCount(n)).chunk_sums;
        }
        TermsWithChunkSumsKernel<<<static_cast<unsigned>(xg::ChunkCount(n)), kTermsChunkThreads, 0, terms_stream>>>(
            p, n, c, chunk_sums);
      } else {
        constexpr int kTermBlock = 256;
        TermsKernel<<<LinearGrid(static_cast<int64_t>(n), kTermBlock), kTermBlock, 0, terms_stream>>>(p, n, c);
      }
      if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
      if (cudaError_t err = cudaEventRecord(ps.terms[s][c], terms_stream); err != cudaSuccess) return err;
      for (int k = 0; k < kSumsPerChannel; ++k) {
        cudaStream_t stream = ps.sums[c][k];
        if (k > 0) {
          if (cudaError_t err = cudaStreamWaitEvent(stream, ps.terms[s][c], 0); err != cudaSuccess) return err;
        }
        const int j = (s * kImageChannels + c) * kSumsPerChannel + k;
        if (cudaError_t err = EnqueueOneSum(path, segment_plan_mode, TermPlane(p, c, k), n, l.regions[s][c][k], l.region_bytes[s],
                                            stream, &sources.bits[j], &sources.status[j]);
            err != cudaSuccess) {
          return err;
        }
        if (cudaError_t err = cudaEventRecord(ps.summed[s][c][k], stream); err != cudaSuccess) return err;
      }
    }
  }
  // Join: every sum stream's last sum (and so everything before it on that stream).
  for (int c = 0; c < kImageChannels && scales > 0; ++c) {
    for (int k = 0; k < kSumsPerChannel; ++k) {
      if (cudaError_t err = cudaStreamWaitEvent(main, ps.summed[scales - 1][c][k], 0); err != cudaSuccess) {
        return err;
      }
    }
  }
  GatherKernel<<<1, 128, 0, main>>>(sources, f.results);
  return cudaGetLastError();
}

}  // namespace gpu
}  // namespace ssimulacra2
}  // namespace exactq
