#include "engine/platform/host_wait_event.h"

#include <atomic>

namespace exactq {
namespace {

std::atomic<bool> host_waits_block{true};

}  // namespace

void SetHostWaitsBlock(bool block) { host_waits_block.store(block, std::memory_order_relaxed); }

bool HostWaitsBlock() { return host_waits_block.load(std::memory_order_relaxed); }

cudaError_t CreateHostWaitEvent(cudaEvent_t* event, bool timing) {
  unsigned int flags = timing ? cudaEventDefault : cudaEventDisableTiming;
  if (HostWaitsBlock()) flags |= cudaEventBlockingSync;
  return cudaEventCreateWithFlags(event, flags);
}

}  // namespace exactq
