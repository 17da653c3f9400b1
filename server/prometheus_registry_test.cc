#include "server/prometheus_registry.h"

#include "gtest/gtest.h"

namespace exactq::server {
namespace {

TEST(PrometheusRegistryTest, RendersCountersGaugesAndCumulativeHistograms) {
  PrometheusRegistry r;
  auto& frames = r.AddCounter("x_frames_total", "Frames.", {"metric", "backend"});
  frames.At({"psnr", "cpu"}).Increment();
  frames.At({"psnr", "cpu"}).Increment(2);
  frames.At({"ssim", "cuda"});
  r.AddGauge("x_active", "Active.").At({}).Set(3);
  auto& h = r.AddHistogram("x_seconds", "Latency.", {"stage"}, {0.1, 1.0});
  h.At({"compute"}).Observe(0.05);
  h.At({"compute"}).Observe(0.5);
  h.At({"compute"}).Observe(5.0);
  const std::string page = r.Render();
  EXPECT_EQ(page,
            "# HELP x_frames_total Frames.\n# TYPE x_frames_total counter\n"
            "x_frames_total{metric=\"psnr\",backend=\"cpu\"} 3\n"
            "x_frames_total{metric=\"ssim\",backend=\"cuda\"} 0\n"
            "# HELP x_active Active.\n# TYPE x_active gauge\nx_active 3\n"
            "# HELP x_seconds Latency.\n# TYPE x_seconds histogram\n"
            "x_seconds_bucket{stage=\"compute\",le=\"0.1\"} 1\n"
            "x_seconds_bucket{stage=\"compute\",le=\"1\"} 2\n"
            "x_seconds_bucket{stage=\"compute\",le=\"+Inf\"} 3\n"
            "x_seconds_sum{stage=\"compute\"} 5.55\n"
            "x_seconds_count{stage=\"compute\"} 3\n");
}

TEST(PrometheusRegistryTest, EscapesLabelValues) {
  PrometheusRegistry r;
  r.AddGauge("x_info", "Info.", {"version"}).At({"a\"b\\c\nd"}).Set(1);
  EXPECT_NE(r.Render().find("x_info{version=\"a\\\"b\\\\c\\nd\"} 1\n"), std::string::npos) << r.Render();
}

}  // namespace
}  // namespace exactq::server
