// VmafCuda: the per-frame features of vmaf (VIF at four scales, ADM2, motion) computed on
// a GPU from the device frame, with the CPU reference's bits.
//
// Every sum over pixels is an integer sum, formed with integer atomics (exact in any
// order); where libvmaf rounds a row's sum before adding it to the frame's, the kernels
// keep per-row totals and round them the same way. The per-pixel arithmetic is
// vmaf_cuda_kernels.h (checked on the host by vmaf_cuda_emulation_test), the steps after
// the sums are the CPU's own (vmaf_feature_sums.h). The temporal rules and the model stay
// where they are for the CPU (VmafMetric's sequence stage), so a stream may move between
// the GPU and the CPU between any two frames and keep its bits.
//
// Plain C++ header: g++ code can use it.
//
//   absl::StatusOr<std::unique_ptr<VmafCuda>> twin = VmafCuda::Create(device, geometry, model);
//   (*twin)->Enqueue(pair, stream);  // pair.previous_reference: frame n - 1's luma, or null
//   absl::StatusOr<vmaf::VmafFeatures> f = (*twin)->CollectFeatures();
#ifndef EXACTQ_ENGINE_METRICS_VMAF_CUDA_VMAF_CUDA_H_
#define EXACTQ_ENGINE_METRICS_VMAF_CUDA_VMAF_CUDA_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "engine/format/frame_geometry.h"
#include "engine/metrics/gpu_metric.h"
#include "engine/metrics/metric.h"
#include "engine/metrics/vmaf/vmaf_feature_sums.h"
#include "engine/metrics/vmaf/vmaf_features.h"
#include "engine/metrics/vmaf/vmaf_model.h"
#include "engine/platform/device_frame.h"

namespace exactq {
namespace vmaf {

// How a frame's sums are formed. kLibvmafOrder: ADM's terms rounded per row and motion's
// summed per row in uint32, as libvmaf does: the CPU reference's bits. kDirect: every term
// straight into the frame's total, rounded once: other bits, for the benchmark that prices
// libvmaf's order (bench/vmaf/vmaf_cuda_bench.cc); never behind a request.
enum class VmafCudaSums { kLibvmafOrder, kDirect };

class VmafCuda {
 public:
  // INVALID_ARGUMENT for input vmaf refuses (CheckVmafInput); CUDA errors as cuda_status.h.
  static absl::StatusOr<std::unique_ptr<VmafCuda>> Create(int device, const FrameGeometry& geometry, VmafModelId model,
                                                          VmafCudaSums sums_order = VmafCudaSums::kLibvmafOrder);
  ~VmafCuda();
  VmafCuda(const VmafCuda&) = delete;
  VmafCuda& operator=(const VmafCuda&) = delete;

  // Enqueues one frame's features on `stream` and their read-back. The pair has the
  // geometry given at creation and at least its luma; motion is computed against
  // pair.previous_reference where it is set (0 otherwise, as for a first frame).
  absl::Status Enqueue(const DeviceFramePair& pair, cudaStream_t stream);
  // Waits for the frame enqueued last.
  absl::StatusOr<VmafFeatures> CollectFeatures();

  // Device memory one twin holds for this geometry (the device frame not counted).
  static uint64_t DeviceBytes(const FrameGeometry& geometry);

  // What one frame's kernels leave for the host (read back in one copy).
  struct Sums {
    VifSums vif[4];
    AdmScaleSums adm[4];
    uint64_t motion_sad;
  };

 private:
  VmafCuda(int device, const FrameGeometry& geometry, VmafModelId model, VmafCudaSums sums_order);
  absl::Status Allocate();
  // Every launch of one frame on `stream` (vmaf_cuda.cu).
  template <typename Sample>
  absl::Status EnqueueFrame(const Sample* ref, const Sample* dis, const Sample* prev, double gain_limit,
                            cudaStream_t stream);

  struct Buffers;
  int device_;
  FrameGeometry geometry_;
  VmafModelId model_;
  VmafCudaSums sums_order_;
  AdmScaleParams adm_params_[4];
  std::unique_ptr<Buffers> buffers_;
  Sums* host_sums_ = nullptr;  // pinned
  cudaEvent_t done_ = nullptr;
  bool enqueued_ = false;
  bool enqueued_motion_ = false;
};

// The GpuMetric of vmaf for the registry: the per-frame outputs of VmafMetric's
// ScoreInStream (VmafPerFrameScores), luma only, reading the previous reference.
const GpuMetricFactory& VmafGpuMetricFactory();

}  // namespace vmaf
}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_VMAF_CUDA_VMAF_CUDA_H_
