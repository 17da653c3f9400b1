// StagedCopy: copies host buffers into a staging buffer in chunks, on the calling thread
// and on a small process-wide pool of helper threads, and reports each finished prefix
// to the caller as soon as it is complete, so the caller can start the host-to-device
// copy of the first chunks while the later ones are still being copied on the host.
//
// DeviceFrameBuffer uses it to move frames from the caller's ordinary (pageable)
// memory into its pinned staging buffers: a single memcpy of a 4K pair (25 MB)
// takes longer than the PCIe copy itself, so the host copy is split across threads and
// pipelined with the DMA. Plain C++ (no CUDA): the pool and its ordering are tested
// without a GPU.
//
//   const CopySpan spans[] = {{ref.bytes(), staging, n}, {dist.bytes(), staging + n, n}};
//   StagedCopy(spans, [&](size_t span, size_t begin, size_t end) {
//     cudaMemcpyAsync(device[span] + begin, staging + span * n + begin, end - begin, ...);
//   });
//
// Tuning (read once, when the pool starts; defaults in parentheses):
//   EXACTQ_STAGING_THREADS   helper threads (min(8, hardware threads - 1)); 0: the caller alone
//   EXACTQ_STAGING_CHUNK_KIB chunk size in KiB (512: on an H200 host it beat 128 and 32
//                            at 4 and 16 streams, bench/results/runtime_psnr_h200.txt)
//   EXACTQ_STAGING_SPIN_US   how long an idle helper polls for the next job before it
//                            sleeps (200), so back-to-back frames find it awake
//   EXACTQ_STAGING_CROWD     copies in progress at once beyond which each copies its spans
//                            whole (helpers / 2). On the H200 host (16 cores, 8 helpers),
//                            4K at 8 streams x 2 frames in flight: whole spans 1,907 psnr
//                            and 2,942 ssim frames/s against 1,713 and 2,573 chunked; at
//                            1 stream chunks win, 2,058 and 1,946 against 1,173 and 1,400.
#ifndef EXACTQ_ENGINE_PLATFORM_STAGED_COPY_H_
#define EXACTQ_ENGINE_PLATFORM_STAGED_COPY_H_

#include <cstddef>

#include "absl/functional/function_ref.h"
#include "absl/types/span.h"

namespace exactq {

struct CopySpan {
  const void* src;
  void* dst;
  size_t bytes;
};

struct StagedCopySettings {
  int helpers;         // threads in the process-wide pool
  size_t chunk_bytes;  // the unit of work and of reporting
  int spin_us;         // idle helpers poll this long before sleeping
  int crowd;           // copies in progress beyond which spans are copied whole
};

// The pool's settings (from the environment, see above); starts nothing.
const StagedCopySettings& GetStagedCopySettings();

// Copies every span's bytes from src to dst (the ranges must not overlap) and calls
// `ready(span, begin, end)` on the calling thread for byte ranges [begin, end) of span
// `span` whose copy is complete. The calls cover every byte of every span exactly once,
// in order: span 0 from offset 0 up, then span 1, and so on; a call is made as soon as
// its range and everything before it are copied. Returns once every byte is copied and
// reported. Spans of zero bytes are skipped. Safe to call from many threads at once
// (they share the helpers).
void StagedCopy(absl::Span<const CopySpan> spans, absl::FunctionRef<void(size_t span, size_t begin, size_t end)> ready);

}  // namespace exactq

#endif  // EXACTQ_ENGINE_PLATFORM_STAGED_COPY_H_
