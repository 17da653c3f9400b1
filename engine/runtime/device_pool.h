// DevicePool: the process's GPUs and, for each, whether it may take new work. It is
// the engine's device health registry: FrameScorer asks it for a device when it
// places a stream, reports every GPU failure to it (classified by DeviceFault), and
// checks before each GPU frame that its device has not been lost meanwhile. The server
// reads it for readiness, /metrics and capabilities.
//
// A device is in one of three states:
//   usable        new streams may be placed on it;
//   cooling_down  a transient failure took it out; after a back-off (retry_after,
//                 doubled for each failure in a row, capped) it is handed out again,
//                 and the next result decides: a success clears the count, another
//                 failure doubles the wait;
//   lost          a poisoned context (DeviceFault::kPoisoned) or max_failures_in_row
//                 transient failures in a row: out for good, since a CUDA context hit
//                 by a sticky error cannot be repaired inside the process.
// Streams already on a cooling-down device keep it (their own failures move them);
// streams on a lost device leave it before their next frame.
//
// Plain C++ (no CUDA), so every rule is tested without a GPU; the clock is injectable.
//
//   DevicePool pool(devices, {});
//   std::optional<GpuDevice> d = pool.NextDevice();        // nullopt: none usable
//   pool.ReportFailure(d->index, DeviceFault::kPoisoned, "cudaErrorIllegalAddress");
//   pool.AllLost();                                        // true: report NOT_SERVING
#ifndef EXACTQ_ENGINE_RUNTIME_DEVICE_POOL_H_
#define EXACTQ_ENGINE_RUNTIME_DEVICE_POOL_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/runtime/device_fault.h"
#include "engine/runtime/gpu_device.h"

namespace exactq {

enum class DeviceState { kUsable, kCoolingDown, kLost };
const char* DeviceStateName(DeviceState state);  // "usable", "cooling_down", "lost"

struct DeviceHealth {
  GpuDevice device;
  DeviceState state = DeviceState::kUsable;
  int failures_in_row = 0;
  int64_t failures_total = 0;
  std::string last_error;                           // empty until the first failure
  std::chrono::steady_clock::duration retry_in{0};  // cooling_down: time left
};

class DevicePool {
 public:
  using Clock = std::chrono::steady_clock;
  struct Options {
    // First back-off after a transient failure; doubled per failure in a row.
    Clock::duration retry_after = std::chrono::seconds(30);
    Clock::duration max_retry_after = std::chrono::minutes(10);
    // Transient failures in a row (no success between) after which a device is lost:
    // a device that fails every time it is tried is as good as gone.
    int max_failures_in_row = 5;
    std::function<Clock::time_point()> now = [] { return Clock::now(); };
  };

  // `devices`: the GPUs this process was given. `empty_reason` says why there are none
  // ("no CUDA device is visible"), for error messages.
  DevicePool(std::vector<GpuDevice> devices, Options options, std::string empty_reason = "");
  DevicePool(const DevicePool&) = delete;
  DevicePool& operator=(const DevicePool&) = delete;

  // A usable device for a new stream, in turn over the usable ones (a device whose
  // back-off has ended counts as usable again); nullopt when there is none.
  std::optional<GpuDevice> NextDevice();
  // Whether `index` was lost for good (cheap: one atomic load, asked per frame).
  bool IsLost(int index) const;

  // A frame scored on `index`: clears its failures in a row.
  void ReportSuccess(int index);
  // A failure on `index`. kNone is ignored (not the device's fault).
  void ReportFailure(int index, DeviceFault fault, const std::string& error);

  int configured() const { return static_cast<int>(entries_.size()); }
  // Devices that would take a new stream now.
  int usable() const;
  // GPUs were given and every one is lost: the process cannot serve as a GPU server.
  bool AllLost() const;
  std::vector<DeviceHealth> Snapshot() const;
  // Why NextDevice found nothing: "cuda:0 lost (…); cuda:1 cooling down for 12 s (…)",
  // or the empty reason.
  std::string UnavailableReason() const;

 private:
  struct Entry {
    GpuDevice device;
    std::atomic<int> state{static_cast<int>(DeviceState::kUsable)};
    std::atomic<int> failures_in_row{0};
    int64_t failures_total = 0;
    std::string last_error;
    Clock::time_point retry_at{};
  };
  Entry* Find(int index) const;
  // Cooling-down devices whose back-off ended become usable; under mutex_.
  void ReviveLocked(Clock::time_point now);

  const Options options_;
  const std::string empty_reason_;
  std::unique_ptr<Entry[]> storage_;
  std::vector<Entry*> entries_;
  mutable std::mutex mutex_;  // guards state transitions, last_error, retry_at, next_
  size_t next_ = 0;
};

}  // namespace exactq

#endif  // EXACTQ_ENGINE_RUNTIME_DEVICE_POOL_H_
