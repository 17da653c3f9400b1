#include "server/startup_self_check.h"

#include "absl/strings/str_cat.h"
#include "engine/golden/self_check.h"
#include "engine/runtime/device_fault.h"
#include "spdlog/spdlog.h"

namespace exactq::server {

bool StartupSelfCheck(DevicePool* pool) {
  const golden::CheckReport cpu = golden::CheckCpu();
  for (const golden::Difference& d : cpu.differences) spdlog::error("self-check: {}", golden::Describe(d));
  if (!cpu.ok()) {
    if (!cpu.error.ok()) spdlog::error("self-check: cpu: {}", std::string(cpu.error.message()));
    spdlog::error("self-check failed on the CPU: this build does not return the reference bits; not serving");
    return false;
  }
  spdlog::info("self-check: cpu: {} outputs equal to the golden bits in {:.3f} s", cpu.outputs, cpu.seconds);
  for (const DeviceHealth& d : pool->Snapshot()) {
    const golden::CheckReport gpu = golden::CheckGpu(d.device.index);
    for (const golden::Difference& diff : gpu.differences) {
      spdlog::error("self-check: {}", golden::Describe(diff));
    }
    if (gpu.ok() && gpu.outputs > 0) {
      spdlog::info("self-check: {} ({}): {} outputs equal to the golden bits in {:.3f} s ({} not taken by the GPU)",
                   gpu.where, d.device.name, gpu.outputs, gpu.seconds, gpu.skipped);
      continue;
    }
    const std::string why =
        !gpu.error.ok()
            ? absl::StrCat("self-check: ", gpu.error.message())
            : (gpu.differences.empty()
                   ? std::string("self-check: the GPU took none of the golden pairs")
                   : absl::StrCat("self-check: ", gpu.differences.size(), " outputs differ from the golden bits"));
    spdlog::error("{} ({}): {}; taken out of the pool", gpu.where, d.device.name, why);
    pool->ReportFailure(d.device.index, DeviceFault::kPoisoned, why);
  }
  return true;
}

}  // namespace exactq::server
