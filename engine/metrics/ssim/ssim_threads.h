// The fast CPU path of `ssim`: rows in parallel on host threads, vectorised moments,
// and the reference's bits for every thread count.
//
// Why its bits equal the reference's (ssim_reference.h):
//   - Moments: every window moment is an integer below 2^53 at every depth up to 16
//     (ssim_math.h bounds), and so is every partial sum of the horizontal and vertical
//     passes. Held in doubles they are therefore exact whatever the order of the adds,
//     so the same integers reach the term as the reference's int64 ones. Out-of-frame
//     taps multiply zero padding, which adds exactly nothing; w = Lx * Ly is formed
//     from the kept tap sums.
//   - Term: the same SsimTerm template (ssim_math.h), instantiated on a GCC vector of
//     doubles: lane by lane the same IEEE operations in the same order (AVX when the CPU
//     has it, else SSE2; no FMA either way, the target flags do not include it).
//   - Sum, two named ways to the same bits (SsimFrameSum):
//     kOrderedSum: the workers write every term to a plane in raster order and the
//       frame total comes from engine/exact's OrderedSumThreads, which returns the bits
//       of the reference's loop. Scales with threads; costs a second pass over the
//       terms.
//     kRasterLoop: the first band adds its terms as it makes them (it is the start of
//       the raster order); the later bands store theirs, and the loop continues over
//       them after the join. The loop itself, so exact by definition; its serial part
//       is one add per pixel of the later bands (about 8 ms at 3840x2160 here).
//     With one thread both are the plain loop, fused with the term computation.
//
// Memory: one double per pixel of the stored bands (66 MB at 3840x2160 with
// kOrderedSum), kept between frames; per thread and frame about 50 doubles per column
// of scratch.
//
//   exactq::ssim::SsimThreads ssim(/*num_threads=*/4);
//   absl::StatusOr<exactq::ssim::SsimSums> sums = ssim.Sums(ref, dis);
//   absl::StatusOr<FrameScores> scores = ssim.Score(ref, dis, {/*enable_db=*/true});

#ifndef EXACTQ_ENGINE_METRICS_SSIM_SSIM_THREADS_H_
#define EXACTQ_ENGINE_METRICS_SSIM_SSIM_THREADS_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/exact/ordered_sum.h"
#include "engine/format/frame.h"
#include "engine/metrics/metric.h"
#include "engine/metrics/ssim/ssim_score.h"
#include "engine/platform/worker_pool.h"

namespace exactq {
namespace ssim {

// Which vector width the per-window code runs at; kAuto picks the widest the CPU has.
// The others exist so tests can run every variant on one machine.
enum class SsimIsa { kAuto, kSse2, kAvx };

// How the frame total is formed with more than one thread (see above).
enum class SsimFrameSum { kOrderedSum, kRasterLoop };

class SsimThreads {
 public:
  // num_threads < 1 counts as 1. kAvx on a CPU without AVX falls back to kSse2.
  explicit SsimThreads(int num_threads, SsimFrameSum frame_sum = SsimFrameSum::kOrderedSum,
                       SsimIsa isa = SsimIsa::kAuto);

  // The frame's two sums, bit for bit ReferenceSums'. InvalidArgument from
  // CheckSsimInput. Not thread-safe (the terms plane is kept between frames).
  absl::StatusOr<SsimSums> Sums(const Frame& ref, const Frame& dis);

  // Sums, then SsimOutputs.
  absl::StatusOr<FrameScores> Score(const Frame& ref, const Frame& dis, const SsimOptions& options);

  int num_threads() const { return num_threads_; }
  SsimFrameSum frame_sum() const { return frame_sum_; }
  // The ISA actually used.
  SsimIsa isa() const { return isa_; }
  // What the ordered sum of the last frame had to do the slow way (zeros when it ran
  // none: one thread, or kRasterLoop).
  const exact::OrderedSumStats& last_sum_stats() const { return last_sum_stats_; }

 private:
  int num_threads_;
  std::unique_ptr<WorkerPool> pool_;  // the bands and the frame sum, when num_threads_ > 1
  SsimFrameSum frame_sum_;
  SsimIsa isa_;
  std::vector<double> terms_;  // the stored bands' terms, raster order
  exact::OrderedSumStats last_sum_stats_;
};

// "sse2", "avx" ("auto" for kAuto).
const char* SsimIsaName(SsimIsa isa);
// "ordered_sum" or "raster_loop".
const char* SsimFrameSumName(SsimFrameSum frame_sum);

}  // namespace ssim
}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_SSIM_SSIM_THREADS_H_
