// The fast CPU path of `ssimulacra2`: vectorised, on host threads, with the
// reference's bits for every thread count and instruction set.
//
// Why its bits equal the reference's (ssimulacra2_reference.h):
//   - Arithmetic: every per-pixel step is a template of ssimulacra2_math.h instantiated
//     on 8-float / 4-double GCC vectors (ssimulacra2_kernels.inc): lane by lane the
//     reference's IEEE operations in its order, no FMA (the target flags exclude it and
//     contraction is off). Zero padding is the literal +0.0f the reference uses.
//   - Blur order: the horizontal pass runs along each row and the vertical pass down
//     each column, as in the reference; lanes only put 8 independent lines side by
//     side (8 rows for the horizontal pass, 8 columns for the vertical one).
//   - Sums: the 18 sums of a scale are six per channel, and each (scale, channel) is
//     one task, run start to end by one thread: its vertical pass walks the rows in
//     order and adds each row's terms left to right, so every accumulator sees the
//     reference's raster sequence. No ordered-sum machinery is needed because no sum
//     is ever split; tasks only write their own six doubles.
//   - The pyramid (YUV -> linear -> XYB, 2x2 downsample) is per pixel, so its bands can
//     run in any order.
//
// Work and parallelism, per frame: one parallel pass per scale over row bands of both
// images (conversion, XYB, next scale's downsample), then the (scale, channel) tasks,
// largest first. Scale 0 is 3/4 of the work, so the three scale-0 channels and the
// rest balance up to 4 threads; above that the frame's time is one scale-0 channel.
// Memory, kept between frames: XYB of all scales (4 floats per pixel per image) and
// linear RGB of scales >= 1 (1 float per pixel per image), 330 MB at 3840x2160; per
// thread about 170 floats per column (2.6 MB at 3840 wide).
//
//   exactq::ssimulacra2::Ssimulacra2Threads engine(/*num_threads=*/2);
//   absl::StatusOr<double> score = engine.Score(ref, dis, YuvMatrix::kBt709Limited);

#ifndef EXACTQ_ENGINE_METRICS_SSIMULACRA2_SSIMULACRA2_THREADS_H_
#define EXACTQ_ENGINE_METRICS_SSIMULACRA2_SSIMULACRA2_THREADS_H_

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/format/frame.h"
#include "engine/format/frame_geometry.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_kernels.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_math.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_score.h"
#include "engine/platform/worker_pool.h"

namespace exactq {
namespace ssimulacra2 {

// Which kernels run; kAuto picks AVX2 where the CPU has it. The others exist so that
// tests can run every variant on one machine.
enum class Ssimulacra2Isa { kAuto, kGeneric, kAvx2 };

class Ssimulacra2Threads {
 public:
  // num_threads < 1 counts as 1. kAvx2 on a CPU without AVX2 falls back to kGeneric.
  explicit Ssimulacra2Threads(int num_threads, Ssimulacra2Isa isa = Ssimulacra2Isa::kAuto);

  // The frame's sums, bit for bit ReferenceSums'. InvalidArgument from
  // CheckSsimulacra2Pair. Not thread-safe (buffers are kept between frames).
  absl::StatusOr<FrameSums> Sums(const Frame& ref, const Frame& dis, YuvMatrix matrix);

  // Sums, then ScoreFromSums.
  absl::StatusOr<double> Score(const Frame& ref, const Frame& dis, YuvMatrix matrix);

  int num_threads() const { return pool_.num_threads(); }
  // The kernels actually used ("avx2" or "generic").
  const char* isa_name() const { return kernels_->name; }

 private:
  // A zero-filled, 64-byte aligned float array.
  struct AlignedFloats {
    struct Free {
      void operator()(float* p) const { std::free(p); }
    };
    std::unique_ptr<float[], Free> data;
    size_t size = 0;
    void Resize(size_t floats);  // reallocates and zero-fills
  };

  // (Re)allocates every buffer for this geometry; a no-op when it has not changed.
  void Prepare(const FrameGeometry& geometry);

  const internal::KernelTable* kernels_;
  WorkerPool pool_;

  FrameGeometry geometry_;  // what the buffers are sized for
  int num_scales_ = 0;
  std::vector<int32_t> chroma_x_;
  AlignedFloats xyb_[2][kMaxScales];     // [image][scale]
  AlignedFloats linear_[2][kMaxScales];  // [image][scale], scales >= 1
  internal::Image3 xyb_view_[2][kMaxScales];
  internal::Image3 linear_view_[2][kMaxScales];
  // Per worker.
  std::vector<AlignedFloats> linear_scratch_;
  std::vector<AlignedFloats> channel_scratch_;
};

}  // namespace ssimulacra2
}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_SSIMULACRA2_SSIMULACRA2_THREADS_H_
