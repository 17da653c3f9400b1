#include "engine/runtime/global_device_pool.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "engine/runtime/gpu_scorer.h"
#include "engine/runtime/runtime_config.h"

namespace exactq {

namespace {

DevicePool* BuildPool() {
  const RuntimeConfig& config = GetRuntimeConfig();
  DevicePool::Options options;
  options.retry_after = std::chrono::seconds(std::max(0, config.gpu_retry_seconds));
  options.max_retry_after = std::max<DevicePool::Clock::duration>(options.retry_after, std::chrono::minutes(10));
  absl::StatusOr<std::vector<GpuDevice>> devices = ListGpuDevices();
  if (!devices.ok()) return new DevicePool({}, options, std::string(devices.status().message()));
  if (!config.gpus.has_value()) return new DevicePool(std::move(*devices), options);
  std::vector<GpuDevice> allowed;
  for (GpuDevice& d : *devices) {
    if (std::find(config.gpus->begin(), config.gpus->end(), d.index) != config.gpus->end()) {
      allowed.push_back(std::move(d));
    }
  }
  return new DevicePool(
      std::move(allowed), options,
      config.gpus->empty() ? "no usable GPU: --gpus=none" : "no usable GPU: --gpus excludes every visible device");
}

}  // namespace

DevicePool& GlobalDevicePool() {
  // Never destroyed: streams may still report to it while the process exits.
  static DevicePool* pool = BuildPool();
  return *pool;
}

}  // namespace exactq
