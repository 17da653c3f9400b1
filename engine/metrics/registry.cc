#include "engine/metrics/registry.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/metrics/psnr/psnr.h"
#include "engine/metrics/ssim/ssim.h"
#include "engine/metrics/ssimulacra2/ssimulacra2.h"
#include "engine/metrics/vmaf/vmaf.h"
#if EXACTQ_WITH_CUDA
#include "engine/metrics/psnr/cuda/psnr_cuda.h"
#include "engine/metrics/ssim/cuda/ssim_cuda.h"
#include "engine/metrics/ssimulacra2/cuda/ssimulacra2_cuda.h"
#include "engine/metrics/vmaf/cuda/vmaf_cuda.h"
#define EXACTQ_GPU_FACTORY(factory) &factory
#else
#define EXACTQ_GPU_FACTORY(factory) nullptr
#endif

namespace exactq {
namespace {

struct MetricRegistration {
  const MetricInfo& (*info)();
  absl::StatusOr<std::unique_ptr<Metric>> (*create)(const MetricOptions& options);
  const GpuMetricFactory& (*gpu)();  // null: no CUDA twin (or a build without CUDA)
};

// Adding a metric: its folder under engine/metrics/, and one line here.
constexpr MetricRegistration kRegisteredMetrics[] = {
    {&PsnrMetricInfo, &CreatePsnrMetric, EXACTQ_GPU_FACTORY(PsnrGpuMetricFactory)},
    {&SsimMetricInfo, &CreateSsimMetric, EXACTQ_GPU_FACTORY(ssim::SsimGpuMetricFactory)},
    {&Ssimulacra2MetricInfo, &CreateSsimulacra2Metric, EXACTQ_GPU_FACTORY(ssimulacra2::Ssimulacra2GpuMetricFactory)},
    {&VmafMetricInfo, &CreateVmafMetric, EXACTQ_GPU_FACTORY(vmaf::VmafGpuMetricFactory)},
};

}  // namespace

absl::StatusOr<std::unique_ptr<Metric>> CreateMetric(absl::string_view name, const MetricOptions& options) {
  for (const MetricRegistration& registration : kRegisteredMetrics) {
    if (registration.info().name == name) return registration.create(options);
  }
  std::vector<std::string> known;
  for (const MetricRegistration& registration : kRegisteredMetrics) {
    known.push_back(registration.info().name);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown metric '", name, "' (known: ", absl::StrJoin(known, ", "), ")"));
}

const GpuMetricFactory* FindGpuMetricFactory(absl::string_view name) {
  for (const MetricRegistration& registration : kRegisteredMetrics) {
    if (registration.info().name == name && registration.gpu != nullptr) return &registration.gpu();
  }
  return nullptr;
}

std::vector<MetricInfo> ListMetrics() {
  std::vector<MetricInfo> metrics;
  for (const MetricRegistration& registration : kRegisteredMetrics) {
    metrics.push_back(registration.info());
  }
  return metrics;
}

std::string MetricsHelp() {
  std::string out = "Metrics (--metrics NAME[:OPTION=VALUE...],...):\n";
  for (const MetricInfo& info : ListMetrics()) {
    out += "  " + info.name + " (definition version " + std::to_string(info.definition_version) +
           "): " + info.description + "\n    outputs:";
    for (const std::string& o : info.outputs) out += " " + o;
    out += "\n";
    for (const MetricOptionInfo& option : info.options) {
      out += "    " + info.name + ":" + option.name + "=" + option.default_value + "  " + option.description + "\n";
    }
  }
  return out;
}

}  // namespace exactq
