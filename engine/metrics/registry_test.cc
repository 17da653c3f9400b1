#include "engine/metrics/registry.h"

#include <set>
#include <string>

#include "gtest/gtest.h"

namespace exactq {
namespace {

TEST(RegistryTest, ListsPsnrWithItsCapabilities) {
  const std::vector<MetricInfo> metrics = ListMetrics();
  const MetricInfo* psnr = nullptr;
  for (const MetricInfo& info : metrics) {
    if (info.name == "psnr") psnr = &info;
  }
  ASSERT_NE(psnr, nullptr);
  EXPECT_EQ(psnr->definition_version, 1);
  const std::set<std::string> outputs(psnr->outputs.begin(), psnr->outputs.end());
  for (const char* name : {"psnr_y", "psnr_cb", "psnr_cr"}) EXPECT_EQ(outputs.count(name), 1u);
  std::set<std::string> options;
  for (const MetricOptionInfo& option : psnr->options) {
    options.insert(option.name);
    EXPECT_FALSE(option.description.empty()) << option.name;
  }
  EXPECT_EQ(options, (std::set<std::string>{"enable_chroma", "enable_mse", "min_sse", "reduced_hbd_peak"}));
}

TEST(RegistryTest, NamesAreUnique) {
  std::set<std::string> names;
  for (const MetricInfo& info : ListMetrics()) {
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
  }
}

TEST(RegistryTest, CreatesEveryListedMetricWithDefaults) {
  for (const MetricInfo& info : ListMetrics()) {
    absl::StatusOr<std::unique_ptr<Metric>> metric = CreateMetric(info.name, {});
    ASSERT_TRUE(metric.ok()) << info.name << ": " << metric.status();
    EXPECT_EQ((*metric)->name(), info.name);
    EXPECT_EQ((*metric)->definition_version(), info.definition_version);
  }
}

TEST(RegistryTest, CreatedMetricHonoursOptions) {
  absl::StatusOr<std::unique_ptr<Metric>> psnr = CreateMetric("psnr", {{"enable_chroma", "false"}});
  ASSERT_TRUE(psnr.ok());
  EXPECT_EQ((*psnr)->OutputNames({8, 8, {ChromaLayout::k420, 8}}), (std::vector<std::string>{"psnr_y"}));
}

TEST(RegistryTest, UnknownMetricOrOptionIsInvalidArgument) {
  absl::StatusOr<std::unique_ptr<Metric>> unknown = CreateMetric("psnr_hvs", {});
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("unknown metric 'psnr_hvs' (known: psnr, ssim, ssimulacra2, vmaf"),
            absl::string_view::npos)
      << unknown.status();
  EXPECT_EQ(CreateMetric("psnr", {{"bogus", "1"}}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(RegistryTest, VmafModelOption) {
  for (const char* model : {"vmaf_v0.6.1", "vmaf_4k_v0.6.1", "vmaf_v0.6.1neg"}) {
    EXPECT_TRUE(CreateMetric("vmaf", {{"model", model}}).ok()) << model;
  }
  absl::StatusOr<std::unique_ptr<Metric>> bad = CreateMetric("vmaf", {{"model", "vmaf_b_v0.6.3"}});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("vmaf_v0.6.1, vmaf_4k_v0.6.1, vmaf_v0.6.1neg"), absl::string_view::npos)
      << bad.status();
}

}  // namespace
}  // namespace exactq
