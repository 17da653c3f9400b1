// ssim: the VMAF fork's fixed-point SSIM (Xiph.Org), luma only, as a Metric.
//
// Per frame: integer Gaussian window moments (9x9, sigma 1.5, truncated at the frame's
// edges), one double term per pixel, the terms summed in raster order, divided by the
// sum of the window weights (ssim_reference.h has the definition step by step,
// metrics-spec.md section A the sources). Any chroma layout (chroma is not read),
// 8..16 bits, any size from 1x1. Equal to the fork and libvmaf bit for bit at 8..12
// bits; correct at 16 bits, where both peers overflow an int.
//
// Outputs: ssim (always linear), then ssim_db with enable_db.
// Options (the fork's names and defaults):
//   enable_db=false  also output ssim_db = -10*log10(1 - ssim); max_db when ssim >= 1
//   clip_db=false    cap ssim_db at ceil(10*log10(peak^2 / (0.5 / (W*H)))); without it
//                    the cap is +inf (identical frames can give +inf). No effect
//                    without enable_db, as in the fork.
// Unlike the fork, which replaces ssim by the dB value, ExactQ reports both.
//
// The metric computes with SsimThreads (ssim_threads.h), which returns the reference's
// bits for every thread count; one thread unless the creator asks for more.
//
// Definition version 1.

#ifndef EXACTQ_ENGINE_METRICS_SSIM_SSIM_H_
#define EXACTQ_ENGINE_METRICS_SSIM_SSIM_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/metrics/metric.h"
#include "engine/metrics/ssim/ssim_score.h"
#include "engine/metrics/ssim/ssim_threads.h"

namespace exactq {

// Parses options against SsimMetricInfo(); InvalidArgument naming a bad or unknown one.
absl::StatusOr<ssim::SsimOptions> ParseSsimOptions(const MetricOptions& options);

class SsimMetric : public Metric {
 public:
  explicit SsimMetric(const ssim::SsimOptions& options, int num_threads = 1)
      : options_(options), engine_(num_threads) {}

  const MetricInfo& info() const override;
  // Any valid geometry: every layout, every depth from 8 to 16, 1x1 and up.
  absl::Status CheckInput(const FrameGeometry& geometry) const override;
  std::vector<std::string> OutputNames(const FrameGeometry& geometry) const override;

  const ssim::SsimOptions& options() const { return options_; }

 protected:
  absl::StatusOr<FrameScores> ScoreFrame(const Frame& ref, const Frame& dist) override;

 private:
  ssim::SsimOptions options_;
  ssim::SsimThreads engine_;
};

// For the registry.
const MetricInfo& SsimMetricInfo();
absl::StatusOr<std::unique_ptr<Metric>> CreateSsimMetric(const MetricOptions& options);

}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_SSIM_SSIM_H_
