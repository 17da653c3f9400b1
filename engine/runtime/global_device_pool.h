// The process's DevicePool, built on first use from ListGpuDevices() filtered by
// RuntimeConfig::gpus, with RuntimeConfig's back-off: exactqd sets the configuration
// before the first FrameScorer exists, so every stream and the health reporter share
// one view of the GPUs.
#ifndef EXACTQ_ENGINE_RUNTIME_GLOBAL_DEVICE_POOL_H_
#define EXACTQ_ENGINE_RUNTIME_GLOBAL_DEVICE_POOL_H_

#include "engine/runtime/device_pool.h"

namespace exactq {

DevicePool& GlobalDevicePool();

}  // namespace exactq

#endif  // EXACTQ_ENGINE_RUNTIME_GLOBAL_DEVICE_POOL_H_
