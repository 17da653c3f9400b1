// The INEXACT baseline of the ssim CUDA benchmark: the same term kernels as the exact
// twin (engine/metrics/ssim/cuda/ssim_cuda_terms.cuh), with a tree sum in place of the
// exact ordered sum. Its result is NOT the reference's (a tree adds in another order); it
// exists only to show what exactness costs, and lives in bench/ on purpose (docs/design.md:
// no inexact variant in the engine).
//
// One fused kernel: each block computes its chunk's 1024 terms in registers (nothing is
// stored), reduces them with a block tree, writes one double, and the last block to
// finish reduces those chunk sums in a fixed tree. Plain C++ declarations.
//
//   void* scratch;  // SsimInexactScratchBytes(pixels), zeroed once with cudaMemset
//   EnqueueSsimInexactSum(frame, scratch, device_out, stream);  // *device_out = tree sum
#ifndef EXACTQ_BENCH_SSIM_SSIM_CUDA_INEXACT_H_
#define EXACTQ_BENCH_SSIM_SSIM_CUDA_INEXACT_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "engine/metrics/ssim/cuda/ssim_cuda_pipeline.h"

namespace exactq {
namespace bench {

// Chunk sums and the completion counter. Zero it once after allocating; the kernel leaves
// the counter at zero again.
size_t SsimInexactScratchBytes(int64_t pixels);

// Uses f.ref, f.dis, f.width, f.height, f.bit_depth (not f.terms or f.workspace).
// `out`: one double in device memory.
cudaError_t EnqueueSsimInexactSum(const ssim::gpu::SsimDeviceFrame& f, void* scratch, double* out, cudaStream_t stream);

}  // namespace bench
}  // namespace exactq

#endif  // EXACTQ_BENCH_SSIM_SSIM_CUDA_INEXACT_H_
