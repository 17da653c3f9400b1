// Process-wide settings of the engine's runtime, set once at start-up (exactqd's flags)
// before any FrameScorer exists: which GPUs to use, and fault injection for tests.
#ifndef EXACTQ_ENGINE_RUNTIME_RUNTIME_CONFIG_H_
#define EXACTQ_ENGINE_RUNTIME_RUNTIME_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace exactq {

struct FaultInjection {
  // After this many frames scored on GPUs (process-wide), every GPU frame fails as a
  // device error would: auto falls back to the CPU, cuda reports UNAVAILABLE. -1: off.
  int fail_gpu_after_frames = -1;
  // Every GPU scorer's allocation fails as if device memory ran out.
  bool fail_gpu_allocations = false;
  // After this many frames scored on GPUs (process-wide), the next GPU frame fails as a
  // sticky error would (cudaErrorIllegalAddress: the context is poisoned), so its device
  // is lost for good; the other streams on it leave it too. -1: off.
  int lose_gpu_after_frames = -1;
};

// How a host thread waits for its GPU work (a frame's results, a decoder's picture):
// kSpin polls on a core until the work is done (CUDA's choice for a process with fewer
// contexts than cores: the lowest latency, a busy core per waiting thread); kYield polls
// but yields the core; kBlock sleeps until the device signals. A server with many
// streams has many threads waiting at once: spinning ones take the cores its decoders
// and readers need. Set for the process by ApplyGpuWait (gpu_scorer.h).
enum class GpuWait { kSpin, kYield, kBlock };

struct RuntimeConfig {
  // Device indices (after CUDA_VISIBLE_DEVICES) the engine may use; nullopt: all.
  std::optional<std::vector<int>> gpus;
  // Device memory admitted for the streams placed on one GPU (their buffers, estimated
  // from the geometry and metrics when a stream is placed); 0: 90% of the device's memory.
  // A stream that does not fit goes to the CPU under auto (out_of_memory) and gets
  // RESOURCE_EXHAUSTED under a forced cuda.
  uint64_t max_device_bytes = 0;
  // Back-off before a GPU that failed transiently is given new streams again (doubled
  // for each failure in a row; see DevicePool).
  int gpu_retry_seconds = 30;
  // Page-locked host memory for frame buffers (PinnedFrameMemory, pinned_frame_memory.h):
  // at most this many bytes, kept for reuse; 0: frames in ordinary memory.
  uint64_t pinned_frame_bytes = uint64_t{2} << 30;
  FaultInjection faults;
};

void SetRuntimeConfig(const RuntimeConfig& config);
const RuntimeConfig& GetRuntimeConfig();

// "0,2" -> {0, 2}; "" or "all" -> nullopt; "none" -> {} (CPU only).
absl::StatusOr<std::optional<std::vector<int>>> ParseGpuList(const std::string& text);
// "spin", "yield", "block"; InvalidArgument naming them otherwise.
absl::StatusOr<GpuWait> ParseGpuWait(const std::string& text);
const char* GpuWaitName(GpuWait wait);

// "" (off), or a comma-separated list of "gpu_fail_after=N", "gpu_lost_after=N",
// "gpu_alloc_fail".
absl::StatusOr<FaultInjection> ParseFaultInjection(const std::string& text);

}  // namespace exactq

#endif  // EXACTQ_ENGINE_RUNTIME_RUNTIME_CONFIG_H_
