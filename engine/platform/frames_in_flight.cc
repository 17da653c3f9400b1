#include "engine/platform/frames_in_flight.h"

#include <atomic>

namespace exactq {
namespace {

bool Counted(int device) { return device >= 0 && device < kMaxCountedDevices; }

std::atomic<int>& CountOf(int device) {
  static std::atomic<int> counts[kMaxCountedDevices] = {};
  return counts[device];
}

}  // namespace

FrameInFlight::FrameInFlight(int device) : device_(device), in_flight_(1) {
  if (Counted(device_)) in_flight_ = CountOf(device_).fetch_add(1, std::memory_order_relaxed) + 1;
}

FrameInFlight::~FrameInFlight() {
  if (Counted(device_)) CountOf(device_).fetch_sub(1, std::memory_order_relaxed);
}

int FramesInFlight(int device) { return Counted(device) ? CountOf(device).load(std::memory_order_relaxed) : 0; }

}  // namespace exactq
