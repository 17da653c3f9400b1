// ssimulacra2: the VMAF fork's SSIMULACRA2 for YUV input, as a Metric.
//
// Per frame: YUV -> linear RGB (nearest chroma, the yuv_matrix option, the sRGB EOTF by
// table) -> XYB; at up to 6 scales of a 2x2 pyramid, recursive-Gaussian blurs, per
// pixel SSIM and edge (ringing, blurring) terms summed in raster order; 108 weighted
// norms pooled into a score in [0, 100] (higher is better; identical frames give
// exactly 100). ssimulacra2_reference.h has the definition step by step, metrics-spec.md
// section B the sources. The arithmetic is the scalar arithmetic of lusoris/vmaf at
// c2a3c7e0 (separate roundings, no FMA): within 2.3e-7 of that fork on the shared
// corpus, and bit for bit once its AVX2 edge map is imitated (README.md).
//
// Input: 4:2:0, 4:2:2, 4:4:4 at 8..16 bits, at least 8x8. 4:0:0 and smaller frames
// are refused (InvalidArgument): there is no chroma to convert, or no scale to score.
// Output: ssimulacra2.
// Option (the fork's name, values and default):
//   yuv_matrix=0  0 = BT.709 limited range, 1 = BT.601 limited, 2 = BT.709 full,
//                 3 = BT.601 full
//
// The metric computes with Ssimulacra2Threads (ssimulacra2_threads.h), which returns
// the reference's bits for every thread count; one thread unless the creator asks for
// more.
//
// Definition version 1.

#ifndef EXACTQ_ENGINE_METRICS_SSIMULACRA2_SSIMULACRA2_H_
#define EXACTQ_ENGINE_METRICS_SSIMULACRA2_SSIMULACRA2_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/metrics/metric.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_math.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_threads.h"

namespace exactq {

struct Ssimulacra2Options {
  ssimulacra2::YuvMatrix yuv_matrix = ssimulacra2::YuvMatrix::kBt709Limited;
};

// Parses options against Ssimulacra2MetricInfo(); InvalidArgument naming a bad or
// unknown one.
absl::StatusOr<Ssimulacra2Options> ParseSsimulacra2Options(const MetricOptions& options);

class Ssimulacra2Metric : public Metric {
 public:
  explicit Ssimulacra2Metric(const Ssimulacra2Options& options, int num_threads = 1)
      : options_(options), engine_(num_threads) {}

  const MetricInfo& info() const override;
  // 4:2:0, 4:2:2 or 4:4:4, any depth 8..16, at least 8x8.
  absl::Status CheckInput(const FrameGeometry& geometry) const override;
  std::vector<std::string> OutputNames(const FrameGeometry& geometry) const override;

  const Ssimulacra2Options& options() const { return options_; }

 protected:
  absl::StatusOr<FrameScores> ScoreFrame(const Frame& ref, const Frame& dist) override;

 private:
  Ssimulacra2Options options_;
  ssimulacra2::Ssimulacra2Threads engine_;
};

// For the registry.
const MetricInfo& Ssimulacra2MetricInfo();
absl::StatusOr<std::unique_ptr<Metric>> CreateSsimulacra2Metric(const MetricOptions& options);

}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_SSIMULACRA2_SSIMULACRA2_H_
