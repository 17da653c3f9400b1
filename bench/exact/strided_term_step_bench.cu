// Micro-benchmark: the cost of the strided pass's per-term step (engine/exact/internal/binary64_summaries.h's
// AddNonNegativeStridedTerm: scale, round half to even, the rest's tie test, the nonzero
// test, the add) in forms that give the same values, on a GPU with every SM busy
// (8 blocks of 256 threads per SM, 4,096 dependent steps per thread, median of 7):
//   form 0/1  the rounding alone: rint (FRND.F64 on sm_90) against the two binary64 adds
//             of 1.5 * 2^52 (exact for |t| <= 2^51 only);
//   form 2/3  the whole step with each rounding;
//   form 4/5  the same with the nonzero test as an or of the bits (integer pipe) instead of
//             a binary64 compare.
// It prints each form's time, the SM cycles per warp step and the ratio to the rint form
// of its pair. On the H200: FRND.F64 is no slower than an add (the two-add form 11-17%
// slower), the bits form of the nonzero test 6% faster in this loop; in the ssimulacra2
// frame neither moved the rate (engine/metrics/ssimulacra2/cuda/README.md, "Tried and
// dropped").
//
//   bazel build -c opt //bench/exact:strided_term_step_bench   (then run it on a GPU host)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace exactq {
namespace {

constexpr int kIters = 4096;

template <int kForm>
__global__ void Loop(const double* __restrict__ in, double* out, double scale) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  double x = in[i & 1023];
  double sum = 0.0;
  bool doubtful = false, nonzero = false;
  unsigned long long bits = 0;
#pragma unroll 4
  for (int k = 0; k < kIters; ++k) {
    const double t = __dmul_rn(x, scale);
    double r;
    if constexpr (kForm == 0 || kForm == 2 || kForm == 4) {
      r = rint(t);
    } else {
      r = __dsub_rn(__dadd_rn(t, 0x1.8p52), 0x1.8p52);
    }
    if constexpr (kForm >= 2) {
      const double rest = __dsub_rn(t, r);
      doubtful = doubtful | !(fabs(rest) < 0.5);
      if constexpr (kForm >= 4) {
        bits |= static_cast<unsigned long long>(__double_as_longlong(x)) & 0x7fffffffffffffffull;
      } else {
        nonzero = nonzero | (x != 0.0);
      }
    }
    sum = __dadd_rn(sum, r);
    x = __dadd_rn(x, 1.0);  // a new term each step (one add: every form has it)
  }
  if (kForm >= 4) nonzero = bits != 0;
  out[i] = sum + (doubtful ? 1.0 : 0.0) + (nonzero ? 2.0 : 0.0);
}

template <int kForm>
float Time(const double* in, double* out, int blocks) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> ms;
  for (int rep = 0; rep < 7; ++rep) {
    cudaEventRecord(a);
    Loop<kForm><<<blocks, 256>>>(in, out, 0x1p-20);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float t = 0;
    cudaEventElapsedTime(&t, a, b);
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return ms[3];
}

int Main() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "no usable GPU\n");
    return 2;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  std::printf("strided_term_step_bench on %s, sm_%d%d, %d SMs\n", prop.name, prop.major, prop.minor, sms);
  const int blocks = sms * 8;  // 2048 threads per SM
  double* in;
  double* out;
  cudaMalloc(&in, 1024 * sizeof(double));
  cudaMalloc(&out, size_t(blocks) * 256 * sizeof(double));
  std::vector<double> h(1024);
  for (int i = 0; i < 1024; ++i) h[i] = 1e3 + i * 0.37;
  cudaMemcpy(in, h.data(), 1024 * sizeof(double), cudaMemcpyHostToDevice);
  Time<0>(in, out, blocks);
  const double steps = double(blocks) * 256 / 32 * kIters;  // warp steps
  const char* names[] = {"rint + add",
                         "two-add round + add",
                         "rint step (rest, doubtful, nonzero)",
                         "two-add step (rest, doubtful, nonzero)",
                         "rint step, nonzero from bits",
                         "two-add step, nonzero from bits"};
  float t[6] = {Time<0>(in, out, blocks), Time<1>(in, out, blocks), Time<2>(in, out, blocks),
                Time<3>(in, out, blocks), Time<4>(in, out, blocks), Time<5>(in, out, blocks)};
  for (int f = 0; f < 6; ++f) {
    std::printf("%-42s %8.3f ms  %6.3f SM cycles per warp step (at 1.98 GHz), ratio to form 0 of its pair %.3f\n",
                names[f], t[f], t[f] * 1e-3 * 1.98e9 * sms / steps, t[f] / t[f & ~1]);
  }
  return 0;
}

}  // namespace
}  // namespace exactq

int main() { return exactq::Main(); }
