#include "bench/common/gpu_utilization.h"

#include <dlfcn.h>

#include <chrono>
#include <vector>

namespace exactq {
namespace bench {
namespace {

// The few NVML declarations used here (nvml.h is not installed with the toolkit); the
// layouts are NVML's stable C ABI.
using NvmlReturn = int;
using NvmlDevice = void*;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr int kNvmlGpuUtilizationSamples = 1;
union NvmlValue {
  double d;
  unsigned int ui;
  unsigned long ul;
  unsigned long long ull;
  long long sll;
};
struct NvmlSample {
  unsigned long long time_stamp_us;
  NvmlValue value;
};
enum NvmlValueType { kDouble = 0, kUnsignedInt = 1, kUnsignedLong = 2, kUnsignedLongLong = 3, kSignedLongLong = 4 };

struct Nvml {
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*handle_by_pci)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*samples)(NvmlDevice, int, unsigned long long, int*, unsigned int*, NvmlSample*) = nullptr;
  std::string error;
};

const Nvml& LoadNvml() {
  static const Nvml nvml = [] {
    Nvml n;
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      n.error = "libnvidia-ml.so.1 not found (NVML comes with the NVIDIA driver)";
      return n;
    }
    n.init = reinterpret_cast<NvmlReturn (*)()>(dlsym(lib, "nvmlInit_v2"));
    n.handle_by_pci =
        reinterpret_cast<NvmlReturn (*)(const char*, NvmlDevice*)>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    n.samples = reinterpret_cast<NvmlReturn (*)(NvmlDevice, int, unsigned long long, int*, unsigned int*, NvmlSample*)>(
        dlsym(lib, "nvmlDeviceGetSamples"));
    if (n.init == nullptr || n.handle_by_pci == nullptr || n.samples == nullptr) {
      n.error = "libnvidia-ml.so.1 lacks nvmlInit_v2, nvmlDeviceGetHandleByPciBusId_v2 or nvmlDeviceGetSamples";
      n.init = nullptr;
      return n;
    }
    if (NvmlReturn r = n.init(); r != kNvmlSuccess) {
      n.error = "nvmlInit_v2 failed with NVML error " + std::to_string(r);
      n.init = nullptr;
    }
    return n;
  }();
  return nvml;
}

// NVML stamps its samples in microseconds of the system clock.
uint64_t NowUs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

double SampleValue(const NvmlSample& s, int type) {
  switch (type) {
    case kDouble:
      return s.value.d;
    case kUnsignedInt:
      return s.value.ui;
    case kUnsignedLong:
      return static_cast<double>(s.value.ul);
    case kUnsignedLongLong:
      return static_cast<double>(s.value.ull);
    case kSignedLongLong:
      return static_cast<double>(s.value.sll);
    default:
      return 0;
  }
}

}  // namespace

std::unique_ptr<GpuUtilizationWindow> GpuUtilizationWindow::Start(const std::string& pci_bus_id, std::string* why_not) {
  const Nvml& nvml = LoadNvml();
  if (nvml.init == nullptr) {
    *why_not = nvml.error;
    return nullptr;
  }
  NvmlDevice device = nullptr;
  if (NvmlReturn r = nvml.handle_by_pci(pci_bus_id.c_str(), &device); r != kNvmlSuccess) {
    *why_not = "no NVML device at PCI bus id " + pci_bus_id + " (NVML error " + std::to_string(r) + ")";
    return nullptr;
  }
  std::unique_ptr<GpuUtilizationWindow> window(new GpuUtilizationWindow());
  window->device_ = device;
  window->start_us_ = NowUs();
  return window;
}

GpuUtilization GpuUtilizationWindow::Finish() const {
  const Nvml& nvml = LoadNvml();
  GpuUtilization u;
  int type = 0;
  unsigned int count = 0;
  // A first call with no buffer asks how many samples the driver holds.
  if (nvml.samples(device_, kNvmlGpuUtilizationSamples, start_us_, &type, &count, nullptr) != kNvmlSuccess ||
      count == 0) {
    return u;
  }
  std::vector<NvmlSample> samples(count);
  if (nvml.samples(device_, kNvmlGpuUtilizationSamples, start_us_, &type, &count, samples.data()) != kNvmlSuccess) {
    return u;
  }
  double total = 0;
  for (unsigned int i = 0; i < count; ++i) {
    if (samples[i].time_stamp_us <= start_us_) continue;
    total += SampleValue(samples[i], type);
    ++u.samples;
  }
  if (u.samples > 0) u.busy_fraction = total / u.samples / 100.0;
  return u;
}

}  // namespace bench
}  // namespace exactq
