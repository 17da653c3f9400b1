// OrderedSumCuda: the exact ordered sum of terms that live in device memory, returning
// one double (the bits of the host loop) without copying the terms to the host.
//
// The device pipelines are in device_sum.cuh; the algebra it shares with
// the host in ordered_sum_algebra.h. This header is plain C++ (no device code), so host
// code compiled by g++ can use the class.
//
//   exactq::exact::OrderedSumCuda sum(stream);
//   exactq::exact::OrderedSumStats stats;
//   absl::StatusOr<double> total = sum.Sum(device_terms, n, &stats);  // synchronises `stream`
//
// Two pipelines (device_sum.cuh): the segment
// pipeline runs first and gives the result unless one of its exact checks refuses a step;
// then the event walk runs on the same terms. Both give the loop's bits.
//
// One instance per stream and device (and with OrderedSumOptions::reuse_plan, per sum of
// a stream of frames: a call over as many terms as the last one starts under its plan; a
// plan that no longer holds costs time, never bits). It keeps the pipelines' workspaces (about 1.2 KB
// per 1024 terms, 10 MB for a 4K plane; the event walk's only once it was needed) and a
// pinned result buffer between calls, allocated on the device that is current at the
// first call. Not thread-safe; use one per worker.
#ifndef EXACTQ_ENGINE_EXACT_ORDERED_SUM_CUDA_H_
#define EXACTQ_ENGINE_EXACT_ORDERED_SUM_CUDA_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/exact/ordered_sum.h"

namespace exactq {
namespace exact {

class OrderedSumCuda final : public OrderedSum {
 public:
  // The chunk and sub-chunk sizes are fixed by the device layout (1024 and 32); options
  // that ask for others make Sum fail with INVALID_ARGUMENT. plan_mode is honoured.
  explicit OrderedSumCuda(cudaStream_t stream = nullptr, OrderedSumOptions options = {});
  ~OrderedSumCuda() override;
  OrderedSumCuda(const OrderedSumCuda&) = delete;
  OrderedSumCuda& operator=(const OrderedSumCuda&) = delete;

  // `device_terms`: n doubles in device memory (may be null when n == 0). Enqueues the
  // pipeline on the stream, waits for it, and returns the loop's bits.
  absl::StatusOr<double> Sum(const double* device_terms, size_t n, OrderedSumStats* stats) override;
  const char* name() const override { return "cuda"; }

 private:
  // A device buffer that grows (geometrically) and is reused across calls.
  struct DeviceBuffer {
    void* data = nullptr;
    int64_t chunks = 0;
  };
  absl::Status Reserve(DeviceBuffer& buffer, int64_t chunks, size_t (*bytes_for)(int64_t));
  absl::StatusOr<double> EventWalkSum(const double* device_terms, size_t n, OrderedSumStats* stats);

  cudaStream_t stream_;
  OrderedSumOptions options_;
  DeviceBuffer event_walk_;
  DeviceBuffer segments_;
  void* pinned_output_ = nullptr;  // host, page-locked: PinnedOutput
  // The term count of the last call whose segment pipeline completed in segments_: its
  // chunk stage left the plan for the next call over as many terms (0: no plan).
  size_t planned_terms_ = 0;
};

// Whether a CUDA device can be used here; `reason` says why not (for skips and logs).
bool CudaDeviceAvailable(std::string* reason);

}  // namespace exact
}  // namespace exactq

#endif  // EXACTQ_ENGINE_EXACT_ORDERED_SUM_CUDA_H_
