// GPU busy time over a window, from NVML's utilization samples: the share of time one or
// more kernels ran on the GPU, the number nvidia-smi and DCGM (and so the farm's Grafana)
// show. Benchmarks use it to report the GPU's idle time between frames.
//
// NVML ships with the NVIDIA driver, not with the CUDA toolkit, so it is loaded at run
// time (dlopen of libnvidia-ml.so.1): the benchmarks build everywhere and say why there
// is no number where the library or the device is missing.
//
//   std::string why;
//   auto window = bench::GpuUtilizationWindow::Start(pci_bus_id, &why);  // null: see why
//   ... the work ...
//   bench::GpuUtilization u = window->Finish();  // u.samples == 0: window too short
//   double idle = 1.0 - u.busy_fraction;
#ifndef EXACTQ_BENCH_COMMON_GPU_UTILIZATION_H_
#define EXACTQ_BENCH_COMMON_GPU_UTILIZATION_H_

#include <cstdint>
#include <memory>
#include <string>

namespace exactq {
namespace bench {

struct GpuUtilization {
  double busy_fraction = 0;  // mean of the samples, 0..1
  int samples = 0;           // NVML samples inside the window (the driver takes one every 1/6 s or so)
};

class GpuUtilizationWindow {
 public:
  // `pci_bus_id` as cudaDeviceGetPCIBusId writes it ("0000:19:00.0"): NVML numbers devices
  // its own way, not as CUDA_VISIBLE_DEVICES does.
  static std::unique_ptr<GpuUtilizationWindow> Start(const std::string& pci_bus_id, std::string* why_not);
  // The samples taken since Start.
  GpuUtilization Finish() const;

 private:
  GpuUtilizationWindow() = default;
  void* device_ = nullptr;
  uint64_t start_us_ = 0;
};

}  // namespace bench
}  // namespace exactq

#endif  // EXACTQ_BENCH_COMMON_GPU_UTILIZATION_H_
