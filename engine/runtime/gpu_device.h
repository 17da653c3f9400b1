// GpuDevice: what the runtime knows of one GPU. Its own header so that plain C++
// (DevicePool) can name devices without linking a GpuScorer implementation.
#ifndef EXACTQ_ENGINE_RUNTIME_GPU_DEVICE_H_
#define EXACTQ_ENGINE_RUNTIME_GPU_DEVICE_H_

#include <cstdint>
#include <string>

namespace exactq {

struct GpuDevice {
  int index = 0;                   // after CUDA_VISIBLE_DEVICES
  std::string name;                // "NVIDIA H200"
  std::string compute_capability;  // "9.0"
  uint64_t memory_bytes = 0;
};

}  // namespace exactq

#endif  // EXACTQ_ENGINE_RUNTIME_GPU_DEVICE_H_
