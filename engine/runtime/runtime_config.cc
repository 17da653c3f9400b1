#include "engine/runtime/runtime_config.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace exactq {

namespace {
RuntimeConfig& MutableConfig() {
  static RuntimeConfig config;
  return config;
}
}  // namespace

void SetRuntimeConfig(const RuntimeConfig& config) { MutableConfig() = config; }
const RuntimeConfig& GetRuntimeConfig() { return MutableConfig(); }

absl::StatusOr<std::optional<std::vector<int>>> ParseGpuList(const std::string& text) {
  if (text.empty() || text == "all") return std::optional<std::vector<int>>();
  std::vector<int> gpus;
  if (text == "none") return std::optional<std::vector<int>>(gpus);
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    int index;
    if (!absl::SimpleAtoi(item, &index) || index < 0) {
      return absl::InvalidArgumentError(absl::StrCat("--gpus: '", item, "' is not a device index"));
    }
    gpus.push_back(index);
  }
  return std::optional<std::vector<int>>(gpus);
}

absl::StatusOr<GpuWait> ParseGpuWait(const std::string& text) {
  for (GpuWait wait : {GpuWait::kSpin, GpuWait::kYield, GpuWait::kBlock}) {
    if (text == GpuWaitName(wait)) return wait;
  }
  return absl::InvalidArgumentError(absl::StrCat("--gpu_wait: '", text, "' is not spin, yield or block"));
}

const char* GpuWaitName(GpuWait wait) {
  switch (wait) {
    case GpuWait::kSpin:
      return "spin";
    case GpuWait::kYield:
      return "yield";
    case GpuWait::kBlock:
      return "block";
  }
  return "?";
}

absl::StatusOr<FaultInjection> ParseFaultInjection(const std::string& text) {
  FaultInjection faults;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    if (item == "gpu_alloc_fail") {
      faults.fail_gpu_allocations = true;
    } else if (absl::ConsumePrefix(&item, "gpu_fail_after=")) {
      if (!absl::SimpleAtoi(item, &faults.fail_gpu_after_frames) || faults.fail_gpu_after_frames < 0) {
        return absl::InvalidArgumentError(absl::StrCat("--fault_injection: bad frame count '", item, "'"));
      }
    } else if (absl::ConsumePrefix(&item, "gpu_lost_after=")) {
      if (!absl::SimpleAtoi(item, &faults.lose_gpu_after_frames) || faults.lose_gpu_after_frames < 0) {
        return absl::InvalidArgumentError(absl::StrCat("--fault_injection: bad frame count '", item, "'"));
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat("--fault_injection: unknown fault '", item,
                                                     "' (known: gpu_fail_after=N, gpu_lost_after=N, gpu_alloc_fail)"));
    }
  }
  return faults;
}

}  // namespace exactq
