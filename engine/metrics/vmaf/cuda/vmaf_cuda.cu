#include <cub/block/block_reduce.cuh>

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/metrics/vmaf/cuda/vmaf_cuda.h"
#include "engine/metrics/vmaf/cuda/vmaf_cuda_kernels.h"
#include "engine/platform/copy_to_device.h"
#include "engine/platform/cuda_status.h"
#include "engine/platform/host_wait_event.h"

namespace exactq {
namespace vmaf {
namespace {

constexpr char kWho[] = "VmafCuda";
// Threads per block: one row tile of a filter, or one block of a sum.
constexpr int kTile = 128;
using U64 = unsigned long long;

int Blocks(int n) { return (n + kTile - 1) / kTile; }

// Adds one value per thread of the block to *target (thread 0's atomic). Integer sums:
// exact in any order; int64 terms travel as their two's complement bits.
template <typename T>
__device__ void BlockAdd(T value, T* target) {
  using BlockReduce = cub::BlockReduce<T, kTile>;
  __shared__ typename BlockReduce::TempStorage storage;
  const T sum = BlockReduce(storage).Sum(value);
  if (threadIdx.x == 0 && sum != 0) atomicAdd(target, sum);
  __syncthreads();  // the storage is reused by the next call
}

// ---------------------------------------------------------------------------------
// VIF: per scale, one block per row tile; the tile's vertical results (and a halo of
// kHalf columns each side, mirrored into the row) in shared memory, then the horizontal
// filter and statistic per pixel. The four sums go to out[0..3] (VifSums' order).
template <int kScale, typename Sample>
__global__ void VifScaleKernel(const Sample* ref, const Sample* dis, int w, int h, int bpc, const uint16_t* log2_table,
                               double gain_limit, U64* out) {
  constexpr int kHalf = gpu::VifFilter<kScale>::kHalf;
  __shared__ gpu::VifVertical tile[kTile + 2 * kHalf];
  const int i = blockIdx.y;
  const int j0 = blockIdx.x * kTile;
  const int cols = min(kTile, w - j0);
  for (int t = threadIdx.x; t < cols + 2 * kHalf; t += kTile) {
    tile[t] = gpu::VifVerticalAt<kScale>(ref, dis, w, h, bpc, i, gpu::Reflect101(j0 - kHalf + t, w));
  }
  __syncthreads();
  VifSums local;
  if (static_cast<int>(threadIdx.x) < cols) {
    gpu::VifHorizontalPixel<kScale>(tile + threadIdx.x, log2_table, gain_limit, &local);
  }
  BlockAdd(static_cast<U64>(local.num_log), out + 0);
  BlockAdd(static_cast<U64>(local.den_log), out + 1);
  BlockAdd(static_cast<U64>(local.num_non_log), out + 2);
  BlockAdd(static_cast<U64>(local.den_non_log), out + 3);
}

// Scale kNext's plane (w / 2 x h / 2) from scale kNext - 1's (w x h).
template <int kNext, typename Sample>
__global__ void VifSubsampleKernel(const Sample* src, int w, int h, int bpc, uint16_t* out) {
  const int c = blockIdx.x * kTile + threadIdx.x;
  const int r = blockIdx.y;
  if (c >= w / 2) return;
  out[static_cast<size_t>(r) * (w / 2) + c] = gpu::VifSubsampleAt<kNext>(src, w, h, bpc, r, c);
}

// ---------------------------------------------------------------------------------
// ADM.

// One image's four bands at one scale: a, v, h, d.
struct BandPlanes {
  int32_t* band[4];
};

__device__ void Store(const BandPlanes& out, size_t o, const gpu::AdmQuad& q) {
  out.band[0][o] = q.a;
  out.band[1][o] = q.v;
  out.band[2][o] = q.h;
  out.band[3][o] = q.d;
}

template <typename Sample>
__global__ void AdmDwtScale0Kernel(const Sample* src, int w, int h, int bpc, int ow, BandPlanes out) {
  const int j = blockIdx.x * kTile + threadIdx.x;
  const int i = blockIdx.y;
  if (j >= ow) return;
  const gpu::AdmQuad q = gpu::AdmDwtScale0At(src, w, h, bpc, i, j);
  Store(out, static_cast<size_t>(i) * ow + j, q);
}

__global__ void AdmDwtS123Kernel(const int32_t* src, int w, int h, int scale, int ow, BandPlanes out) {
  const int j = blockIdx.x * kTile + threadIdx.x;
  const int i = blockIdx.y;
  if (j >= ow) return;
  const gpu::AdmQuad q = gpu::AdmDwtS123At(src, w, h, scale, i, j);
  Store(out, static_cast<size_t>(i) * ow + j, q);
}

// What one ADM scale reads and writes: the detail bands (h, v, d) of both images, and
// the decoupled planes (band-sized; written inside the CSF region only).
struct AdmScalePlanes {
  const int32_t* ref[3];
  const int32_t* dis[3];
  int32_t* restored[3];
  int32_t* csf_a[3];
  int32_t* csf_f[3];
  int w, h;
};

__global__ void AdmDecoupleCsfKernel(AdmScalePlanes p, AdmRegion region, int scale, gpu::AdmPixelParams params) {
  const int j = region.left + static_cast<int>(blockIdx.x) * kTile + static_cast<int>(threadIdx.x);
  const int i = region.top + static_cast<int>(blockIdx.y);
  if (j >= region.right) return;
  const size_t o = static_cast<size_t>(i) * p.w + j;
  const int32_t ref[3] = {p.ref[0][o], p.ref[1][o], p.ref[2][o]};
  const int32_t dis[3] = {p.dis[0][o], p.dis[1][o], p.dis[2][o]};
  const gpu::AdmDecoupled x = gpu::AdmDecoupleCsfAt(ref, dis, scale, params);
  for (int b = 0; b < 3; ++b) {
    p.restored[b][o] = x.restored[b];
    p.csf_a[b][o] = x.csf_a[b];
    p.csf_f[b][o] = x.csf_f[b];
  }
}

// The score region's terms, summed per band b and row r into den[b * band_stride + r *
// row_stride] and cm[...]: per row (row_stride 1) for libvmaf's order, straight into the
// frame's totals (row_stride 0, band_stride 1) for kDirect.
__global__ void AdmRowSumsKernel(AdmScalePlanes p, AdmRegion region, int scale, AdmCmShifts cm, AdmDenShifts den,
                                 gpu::AdmPixelParams params, U64* den_out, U64* cm_out, int band_stride,
                                 int row_stride) {
  const int r = blockIdx.y;
  const int i = region.top + r;
  const int j = region.left + static_cast<int>(blockIdx.x) * kTile + static_cast<int>(threadIdx.x);
  U64 den_terms[3] = {0, 0, 0};
  U64 cm_terms[3] = {0, 0, 0};
  if (j < region.right) {
    const size_t o = static_cast<size_t>(i) * p.w + j;
    const int32_t* const csf_a[3] = {p.csf_a[0], p.csf_a[1], p.csf_a[2]};
    const int32_t* const csf_f[3] = {p.csf_f[0], p.csf_f[1], p.csf_f[2]};
    const int32_t thr = gpu::AdmCmThresholdAt(csf_a, csf_f, p.w, p.h, scale, i, j);
    for (int b = 0; b < 3; ++b) {
      den_terms[b] = gpu::AdmDenTerm(p.ref[b][o], scale, den);
      cm_terms[b] = static_cast<U64>(gpu::AdmCmTerm(p.restored[b][o], thr, scale, b, cm, params.rfactor32[b]));
    }
  }
  for (int b = 0; b < 3; ++b) {
    BlockAdd(den_terms[b], den_out + b * band_stride + r * row_stride);
    BlockAdd(cm_terms[b], cm_out + b * band_stride + r * row_stride);
  }
}

// Each row's sums rounded as libvmaf rounds them, then summed: out_den[b], out_cm[b].
__global__ void AdmRowTotalsKernel(const U64* row_den, const U64* row_cm, int rows, AdmCmShifts cm, AdmDenShifts den,
                                   U64* out_den, U64* out_cm) {
  const int r = blockIdx.x * kTile + threadIdx.x;
  for (int b = 0; b < 3; ++b) {
    const U64 d = r < rows ? gpu::AdmDenRowTotal(row_den[b * rows + r], den) : 0;
    const U64 c = r < rows ? static_cast<U64>(gpu::AdmCmRowTotal(static_cast<int64_t>(row_cm[b * rows + r]), cm)) : 0;
    BlockAdd(d, out_den + b);
    BlockAdd(c, out_cm + b);
  }
}

// ---------------------------------------------------------------------------------
// Motion: one block per row tile, the vertical blur of the difference (and a halo of 2)
// in shared memory; in libvmaf's order a row's terms are summed in uint32 (wrapping, as
// libvmaf's: Acc = unsigned, row_stride 1), then the rows in uint64; kDirect adds every
// term to the frame's uint64 total (Acc = U64, row_stride 0).
template <typename Sample, typename Acc>
__global__ void MotionRowKernel(const Sample* prev, const Sample* cur, int w, int h, int bpc, Acc* out,
                                int row_stride) {
  __shared__ int32_t y[kTile + 4];
  const int i = blockIdx.y;
  const int j0 = blockIdx.x * kTile;
  const int cols = min(kTile, w - j0);
  for (int t = threadIdx.x; t < cols + 4; t += kTile) {
    y[t] = gpu::MotionVerticalAt(prev, cur, w, h, bpc, i, gpu::Reflect101(j0 - 2 + t, w));
  }
  __syncthreads();
  const Acc term = static_cast<int>(threadIdx.x) < cols ? gpu::MotionHorizontalTerm(y + threadIdx.x) : 0u;
  BlockAdd(term, out + static_cast<size_t>(i) * row_stride);
}

__global__ void MotionTotalKernel(const unsigned* row_sad, int h, U64* out) {
  const int r = blockIdx.x * kTile + threadIdx.x;
  BlockAdd(static_cast<U64>(r < h ? row_sad[r] : 0u), out);
}

// Band sizes of ADM's scales: (w + 1) / 2 per level.
void AdmBandSize(int w0, int h0, int scale, int* w, int* h) {
  *w = w0;
  *h = h0;
  for (int s = 0; s <= scale; ++s) {
    *w = (*w + 1) / 2;
    *h = (*h + 1) / 2;
  }
}

}  // namespace

struct VmafCuda::Buffers {
  std::vector<void*> allocations;
  uint16_t* log2_table = nullptr;
  int32_t* div_table = nullptr;
  uint16_t* vif_ref[4] = {};  // scales 1..3
  uint16_t* vif_dis[4] = {};
  BandPlanes adm_ref[4] = {};
  BandPlanes adm_dis[4] = {};
  int32_t* restored[3] = {};
  int32_t* csf_a[3] = {};
  int32_t* csf_f[3] = {};
  U64* row_den = nullptr;  // 3 x the scale-0 band's rows
  U64* row_cm = nullptr;
  unsigned* row_sad = nullptr;  // one per luma row
  Sums* sums = nullptr;

  ~Buffers() {
    for (void* p : allocations) cudaFree(p);
  }
  template <typename T>
  absl::Status Get(T** p, size_t count) {
    void* raw = nullptr;
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaMalloc(&raw, std::max<size_t>(count, 1) * sizeof(T)));
    allocations.push_back(raw);
    *p = static_cast<T*>(raw);
    return absl::OkStatus();
  }
};

uint64_t VmafCuda::DeviceBytes(const FrameGeometry& g) {
  const uint64_t w = g.width, h = g.height;
  uint64_t bytes = kVifLog2TableSize * sizeof(uint16_t) + kAdmDivTableSize * sizeof(int32_t) + sizeof(Sums);
  for (int s = 1; s < 4; ++s) bytes += 2 * ((w >> s) * (h >> s)) * sizeof(uint16_t);
  for (int s = 0; s < 4; ++s) {
    int bw, bh;
    AdmBandSize(g.width, g.height, s, &bw, &bh);
    bytes += 8 * static_cast<uint64_t>(bw) * bh * sizeof(int32_t);
  }
  int bw0, bh0;
  AdmBandSize(g.width, g.height, 0, &bw0, &bh0);
  bytes += 9 * static_cast<uint64_t>(bw0) * bh0 * sizeof(int32_t);
  bytes += 6 * static_cast<uint64_t>(bh0) * sizeof(U64) + h * sizeof(unsigned);
  return bytes;
}

VmafCuda::VmafCuda(int device, const FrameGeometry& geometry, VmafModelId model, VmafCudaSums sums_order)
    : device_(device), geometry_(geometry), model_(model), sums_order_(sums_order) {}

VmafCuda::~VmafCuda() {
  cudaSetDevice(device_);
  if (done_ != nullptr) {
    cudaEventSynchronize(done_);
    cudaEventDestroy(done_);
  }
  buffers_.reset();
  if (host_sums_ != nullptr) cudaFreeHost(host_sums_);
}

absl::StatusOr<std::unique_ptr<VmafCuda>> VmafCuda::Create(int device, const FrameGeometry& geometry, VmafModelId model,
                                                           VmafCudaSums sums_order) {
  if (absl::Status s = CheckVmafInput(geometry, geometry); !s.ok()) return s;
  std::unique_ptr<VmafCuda> twin(new VmafCuda(device, geometry, model, sums_order));
  if (absl::Status s = twin->Allocate(); !s.ok()) return s;
  return twin;
}

absl::Status VmafCuda::Allocate() {
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaSetDevice(device_));
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, CreateHostWaitEvent(&done_));
  void* pinned = nullptr;
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaMallocHost(&pinned, sizeof(Sums)));
  host_sums_ = static_cast<Sums*>(pinned);
  buffers_ = std::make_unique<Buffers>();
  Buffers& b = *buffers_;
  const int w = geometry_.width, h = geometry_.height;
  if (absl::Status s = b.Get(&b.log2_table, kVifLog2TableSize); !s.ok()) return s;
  if (absl::Status s = b.Get(&b.div_table, kAdmDivTableSize); !s.ok()) return s;
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho,
                              CopyToDeviceAndWait(b.log2_table, VifLog2Table(), kVifLog2TableSize * sizeof(uint16_t)));
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho,
                              CopyToDeviceAndWait(b.div_table, AdmDivTable(), kAdmDivTableSize * sizeof(int32_t)));
  for (int s = 1; s < 4; ++s) {
    const size_t n = static_cast<size_t>(w >> s) * (h >> s);
    if (absl::Status st = b.Get(&b.vif_ref[s], n); !st.ok()) return st;
    if (absl::Status st = b.Get(&b.vif_dis[s], n); !st.ok()) return st;
  }
  for (int s = 0; s < 4; ++s) {
    int bw, bh;
    AdmBandSize(w, h, s, &bw, &bh);
    adm_params_[s] = MakeAdmScaleParams(s, bw, bh);
    const size_t n = static_cast<size_t>(bw) * bh;
    for (int k = 0; k < 4; ++k) {
      if (absl::Status st = b.Get(&b.adm_ref[s].band[k], n); !st.ok()) return st;
      if (absl::Status st = b.Get(&b.adm_dis[s].band[k], n); !st.ok()) return st;
    }
  }
  const size_t n0 = static_cast<size_t>(adm_params_[0].w) * adm_params_[0].h;
  for (int k = 0; k < 3; ++k) {
    if (absl::Status st = b.Get(&b.restored[k], n0); !st.ok()) return st;
    if (absl::Status st = b.Get(&b.csf_a[k], n0); !st.ok()) return st;
    if (absl::Status st = b.Get(&b.csf_f[k], n0); !st.ok()) return st;
  }
  if (absl::Status st = b.Get(&b.row_den, 3 * static_cast<size_t>(adm_params_[0].h)); !st.ok()) return st;
  if (absl::Status st = b.Get(&b.row_cm, 3 * static_cast<size_t>(adm_params_[0].h)); !st.ok()) return st;
  if (absl::Status st = b.Get(&b.row_sad, static_cast<size_t>(h)); !st.ok()) return st;
  return b.Get(&b.sums, 1);
}

// Every launch of one frame, on `stream`, in the order vmaf_cuda_emulation_test follows.
template <typename Sample>
absl::Status VmafCuda::EnqueueFrame(const Sample* ref, const Sample* dis, const Sample* prev, double gain_limit,
                                    cudaStream_t stream) {
  const Buffers& buf = *buffers_;
  const bool direct = sums_order_ == VmafCudaSums::kDirect;
  const int bpc = geometry_.format.bit_depth;
  int w = geometry_.width, h = geometry_.height;
  auto vif_out = [&](int s) { return reinterpret_cast<U64*>(&buf.sums->vif[s]); };

  // VIF, scale by scale.
  VifScaleKernel<0, Sample>
      <<<dim3(Blocks(w), h), kTile, 0, stream>>>(ref, dis, w, h, bpc, buf.log2_table, gain_limit, vif_out(0));
  VifSubsampleKernel<1, Sample><<<dim3(Blocks(w / 2), h / 2), kTile, 0, stream>>>(ref, w, h, bpc, buf.vif_ref[1]);
  VifSubsampleKernel<1, Sample><<<dim3(Blocks(w / 2), h / 2), kTile, 0, stream>>>(dis, w, h, bpc, buf.vif_dis[1]);
  w /= 2;
  h /= 2;
  VifScaleKernel<1, uint16_t><<<dim3(Blocks(w), h), kTile, 0, stream>>>(buf.vif_ref[1], buf.vif_dis[1], w, h, bpc,
                                                                        buf.log2_table, gain_limit, vif_out(1));
  VifSubsampleKernel<2, uint16_t>
      <<<dim3(Blocks(w / 2), h / 2), kTile, 0, stream>>>(buf.vif_ref[1], w, h, bpc, buf.vif_ref[2]);
  VifSubsampleKernel<2, uint16_t>
      <<<dim3(Blocks(w / 2), h / 2), kTile, 0, stream>>>(buf.vif_dis[1], w, h, bpc, buf.vif_dis[2]);
  w /= 2;
  h /= 2;
  VifScaleKernel<2, uint16_t><<<dim3(Blocks(w), h), kTile, 0, stream>>>(buf.vif_ref[2], buf.vif_dis[2], w, h, bpc,
                                                                        buf.log2_table, gain_limit, vif_out(2));
  VifSubsampleKernel<3, uint16_t>
      <<<dim3(Blocks(w / 2), h / 2), kTile, 0, stream>>>(buf.vif_ref[2], w, h, bpc, buf.vif_ref[3]);
  VifSubsampleKernel<3, uint16_t>
      <<<dim3(Blocks(w / 2), h / 2), kTile, 0, stream>>>(buf.vif_dis[2], w, h, bpc, buf.vif_dis[3]);
  w /= 2;
  h /= 2;
  VifScaleKernel<3, uint16_t><<<dim3(Blocks(w), h), kTile, 0, stream>>>(buf.vif_ref[3], buf.vif_dis[3], w, h, bpc,
                                                                        buf.log2_table, gain_limit, vif_out(3));
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaGetLastError());

  // ADM, scale by scale: the DWT from the previous scale's approximation band.
  w = geometry_.width;
  h = geometry_.height;
  for (int s = 0; s < 4; ++s) {
    const AdmScaleParams& p = adm_params_[s];
    if (s == 0) {
      AdmDwtScale0Kernel<Sample><<<dim3(Blocks(p.w), p.h), kTile, 0, stream>>>(ref, w, h, bpc, p.w, buf.adm_ref[0]);
      AdmDwtScale0Kernel<Sample><<<dim3(Blocks(p.w), p.h), kTile, 0, stream>>>(dis, w, h, bpc, p.w, buf.adm_dis[0]);
    } else {
      const AdmScaleParams& q = adm_params_[s - 1];
      AdmDwtS123Kernel<<<dim3(Blocks(p.w), p.h), kTile, 0, stream>>>(buf.adm_ref[s - 1].band[0], q.w, q.h, s, p.w,
                                                                     buf.adm_ref[s]);
      AdmDwtS123Kernel<<<dim3(Blocks(p.w), p.h), kTile, 0, stream>>>(buf.adm_dis[s - 1].band[0], q.w, q.h, s, p.w,
                                                                     buf.adm_dis[s]);
    }
    AdmScalePlanes planes;
    // BandPlanes order a, v, h, d; the detail bands here are h, v, d.
    const int detail[3] = {2, 1, 3};
    for (int b = 0; b < 3; ++b) {
      planes.ref[b] = buf.adm_ref[s].band[detail[b]];
      planes.dis[b] = buf.adm_dis[s].band[detail[b]];
      planes.restored[b] = buf.restored[b];
      planes.csf_a[b] = buf.csf_a[b];
      planes.csf_f[b] = buf.csf_f[b];
    }
    planes.w = p.w;
    planes.h = p.h;
    gpu::AdmPixelParams pixel{
        buf.div_table, AdmCos1DegSquared(), gain_limit, {p.rfactor32[0], p.rfactor32[1], p.rfactor32[2]}};
    const AdmRegion& cr = p.csf_region;
    if (cr.right > cr.left && cr.bottom > cr.top) {
      AdmDecoupleCsfKernel<<<dim3(Blocks(cr.right - cr.left), cr.bottom - cr.top), kTile, 0, stream>>>(planes, cr, s,
                                                                                                       pixel);
    }
    const AdmRegion& sr = p.score_region;
    const int rows = sr.bottom - sr.top;
    U64* const den_total = reinterpret_cast<U64*>(buf.sums->adm[s].den);
    U64* const cm_total = reinterpret_cast<U64*>(buf.sums->adm[s].cm);
    if (rows > 0 && sr.right > sr.left && direct) {
      AdmRowSumsKernel<<<dim3(Blocks(sr.right - sr.left), rows), kTile, 0, stream>>>(planes, sr, s, p.cm, p.den, pixel,
                                                                                     den_total, cm_total, 1, 0);
    } else if (rows > 0 && sr.right > sr.left) {
      EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaMemsetAsync(buf.row_den, 0, 3 * sizeof(U64) * rows, stream));
      EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaMemsetAsync(buf.row_cm, 0, 3 * sizeof(U64) * rows, stream));
      AdmRowSumsKernel<<<dim3(Blocks(sr.right - sr.left), rows), kTile, 0, stream>>>(planes, sr, s, p.cm, p.den, pixel,
                                                                                     buf.row_den, buf.row_cm, rows, 1);
      AdmRowTotalsKernel<<<Blocks(rows), kTile, 0, stream>>>(buf.row_den, buf.row_cm, rows, p.cm, p.den, den_total,
                                                             cm_total);
    }
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaGetLastError());
  }

  // Motion against the previous reference.
  U64* const motion_total = reinterpret_cast<U64*>(&buf.sums->motion_sad);
  if (prev != nullptr && direct) {
    MotionRowKernel<Sample, U64><<<dim3(Blocks(geometry_.width), geometry_.height), kTile, 0, stream>>>(
        prev, ref, geometry_.width, geometry_.height, bpc, motion_total, 0);
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaGetLastError());
  } else if (prev != nullptr) {
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaMemsetAsync(buf.row_sad, 0, sizeof(unsigned) * geometry_.height, stream));
    MotionRowKernel<Sample, unsigned><<<dim3(Blocks(geometry_.width), geometry_.height), kTile, 0, stream>>>(
        prev, ref, geometry_.width, geometry_.height, bpc, buf.row_sad, 1);
    MotionTotalKernel<<<Blocks(geometry_.height), kTile, 0, stream>>>(buf.row_sad, geometry_.height, motion_total);
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaGetLastError());
  }
  return absl::OkStatus();
}

absl::Status VmafCuda::Enqueue(const DeviceFramePair& pair, cudaStream_t stream) {
  if (!(pair.geometry == geometry_)) return absl::InvalidArgumentError(absl::StrCat(kWho, ": geometry differs"));
  if (pair.planes < 1) return absl::InvalidArgumentError(absl::StrCat(kWho, ": the device frame holds no plane"));
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaSetDevice(device_));
  Buffers& b = *buffers_;
  const double gain_limit = VmafModelLimitsGainToOne(model_) ? 1.0 : 100.0;
  auto enqueue = [&]() -> absl::Status {
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaMemsetAsync(b.sums, 0, sizeof(Sums), stream));
    const bool narrow = geometry_.bytes_per_sample() == 1;
    const absl::Status s =
        narrow ? EnqueueFrame<uint8_t>(pair.reference, pair.distorted, pair.previous_reference, gain_limit, stream)
               : EnqueueFrame<uint16_t>(reinterpret_cast<const uint16_t*>(pair.reference),
                                        reinterpret_cast<const uint16_t*>(pair.distorted),
                                        reinterpret_cast<const uint16_t*>(pair.previous_reference), gain_limit, stream);
    if (!s.ok()) return s;
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho,
                                cudaMemcpyAsync(host_sums_, b.sums, sizeof(Sums), cudaMemcpyDeviceToHost, stream));
    EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventRecord(done_, stream));
    return absl::OkStatus();
  };
  if (absl::Status s = enqueue(); !s.ok()) {
    cudaStreamSynchronize(stream);  // nothing may still read the pair
    return s;
  }
  enqueued_ = true;
  enqueued_motion_ = pair.previous_reference != nullptr;
  return absl::OkStatus();
}

absl::StatusOr<VmafFeatures> VmafCuda::CollectFeatures() {
  if (!enqueued_) return absl::FailedPreconditionError(absl::StrCat(kWho, ": no frame enqueued"));
  enqueued_ = false;
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventSynchronize(done_));
  Sums sums = *host_sums_;
  if (sums_order_ == VmafCudaSums::kDirect) {  // each frame total rounded once, as if one row
    for (int s = 0; s < 4; ++s) {
      for (int b = 0; b < 3; ++b) {
        sums.adm[s].den[b] = gpu::AdmDenRowTotal(sums.adm[s].den[b], adm_params_[s].den);
        sums.adm[s].cm[b] = gpu::AdmCmRowTotal(sums.adm[s].cm[b], adm_params_[s].cm);
      }
    }
  }
  VmafFeatures f;
  for (int s = 0; s < 4; ++s) f.vif[s] = VifScaleScore(sums.vif[s]);
  float num[4], den[4];
  for (int s = 0; s < 4; ++s) AdmScaleNumDen(adm_params_[s], sums.adm[s], &num[s], &den[s]);
  f.adm2 = Adm2FromScales(num, den, geometry_.width, geometry_.height);
  f.motion = enqueued_motion_ ? MotionScore(sums.motion_sad, geometry_.width, geometry_.height) : 0.0;
  return f;
}

}  // namespace vmaf
}  // namespace exactq
