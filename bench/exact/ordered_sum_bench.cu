// Benchmark: the exact ordered sum on the GPU against an inexact CUB DeviceReduce::Sum
// baseline, in the same run, on 4K-frame-sized term arrays already in device memory.
//
//   ordered_sum_bench [--n=8294400] [--reps=50]
//
// For each fixture it prints medians over --reps repetitions (after warm-up) of:
//   exact_ms     OrderedSumCuda::Sum, host wall time: launches + device work + the 40-byte
//                result copy + stream sync (what a caller waits for);
//   cub_ms       cub::DeviceReduce::Sum + result copy + sync, timed the same way (INEXACT:
//                a tree order, other bits than the loop);
//   stage times  the exact pipeline's four kernels alone, from CUDA events;
// and whether each result has the loop's bits. Needs a GPU; exits 2 without one.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cub/device/device_reduce.cuh>

#include "engine/exact/ordered_sum.h"
#include "engine/exact/ordered_sum_cuda.h"
#include "engine/exact/ordered_sum_fixtures.h"
#include "engine/exact/ordered_sum_kernels.cuh"

namespace {

using exactq::exact::FixtureKind;

#define CHECK_CUDA(call)                                                                        \
  do {                                                                                          \
    const cudaError_t err_ = (call);                                                            \
    if (err_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); \
      std::exit(1);                                                                             \
    }                                                                                           \
  } while (0)

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

template <class Fn>
double HostMs(const Fn& fn) {
  const auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

const char* BitsVerdict(double got, double want) {
  return exactq::exact::SameBitsOrBothNaN(got, want) ? "loop bits" : "OTHER BITS";
}

void RunFixture(FixtureKind kind, size_t n, int reps) {
  namespace ex = exactq::exact;
  namespace gpu = exactq::exact::gpu;
  const std::vector<double> terms = ex::MakeFixture(kind, n, 1);
  double loop_ms = 0;
  double want = 0;
  loop_ms = HostMs([&] { want = ex::OrderedSumReference::Loop(terms.data(), n); });

  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  double* d_terms = nullptr;
  CHECK_CUDA(cudaMalloc(&d_terms, n * sizeof(double)));
  CHECK_CUDA(cudaMemcpy(d_terms, terms.data(), n * sizeof(double), cudaMemcpyHostToDevice));

  // The exact sum through its public class.
  ex::OrderedSumCuda exact(stream);
  ex::OrderedSumStats stats;
  double exact_result = 0;
  std::vector<double> exact_ms;
  for (int r = -3; r < reps; ++r) {
    const double ms = HostMs([&] {
      absl::StatusOr<double> got = exact.Sum(d_terms, n, &stats);
      if (!got.ok()) {
        std::fprintf(stderr, "OrderedSumCuda: %s\n", std::string(got.status().message()).c_str());
        std::exit(1);
      }
      exact_result = *got;
    });
    if (r >= 0) exact_ms.push_back(ms);
  }

  // The inexact baseline.
  double* d_out = nullptr;
  double* h_out = nullptr;
  CHECK_CUDA(cudaMalloc(&d_out, sizeof(double)));
  CHECK_CUDA(cudaMallocHost(&h_out, sizeof(double)));
  size_t temp_bytes = 0;
  CHECK_CUDA(cub::DeviceReduce::Sum(nullptr, temp_bytes, d_terms, d_out, n, stream));
  void* d_temp = nullptr;
  CHECK_CUDA(cudaMalloc(&d_temp, temp_bytes));
  std::vector<double> cub_ms;
  for (int r = -3; r < reps; ++r) {
    const double ms = HostMs([&] {
      CHECK_CUDA(cub::DeviceReduce::Sum(d_temp, temp_bytes, d_terms, d_out, n, stream));
      CHECK_CUDA(cudaMemcpyAsync(h_out, d_out, sizeof(double), cudaMemcpyDeviceToHost, stream));
      CHECK_CUDA(cudaStreamSynchronize(stream));
    });
    if (r >= 0) cub_ms.push_back(ms);
  }

  // The exact pipeline's stages, each bracketed by events.
  const int64_t chunks = gpu::ChunkCount(n);
  void* d_ws = nullptr;
  CHECK_CUDA(cudaMalloc(&d_ws, gpu::WorkspaceBytes(chunks)));
  const gpu::Workspace ws = gpu::CarveWorkspace(d_ws, chunks);
  const gpu::DeviceArrayTerms source{d_terms};
  const unsigned grid = gpu::ChunkGrid(chunks);
  cudaEvent_t ev[5];
  for (cudaEvent_t& e : ev) CHECK_CUDA(cudaEventCreate(&e));
  std::vector<double> stage_ms[4];
  for (int r = -3; r < reps; ++r) {
    CHECK_CUDA(cudaEventRecord(ev[0], stream));
    gpu::ChunkApproximateSums<<<grid, gpu::kBlockThreads, 0, stream>>>(source, n, chunks, ws.chunk_sums);
    CHECK_CUDA(cudaEventRecord(ev[1], stream));
    gpu::PlanFromPrefix<gpu::kPlanThreads><<<1, gpu::kPlanThreads, 0, stream>>>(ws.chunk_sums, chunks, gpu::PlanOptions{}, ws.plan);
    CHECK_CUDA(cudaEventRecord(ev[2], stream));
    gpu::ChunkSummaries<<<grid, gpu::kBlockThreads, 0, stream>>>(source, n, chunks, ws.plan, ws.summaries);
    CHECK_CUDA(cudaEventRecord(ev[3], stream));
    gpu::OrderedWalk<<<1, gpu::kBlockThreads, 0, stream>>>(source, n, chunks, ws.plan, ws.summaries, ws.output);
    CHECK_CUDA(cudaEventRecord(ev[4], stream));
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaStreamSynchronize(stream));
    if (r < 0) continue;
    for (int s = 0; s < 4; ++s) {
      float ms = 0;
      CHECK_CUDA(cudaEventElapsedTime(&ms, ev[s], ev[s + 1]));
      stage_ms[s].push_back(ms);
    }
  }

  std::printf("%-24s n=%zu reps=%d\n", ex::FixtureName(kind), n, reps);
  std::printf("  exact_ms  %8.4f  (%s)  refused chunks %lld, sub-chunks %lld, terms one by one %lld, walk windows %lld\n",
              Median(exact_ms), BitsVerdict(exact_result, want), static_cast<long long>(stats.chunks_rejected),
              static_cast<long long>(stats.subchunks_rejected), static_cast<long long>(stats.terms_one_by_one),
              static_cast<long long>(stats.walk_windows));
  std::printf("  cub_ms    %8.4f  (%s; inexact baseline)\n", Median(cub_ms), BitsVerdict(*h_out, want));
  std::printf("  ratio     %8.2f\n", Median(exact_ms) / Median(cub_ms));
  std::printf("  stages_ms approximate_sums %.4f  plan %.4f  summaries %.4f  walk %.4f\n", Median(stage_ms[0]),
              Median(stage_ms[1]), Median(stage_ms[2]), Median(stage_ms[3]));
  std::printf("  host loop (one thread, this machine): %.3f ms\n", loop_ms);

  for (cudaEvent_t& e : ev) cudaEventDestroy(e);
  cudaFree(d_ws);
  cudaFree(d_temp);
  cudaFreeHost(h_out);
  cudaFree(d_out);
  cudaFree(d_terms);
  cudaStreamDestroy(stream);
}

}  // namespace

int main(int argc, char** argv) {
  size_t n = 3840 * 2160;
  int reps = 50;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--n=", 4) == 0) n = std::strtoull(argv[i] + 4, nullptr, 10);
    else if (std::strncmp(argv[i], "--reps=", 7) == 0) reps = std::atoi(argv[i] + 7);
    else {
      std::fprintf(stderr, "usage: %s [--n=8294400] [--reps=50]\n", argv[0]);
      return 2;
    }
  }
  std::string reason;
  if (!exactq::exact::CudaDeviceAvailable(&reason)) {
    std::fprintf(stderr, "ordered_sum_bench: %s\n", reason.c_str());
    return 2;
  }
  if (n == 0 || reps < 1) return 2;
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
  for (FixtureKind kind : {FixtureKind::kSsimLikeCrossingZero, FixtureKind::kUniform, FixtureKind::kTieHeavy,
                           FixtureKind::kFourthPowers, FixtureKind::kMixedWalk}) {
    RunFixture(kind, n, reps);
  }
  return 0;
}
