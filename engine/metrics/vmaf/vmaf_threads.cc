#include "engine/metrics/vmaf/vmaf_threads.h"

namespace exactq {
namespace vmaf {

namespace {
// Bands per thread: a few more bands than threads evens out rows of unequal cost
// (ADM's border rows, motion's rows without change). Any number gives the same bits.
constexpr int kBandsPerThread = 4;
}  // namespace

VmafThreads::VmafThreads(int num_threads) : pool_(std::make_unique<WorkerPool>(num_threads)) {}

Parallel VmafThreads::parallel() const {
  if (pool_->num_threads() <= 1) return Parallel{};
  return Parallel{pool_.get(), pool_->num_threads() * kBandsPerThread};
}

absl::StatusOr<VmafFeatures> VmafThreads::ComputeFeatures(const Frame& ref, const Frame& dis, const Frame* prev_ref,
                                                          VmafModelId model) {
  return ComputeVmafFeatures(ref, dis, prev_ref, parallel(), model);
}

}  // namespace vmaf
}  // namespace exactq
