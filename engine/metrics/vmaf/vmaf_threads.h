// VmafThreads: VMAF's per-frame features on several threads, with the reference's bits.
//
// Each stage's rows (VIF's filters and statistic, ADM's DWT, decouple, CSF, masking and
// denominator, motion's SAD) are split into bands over a worker pool. Every sum over
// pixels is an integer sum and every floating-point step is per pixel or once per
// frame after the sums, so any split gives the bits of ComputeVmafFeatures with one band
// (vmaf_threads_test.cc checks 1, 2, 3 and 7 threads on random frames).
//
//   VmafThreads threads(8);
//   absl::StatusOr<VmafFeatures> f = threads.ComputeFeatures(ref, dis, &prev_ref);
//
// Not reentrant: one VmafThreads per caller at a time (the pool runs one job).

#ifndef EXACTQ_ENGINE_METRICS_VMAF_VMAF_THREADS_H_
#define EXACTQ_ENGINE_METRICS_VMAF_VMAF_THREADS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "engine/format/frame.h"
#include "engine/metrics/vmaf/vmaf_features.h"
#include "engine/platform/worker_pool.h"

namespace exactq {
namespace vmaf {

class VmafThreads {
 public:
  // num_threads < 1 counts as 1 (then it runs the reference loop).
  explicit VmafThreads(int num_threads);

  int num_threads() const { return pool_->num_threads(); }

  // With `model`'s extractor options (ComputeVmafFeatures).
  absl::StatusOr<VmafFeatures> ComputeFeatures(const Frame& ref, const Frame& dis, const Frame* prev_ref,
                                               VmafModelId model = VmafModelId::kV0_6_1);

  // The split it uses, for ScoreVmafSequence.
  Parallel parallel() const;

 private:
  std::unique_ptr<WorkerPool> pool_;
};

}  // namespace vmaf
}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_VMAF_VMAF_THREADS_H_
