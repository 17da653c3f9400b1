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
#include <type_traits>

#include "engine/exact/device_batch.cuh"
#include "engine/exact/device_sum.cuh"
#include "engine/metrics/ssimulacra2/cuda/ssimulacra2_cuda_kernels.h"

namespace exactq {
namespace ssimulacra2 {
namespace gpu {

// engine/exact's VisitMap for the sums' map (found by argument-dependent lookup): the
// exact sums' strided per-term loop gets the sum's kind as a constant, TermOfKind<K>.
template <class F>
__device__ inline void VisitMap(const TermOfBase& map, F&& f) {
  switch (map.k) {
    case kSumSsim:
      f(TermOfKind<kSumSsim>{});
      return;
    case kSumSsim4:
      f(TermOfKind<kSumSsim4>{});
      return;
    case kSumArtifact:
      f(TermOfKind<kSumArtifact>{});
      return;
    case kSumArtifact4:
      f(TermOfKind<kSumArtifact4>{});
      return;
    case kSumDetail:
      f(TermOfKind<kSumDetail>{});
      return;
    default:
      f(TermOfKind<kSumDetail4>{});
      return;  // kSumDetail4, the last kind
  }
}

namespace {

static_assert(kSumAccepted == exact::gpu::kSegmentAccepted && kSumRefused == exact::gpu::kSegmentRefused &&
                  kSumOverflow == exact::gpu::kSegmentOverflow && kSumUnstaged == exact::gpu::kSegmentUnstaged,
              "SumResults::status carries the segment pipeline's status");

// One sum's workspace region: whichever of the ways of summing a frame uses (the tree
// sum uses the segment workspace's chunk_sums and output).
size_t SumRegionBytes(size_t n) {
  const int64_t chunks = exact::gpu::ChunkCount(n);
  return AlignScratch(std::max(exact::gpu::SegmentWorkspaceBytes(chunks), exact::gpu::WorkspaceBytes(chunks)));
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

// Struct parameters are __grid_constant__: the bodies take them by reference and index
// their arrays with values known only at run time (the image, the channel), which
// otherwise makes every thread copy the struct to local memory first (on the H200 that
// copy was most of these kernels' L2 traffic).
template <class T>
__global__ void YuvToLinearKernel(const __grid_constant__ DeviceFrame f, const __grid_constant__ Planes p) {
  YuvToLinearAt<T>(f, p, PixelX(), PixelY(), static_cast<int>(blockIdx.z));
}

__global__ void DownsampleKernel(const __grid_constant__ Planes p, int cur, int w, int h, float cube_root_of_bias) {
  DownsampleAt(p, cur, w, h, PixelX(), PixelY(), static_cast<int>(blockIdx.z), cube_root_of_bias);
}

// One warp per block: 32 rows of blur line blockIdx.y from row 32 * blockIdx.x, in tiles
// of 32 columns (ssimulacra2_cuda_kernels.h, BlurTileLoad/Walk/Store).
__global__ void __launch_bounds__(kBlurTile) BlurRowsTiledKernel(const __grid_constant__ ScalePlanes p, int w, int h) {
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

__global__ void BlurColumnsKernel(const __grid_constant__ ScalePlanes p, int w, int h) {
  BlurColumnAt(p, w, h, LinearIndex());
}

// Where TermsChunkSumsKernel leaves each chunk's sum of each of a channel's six terms:
// the segment workspaces' chunk_sums, so the segment pipeline skips its own first pass
// (EnqueueSegmentedSumsFromChunkSums); the tree sum adds them up.
struct ChunkSumOutputs {
  double* p[kImageChannels][kSumsPerChannel];  // [channel - the launch's first channel][term]
};

constexpr int kTermsChunkThreads = 256;
constexpr int kTermsChunkWarps = kTermsChunkThreads / 32;
static_assert(exact::gpu::kChunkTerms % kTermsChunkThreads == 0, "a block covers whole chunks");

__device__ inline double SumAdd(double a, double b) { return __dadd_rn(a, b); }
__device__ inline float SumAdd(float a, float b) { return __fadd_rn(a, b); }

// The block's six chunk sums from each thread's partial sums `acc`, a tree of adds
// (warps by butterflies, then the warps in order); thread k < 6 returns sum k's (the
// others 0).
template <class Acc>
__device__ inline Acc BlockChunkSum(Acc (&acc)[kSumsPerChannel]) {
  __shared__ Acc warp_sums[kTermsChunkWarps][kSumsPerChannel];
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int warp = static_cast<int>(threadIdx.x) >> 5;
#pragma unroll
  for (int k = 0; k < kSumsPerChannel; ++k) {
#pragma unroll
    for (int d = 16; d >= 1; d >>= 1) acc[k] = SumAdd(acc[k], __shfl_xor_sync(0xffffffffu, acc[k], d));
    if (lane == 0) warp_sums[warp][k] = acc[k];
  }
  __syncthreads();
  Acc total = 0;
  if (threadIdx.x < kSumsPerChannel) {
    const int k = static_cast<int>(threadIdx.x);
#pragma unroll
    for (int w = 0; w < kTermsChunkWarps; ++w) total = SumAdd(total, warp_sums[w][k]);
  }
  return total;
}

// A base stored under an L2 policy of evict_last: L2 keeps it ahead of other data, so
// that with many frames in flight it is still there when its slab's strided pass reads
// it (EnqueueChannelSums).
// L2 policies need sm_80; on Turing (release builds) the store is a plain one (the same
// value; only where L2 keeps it differs).
struct EvictLastStore {
  uint64_t policy;
  __device__ void operator()(double* at, double v) const {
#if __CUDA_ARCH__ >= 800
    asm volatile("st.global.L2::cache_hint.f64 [%0], %1, %2;" ::"l"(at), "d"(v), "l"(policy) : "memory");
#else
    *at = v;
#endif
  }
};
__device__ inline EvictLastStore MakeEvictLastStore() {
  EvictLastStore store{0};
#if __CUDA_ARCH__ >= 800
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(store.policy));
#endif
  return store;
}

// One block per chunk of 1024 pixels (4 per thread), chunk chunk_base + blockIdx.x, and
// channel c = first_channel + blockIdx.y: the channel's six terms and, for the exact sums
// (store_bases), its two term bases into their planes (kEvictLast: under an L2 policy of
// evict_last); unless out.p[0][0] is null, each term's chunk sum, a tree of adds: for the
// segment pipeline an approximate sum (any order will do: it only places the exact walk's
// checks), in binary32 with kBinary32Advice (the bases are stored then: BasesAndAdviceAt);
// for the inexact variant the first level of its tree.
template <bool kBinary32Advice, bool kEvictLast = false>
__global__ void __launch_bounds__(kTermsChunkThreads)
    TermsChunkSumsKernel(const __grid_constant__ ScalePlanes p, size_t n, int first_channel, bool store_bases,
                         const __grid_constant__ ChunkSumOutputs out, size_t chunk_base) {
  static_assert(kBinary32Advice || !kEvictLast, "evict_last stores only on the segment pipeline's binary32 path");
  using Acc = std::conditional_t<kBinary32Advice, float, double>;
  const size_t chunk = chunk_base + blockIdx.x;
  const int c = first_channel + static_cast<int>(blockIdx.y);
  // The L2 policy is made once per thread (one createpolicy), not per pixel.
  [[maybe_unused]] const auto store = [] {
    if constexpr (kEvictLast) {
      return MakeEvictLastStore();
    } else {
      return PlainStore{};
    }
  }();
  Acc acc[kSumsPerChannel] = {};
#pragma unroll
  for (int j = 0; j < exact::gpu::kChunkTerms / kTermsChunkThreads; ++j) {
    const size_t i = chunk * exact::gpu::kChunkTerms + static_cast<size_t>(j) * kTermsChunkThreads + threadIdx.x;
    if (i < n) {
      Acc terms[kSumsPerChannel];
      if constexpr (kBinary32Advice) {
        BasesAndAdviceAt(p, c, i, terms, store);
      } else {
        TermsAt(p, c, i, store_bases, terms);
      }
#pragma unroll
      for (int k = 0; k < kSumsPerChannel; ++k) acc[k] = SumAdd(acc[k], terms[k]);
    }
  }
  if (out.p[0][0] == nullptr) return;  // the same for the whole block
  const Acc total = BlockChunkSum(acc);
  if (threadIdx.x < kSumsPerChannel) out.p[blockIdx.y][threadIdx.x][chunk] = static_cast<double>(total);
}

// Term k of channel c as the sums read it: the stored base, mapped.
using StoredTerm = exact::gpu::MappedArrayTerms<TermOfBase>;
StoredTerm StoredTermOf(const ScalePlanes& view, int c, int k) {
  return StoredTerm{TermBasePlane(view, c, k), TermOfBase{k}};
}
template <int kChannels>
using ChannelsBatch = exact::gpu::SegmentBatch<StoredTerm, kChannels * kSumsPerChannel>;

// NOT EXACT (the inexact variant): block j adds sum j's chunk sums (channel j / 6, term
// j % 6 of the launch's channels) as a tree (each thread a strided share, then the
// block's threads pairwise) into outputs.p[j / 6][j % 6].
constexpr int kTreeThreads = 256;
__global__ void __launch_bounds__(kTreeThreads)
    TreeOfChunkSumsKernel(const __grid_constant__ ChunkSumOutputs chunk_sums, int64_t chunks,
                          const __grid_constant__ ChunkSumOutputs outputs) {
  __shared__ double partial[kTreeThreads];
  const int c = static_cast<int>(blockIdx.x) / kSumsPerChannel;
  const int k = static_cast<int>(blockIdx.x) % kSumsPerChannel;
  const double* in = chunk_sums.p[c][k];
  double acc = 0.0;
  for (int64_t i = threadIdx.x; i < chunks; i += kTreeThreads) acc = __dadd_rn(acc, in[i]);
  partial[threadIdx.x] = acc;
  __syncthreads();
  for (int half = kTreeThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half)
      partial[threadIdx.x] = __dadd_rn(partial[threadIdx.x], partial[threadIdx.x + half]);
    __syncthreads();
  }
  if (threadIdx.x == 0) *outputs.p[c][k] = partial[0];
}

// Where each of the 108 results lies when the sums are done: the bits of the double, and
// the segment pipeline's status (null: none, 0).
struct SumSources {
  const unsigned long long* bits[kSumCount];
  const int32_t* status[kSumCount];
  const int32_t* tile_chunks[kSumCount];
};

// The 108 results into SumResults (0 for scales not computed).
__global__ void GatherKernel(const __grid_constant__ SumSources sources, SumResults* results) {
  const int j = static_cast<int>(threadIdx.x);
  if (j >= kSumCount) return;
  results->sums[j] = sources.bits[j] == nullptr ? 0.0 : __longlong_as_double(static_cast<long long>(*sources.bits[j]));
  results->status[j] = sources.status[j] == nullptr ? 0 : *sources.status[j];
  results->tile_chunks[j] = sources.tile_chunks[j] == nullptr ? 0 : *sources.tile_chunks[j];
}

dim3 PixelGrid(int w, int h, int z, dim3 block) {
  return dim3(static_cast<unsigned>((w + block.x - 1) / block.x), static_cast<unsigned>((h + block.y - 1) / block.y),
              static_cast<unsigned>(z));
}

unsigned LinearGrid(int64_t n, int block) { return static_cast<unsigned>((n + block - 1) / block); }

// The event walk for sums of planes beyond the segment pipeline's reach (2^30 terms).
SumPath EffectivePath(SumPath path, size_t n) {
  return path == SumPath::kSegments && !exact::gpu::SegmentPipelineFits(n) ? SumPath::kEventWalk : path;
}

// The terms and six sums of channels first .. first + kChannels - 1 of one scale (n terms
// each, from `view`) on `stream`: one terms launch for those channels, then their
// 6 * kChannels sums (the segment pipeline: one batch). Records `termed` once the terms
// kernel, the last reader of the scale's image planes, is enqueued; sets where the
// results will be (bits[j], status[j], tile_chunks[j] for the channels' sums in order).
template <int kChannels>
cudaError_t EnqueueChannelSums(SumPath path, const SumOptions& options, const ScalePlanes& view, int first, size_t n,
                               char* const (&regions)[kImageChannels][kSumsPerChannel], cudaStream_t stream,
                               cudaEvent_t termed, const unsigned long long** bits, const int32_t** status,
                               const int32_t** tile_chunks) {
  const int64_t chunks = exact::gpu::ChunkCount(n);
  const dim3 terms_grid(static_cast<unsigned>(chunks), kChannels);
  if (path == SumPath::kEventWalk) {
    // The bases only (no chunk sums: the event walk forms its own), then the walks.
    TermsChunkSumsKernel<false>
        <<<terms_grid, kTermsChunkThreads, 0, stream>>>(view, n, first, true, ChunkSumOutputs{}, size_t{0});
    if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
    if (cudaError_t err = cudaEventRecord(termed, stream); err != cudaSuccess) return err;
    for (int j = 0; j < kChannels * kSumsPerChannel; ++j) {
      const int c = first + j / kSumsPerChannel;
      const int k = j % kSumsPerChannel;
      const exact::gpu::Workspace ws = exact::gpu::CarveWorkspace(regions[c][k], chunks);
      bits[j] = reinterpret_cast<const unsigned long long*>(&ws.output->sum_bits);
      status[j] = nullptr;
      tile_chunks[j] = nullptr;
      if (cudaError_t err =
              exact::gpu::EnqueueOrderedSum(StoredTermOf(view, c, k), n, ws, exact::gpu::PlanOptions{}, stream);
          err != cudaSuccess) {
        return err;
      }
    }
    return cudaSuccess;
  }
  const bool segments = path == SumPath::kSegments;
  ChannelsBatch<kChannels> batch;
  ChunkSumOutputs chunk_sums{};
  ChunkSumOutputs outputs{};
  for (int j = 0; j < kChannels * kSumsPerChannel; ++j) {
    const int i = j / kSumsPerChannel;  // the channel's place in the launch
    const int c = first + i;
    const int k = j % kSumsPerChannel;
    batch.source[j] = StoredTermOf(view, c, k);
    const exact::gpu::SegmentWorkspace& ws = batch.workspaces.ws[j] =
        exact::gpu::CarveSegmentWorkspace(regions[c][k], chunks);
    chunk_sums.p[i][k] = ws.chunk_sums;
    outputs.p[i][k] = reinterpret_cast<double*>(&ws.output->sum_bits);
    bits[j] = reinterpret_cast<const unsigned long long*>(&ws.output->sum_bits);
    status[j] = segments ? &ws.output->status : nullptr;
    tile_chunks[j] = segments ? &ws.output->tile_chunks : nullptr;
  }
  // The terms of chunks [first_chunk, end_chunk) of the launch's channels. The inexact tree
  // sum needs only the chunk sums; the segment pipeline reads the bases.
  const bool store_bases = segments;
  const bool binary32 = segments && options.advice == AdvicePrecision::kBinary32;
  const auto enqueue_terms = [&](int64_t first_chunk, int64_t end_chunk) {
    const dim3 grid(static_cast<unsigned>(end_chunk - first_chunk), kChannels);
    const size_t base = static_cast<size_t>(first_chunk);
    if (binary32 && options.bases_evict_last) {
      TermsChunkSumsKernel<true, true><<<grid, kTermsChunkThreads, 0, stream>>>(view, n, first, true, chunk_sums, base);
    } else if (binary32) {
      TermsChunkSumsKernel<true><<<grid, kTermsChunkThreads, 0, stream>>>(view, n, first, true, chunk_sums, base);
    } else {
      TermsChunkSumsKernel<false>
          <<<grid, kTermsChunkThreads, 0, stream>>>(view, n, first, store_bases, chunk_sums, base);
    }
    return cudaGetLastError();
  };
  exact::gpu::PlanOptions plan;
  plan.mode = static_cast<exact::PlanMode>(options.segment_plan_mode);
  const int64_t slab = options.slab_chunks;
  if (segments && slab > 0 && chunks > slab) {
    // In slabs (SumOptions::slab_chunks): each slab's terms, then its chunk stage, so that
    // the strided pass reads the bases soon after they are stored; then the redo, groups
    // and walk once. The scale's image planes are free once the last slab's terms are.
    for (int64_t first_chunk = 0; first_chunk < chunks; first_chunk += slab) {
      const int64_t end_chunk = std::min(chunks, first_chunk + slab);
      if (cudaError_t err = enqueue_terms(first_chunk, end_chunk); err != cudaSuccess) return err;
      if (end_chunk == chunks) {
        if (cudaError_t err = cudaEventRecord(termed, stream); err != cudaSuccess) return err;
      }
      if (cudaError_t err = exact::gpu::EnqueueSegmentedSumsChunkStage(batch, n, first_chunk, end_chunk, plan, stream);
          err != cudaSuccess) {
        return err;
      }
    }
    return exact::gpu::EnqueueSegmentedSumsFinish(batch, n, plan, stream);
  }
  if (cudaError_t err = enqueue_terms(0, chunks); err != cudaSuccess) return err;
  if (cudaError_t err = cudaEventRecord(termed, stream); err != cudaSuccess) return err;
  if (path == SumPath::kInexactTree) {
    TreeOfChunkSumsKernel<<<kChannels * kSumsPerChannel, kTreeThreads, 0, stream>>>(chunk_sums, chunks, outputs);
    return cudaGetLastError();
  }
  return exact::gpu::EnqueueSegmentedSumsFromChunkSums(batch, n, plan, stream);
}

}  // namespace

cudaError_t CreatePipelineStreams(cudaStream_t main, const PipelineShape& shape, PipelineStreams* streams,
                                  int sum_stream_rank) {
  if (shape.channels_per_batch != 1 && shape.channels_per_batch != kImageChannels) return cudaErrorInvalidValue;
  PipelineStreams& ps = *streams;
  ps.shape = shape;
  ps.main = main;
  int least = 0;
  int greatest = 0;
  if (cudaError_t err = cudaDeviceGetStreamPriorityRange(&least, &greatest); err != cudaSuccess) return err;
  // Rank r: r steps above the least priority (numerically lower is higher), at most the
  // greatest.
  const int priority = least - sum_stream_rank < greatest ? greatest : least - sum_stream_rank;
  const int lanes = shape.stream_per_scale ? kMaxScales : 2;
  for (int c = 0; c < kImageChannels; c += shape.channels_per_batch) {
    for (int lane = 0; lane < lanes; ++lane) {
      if (cudaError_t err = cudaStreamCreateWithPriority(&ps.sums[c][lane], cudaStreamNonBlocking, priority);
          err != cudaSuccess) {
        return err;
      }
    }
  }
  const auto make = [](cudaEvent_t* e) { return cudaEventCreateWithFlags(e, cudaEventDisableTiming); };
  for (int s = 0; s < kMaxScales; ++s) {
    if (cudaError_t err = make(&ps.blurred[s]); err != cudaSuccess) return err;
    for (int c = 0; c < kImageChannels; ++c) {
      if (cudaError_t err = make(&ps.termed[s][c]); err != cudaSuccess) return err;
      if (cudaError_t err = make(&ps.summed[s][c]); err != cudaSuccess) return err;
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
  const auto destroy = [](cudaEvent_t& e) {
    if (e != nullptr) cudaEventDestroy(e);
    e = nullptr;
  };
  for (int s = 0; s < kMaxScales; ++s) {
    destroy(ps.blurred[s]);
    for (int c = 0; c < kImageChannels; ++c) {
      destroy(ps.termed[s][c]);
      destroy(ps.summed[s][c]);
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
    const int64_t chunks = exact::gpu::ChunkCount(n);
    for (auto& channel : l.regions[s]) {
      for (char* region : channel) {
        if (cudaError_t err = exact::gpu::ZeroSegmentState(exact::gpu::CarveSegmentWorkspace(region, chunks), stream);
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
  if (cudaError_t err = exact::gpu::AllowWalkSharedMemory<StoredTerm>(); err != cudaSuccess) return err;
  if (cudaError_t err = exact::gpu::AllowSegmentWalkBatchSharedMemory<kSumsPerChannel>(); err != cudaSuccess)
    return err;
  return exact::gpu::AllowSegmentWalkBatchSharedMemory<kImageChannels * kSumsPerChannel>();
}

cudaError_t EnqueuePipeline(const DeviceFrame& f, SumPath requested_path, const PipelineStreams& ps,
                            const SumOptions& options) {
  if (options.slab_chunks < 0 || options.slab_chunks % 32 != 0) return cudaErrorInvalidValue;
  const PipelineShape& shape = ps.shape;
  const int channels_per_batch = shape.channels_per_batch;
  if (channels_per_batch != 1 && channels_per_batch != kImageChannels) return cudaErrorInvalidValue;
  const auto enqueue_sums = channels_per_batch == 1 ? &EnqueueChannelSums<1> : &EnqueueChannelSums<kImageChannels>;
  const Layout l = MakeLayout(f.scratch, f.width, f.height);
  const Planes& p = l.planes;
  cudaStream_t main = ps.main;
  const dim3 block(32, 8);
  // Scale 0's linear RGB and XYB.
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
    const int parity = s % 2;
    if (s > 0) {
      // This scale's XYB and blurred planes are scale s - 2's: its terms must be formed
      // (its sums read only its base planes and may still run).
      for (int c = 0; s >= 2 && c < kImageChannels; c += channels_per_batch) {
        if (cudaError_t err = cudaStreamWaitEvent(main, ps.termed[s - 2][c], 0); err != cudaSuccess) return err;
      }
      DownsampleKernel<<<PixelGrid(HalfSide(w), HalfSide(h), 2, block), block, 0, main>>>(p, parity, w, h,
                                                                                          f.cube_root_of_bias);
      w = HalfSide(w);
      h = HalfSide(h);
    }
    const ScalePlanes view = ScaleView(p, s);
    constexpr int kLineBlock = 64;
    BlurRowsTiledKernel<<<dim3(static_cast<unsigned>((h + kBlurTile - 1) / kBlurTile), kBlurLines), kBlurTile, 0,
                          main>>>(view, w, h);
    BlurColumnsKernel<<<LinearGrid(int64_t{w} * kBlurLines, kLineBlock), kLineBlock, 0, main>>>(view, w, h);
    if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
    if (cudaError_t err = cudaEventRecord(ps.blurred[s], main); err != cudaSuccess) return err;
    const size_t n = static_cast<size_t>(w) * h;
    const SumPath path = EffectivePath(requested_path, n);
    for (int c = 0; c < kImageChannels; c += channels_per_batch) {
      // Fork: the terms and sums of channels c .. c + channels_per_batch - 1 after this
      // scale's blur (and, with a stream per parity, in stream order after scale s - 2's
      // sums of those channels).
      cudaStream_t stream = ps.sums[c][SumStreamLane(shape, s)];
      if (cudaError_t err = cudaStreamWaitEvent(stream, ps.blurred[s], 0); err != cudaSuccess) return err;
      const int j = (s * kImageChannels + c) * kSumsPerChannel;
      if (cudaError_t err = enqueue_sums(path, options, view, c, n, l.regions[s], stream, ps.termed[s][c],
                                         &sources.bits[j], &sources.status[j], &sources.tile_chunks[j]);
          err != cudaSuccess) {
        return err;
      }
      if (cudaError_t err = cudaEventRecord(ps.summed[s][c], stream); err != cudaSuccess) return err;
    }
  }
  // Join: every sum stream's last sums (with a stream per parity, those of the last two
  // scales, and so everything before them on that stream).
  const int first_last = shape.stream_per_scale || scales < 2 ? 0 : scales - 2;
  for (int s = first_last; s < scales; ++s) {
    for (int c = 0; c < kImageChannels; c += channels_per_batch) {
      if (cudaError_t err = cudaStreamWaitEvent(main, ps.summed[s][c], 0); err != cudaSuccess) return err;
    }
  }
  GatherKernel<<<1, 128, 0, main>>>(sources, f.results);
  return cudaGetLastError();
}

}  // namespace gpu
}  // namespace ssimulacra2
}  // namespace exactq
