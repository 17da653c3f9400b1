#include "engine/metrics/ssim/ssim_reference.h"

#include <cfloat>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/metrics/ssim/ssim_math.h"

// The definition is binary64 arithmetic: no x87 extended precision (and no contraction,
// which the build's -ffp-contract=off rules out).
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "ssim needs FLT_EVAL_METHOD == 0 (binary64 operations, e.g. SSE2 on x86-64)"
#endif

namespace exactq {
namespace ssim {
namespace {

// Step 1 for one row: moments of the kept horizontal taps. w holds Lx.
template <class Sample>
void HorizontalMoments(const Sample* ref_row, const Sample* dis_row, int width, Moments* out) {
  for (int x = 0; x < width; ++x) {
    Moments m;
    for (int k = TapBegin(x); k < TapEnd(x, width); ++k) {
      const int64_t t = Tap(k);
      const int64_t s = ref_row[x - kRadius + k];
      const int64_t d = dis_row[x - kRadius + k];
      m.mux += t * s;
      m.muy += t * d;
      m.x2 += t * s * s;
      m.xy += t * s * d;
      m.y2 += t * d * d;
      m.w += t;
    }
    out[x] = m;
  }
}

template <class Sample>
SsimSums Sums(const Sample* ref, const Sample* dis, int width, int height, int bit_depth) {
  const Stabilisers st = StabilisersFor(bit_depth);
  // Horizontal moments of the last kTapCount rows, row y in slot y % kTapCount: the
  // vertical pass of output row r needs rows r-4..r+4 and nothing older.
  std::vector<Moments> ring(static_cast<size_t>(kTapCount) * width);
  const auto ring_row = [&](int y) { return ring.data() + static_cast<size_t>(y % kTapCount) * width; };

  SsimSums sums;
  for (int y = 0; y < height + kRadius; ++y) {
    if (y < height) {
      const size_t offset = static_cast<size_t>(y) * width;
      HorizontalMoments(ref + offset, dis + offset, width, ring_row(y));
    }
    // Row r's window ends at row r+4 (or the last row): it is complete now.
    const int r = y - kRadius;
    if (r < 0) continue;
    for (int x = 0; x < width; ++x) {
      Moments m;
      for (int k = TapBegin(r); k < TapEnd(r, height); ++k) {
        const int64_t t = Tap(k);
        const Moments& h = ring_row(r - kRadius + k)[x];
        m.mux += t * h.mux;
        m.muy += t * h.muy;
        m.x2 += t * h.x2;
        m.xy += t * h.xy;
        m.y2 += t * h.y2;
        m.w += t * h.w;
      }
      sums.term_sum = sums.term_sum + SsimTerm(m, st);
      sums.weight_sum = sums.weight_sum + static_cast<double>(m.w);
    }
  }
  return sums;
}

}  // namespace

absl::Status CheckSsimInput(const FrameGeometry& ref, const FrameGeometry& dis) {
  if (ref != dis) {
    return absl::InvalidArgumentError(
        absl::StrCat("ssim: reference is ", GeometryDescription(ref), " but distorted is ", GeometryDescription(dis)));
  }
  return ValidateGeometry(ref);
}

absl::StatusOr<SsimSums> ReferenceSums(const Frame& ref, const Frame& dis) {
  const FrameGeometry& g = ref.geometry();
  if (absl::Status s = CheckSsimInput(g, dis.geometry()); !s.ok()) return s;
  const int depth = g.format.bit_depth;
  if (g.bytes_per_sample() == 1) {
    return Sums(ref.plane8(0), dis.plane8(0), g.width, g.height, depth);
  }
  return Sums(ref.plane16(0), dis.plane16(0), g.width, g.height, depth);
}

absl::StatusOr<FrameScores> ScoreReference(const Frame& ref, const Frame& dis, const SsimOptions& options) {
  absl::StatusOr<SsimSums> sums = ReferenceSums(ref, dis);
  if (!sums.ok()) return sums.status();
  return SsimOutputs(*sums, ref.geometry(), options);
}

}  // namespace ssim
}  // namespace exactq
