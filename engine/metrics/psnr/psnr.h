// psnr: libvmaf's integer PSNR per plane, extended to every depth from 8 to 16 bits.
//
// For each plane: the exact integer SSE of the two frames (plane_sse.h), then libvmaf's
// dB formula (psnr_math.h) with peak 2^bpc - 1 and a clamp of 6*bpc + 12 dB. Outputs
// psnr_y, psnr_cb, psnr_cr (psnr_y only for 4:0:0 or with enable_chroma=false), each
// followed by mse_<plane> when enable_mse is set, in libvmaf's order. The scores equal
// libvmaf 3.2.0's and the lusoris/vmaf fork's bit for bit on the shared corpus
// (psnr_corpus_test.cc).
//
// Options (libvmaf's names and defaults):
//   enable_chroma=true      score Cb and Cr too
//   enable_mse=false        also output each plane's MSE
//   min_sse=0               if > 0, clamp at the PSNR of this SSE instead of 6*bpc+12
//   reduced_hbd_peak=false  peak 255 * 2^(bpc-8) instead of 2^bpc - 1 above 8 bits
// Left out: libvmaf's enable_apsnr (an aggregate PSNR over all frames' summed SSEs,
// computed at the end of a stream): it is pooling, not a per-frame score.
//
// Definition version 1.

#ifndef EXACTQ_ENGINE_METRICS_PSNR_PSNR_H_
#define EXACTQ_ENGINE_METRICS_PSNR_PSNR_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "engine/metrics/metric.h"

namespace exactq {

struct PsnrOptions {
  bool enable_chroma = true;
  bool enable_mse = false;
  double min_sse = 0.0;
  bool reduced_hbd_peak = false;
};

// Parses options against PsnrMetricInfo(); InvalidArgument naming a bad or unknown one.
absl::StatusOr<PsnrOptions> ParsePsnrOptions(const MetricOptions& options);

class PsnrMetric : public Metric {
 public:
  explicit PsnrMetric(const PsnrOptions& options) : options_(options) {}

  const MetricInfo& info() const override;
  // Any valid geometry: every layout, every depth from 8 to 16.
  absl::Status CheckInput(const FrameGeometry& geometry) const override;
  std::vector<std::string> OutputNames(const FrameGeometry& geometry) const override;

  const PsnrOptions& options() const { return options_; }

 protected:
  absl::StatusOr<FrameScores> ScoreFrame(const Frame& ref, const Frame& dist) override;

 private:
  int ScoredPlanes(const FrameGeometry& geometry) const;

  PsnrOptions options_;
};

// The outputs of one frame from its planes' integer SSE (one per scored plane: Y, or
// Y, Cb, Cr): the host function every backend ends in, so that a backend that forms the
// SSE elsewhere (the GPU) returns the same bits.
FrameScores PsnrScoresFromSse(const PsnrOptions& options, const FrameGeometry& geometry,
                              absl::Span<const uint64_t> plane_sse);

// Planes scored for this geometry and options: 1 for 4:0:0 or enable_chroma=false, else 3.
int PsnrScoredPlanes(const PsnrOptions& options, const FrameGeometry& geometry);

// For the registry.
const MetricInfo& PsnrMetricInfo();
absl::StatusOr<std::unique_ptr<Metric>> CreatePsnrMetric(const MetricOptions& options);

}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_PSNR_PSNR_H_
