// The vectorised CPU kernels of `ssimulacra2` (internal to ssimulacra2_threads.cc).
//
// The same source (ssimulacra2_kernels.inc) is compiled twice, into a table of
// function pointers per instruction set: kernels_generic.cc (baseline x86-64, 8-lane
// GCC vectors split into SSE2 halves) and kernels_avx2.cc (-mavx2, without -mfma).
// Both run the templates of ssimulacra2_math.h on 8 floats / 4 doubles at a time:
// each lane performs the scalar code's IEEE operations in the same order, so both
// tables return the reference's bits (ssimulacra2_threads_test.cc runs both).
//
// Buffers (all owned by the caller, see ssimulacra2_threads.cc):
//   XYB images: three planes of PaddedWidth(w) x PaddedHeight(h) floats, 32-byte
//     aligned. The padding columns and rows hold +0.0f, which is exactly the recursive
//     Gaussian's zero padding, so the blur reads whole 8-lane blocks without bounds
//     checks.
//   Linear-RGB images (scales >= 1): three planes of h rows, LinearStride(w) floats
//     apart; column w repeats column w - 1, so the 2x2 downsample of an odd width
//     reads its clamped last column from memory.

#ifndef EXACTQ_ENGINE_METRICS_SSIMULACRA2_SSIMULACRA2_KERNELS_H_
#define EXACTQ_ENGINE_METRICS_SSIMULACRA2_SSIMULACRA2_KERNELS_H_

#include <cstddef>
#include <cstdint>

#include "engine/metrics/ssimulacra2/ssimulacra2_math.h"

namespace exactq {
namespace ssimulacra2 {
namespace internal {

inline constexpr int kLanes = 8;  // floats per vector
// Rows of horizontally blurred data kept per quantity: the vertical pass at row n
// reads rows n - 6 and n + 4, and rows are blurred 8 at a time, so at most 18 rows
// are live; three 8-row groups.
inline constexpr int kRingRows = 24;
// Zero columns around a transposed row group: the horizontal pass reads columns
// n - 6 (n >= -4) and n + 4 (n < padded width).
inline constexpr int kTransposePadLeft = 16;
inline constexpr int kTransposePadRight = 16;

inline int PaddedWidth(int w) { return (w + kLanes - 1) / kLanes * kLanes; }
inline int PaddedHeight(int h) { return (h + kLanes - 1) / kLanes * kLanes; }
// Room for column w (the clamped read) and for a 16-float load at every even column.
inline int LinearStride(int w) { return (w + 1 + 31) / 16 * 16; }

// Three planes of floats.
struct Image3 {
  float* data = nullptr;
  int width = 0;
  int height = 0;
  ptrdiff_t stride = 0;        // floats from one row to the next
  ptrdiff_t plane_stride = 0;  // floats from one plane to the next
  float* row(int c, int y) const { return data + c * plane_stride + y * stride; }
};

// One YUV frame as the kernels read it.
struct YuvSource {
  const void* planes[3] = {};  // uint8_t or uint16_t samples, rows packed
  int plane_width[3] = {};
  int bytes_per_sample = 1;
  int width = 0;  // luma
  int height = 0;
  int chroma_height = 0;
  // chroma_x[x] = NearestChromaIndex(min(x, width - 1), ...) for x < PaddedWidth(width).
  const int32_t* chroma_x = nullptr;
  YuvToRgbCoefficients coefficients;
};

// One band of one image at one scale: rows [row_begin, row_end) of the scale, where
// row_begin is even. Converts its linear-RGB rows (from YUV at scale 0, from `linear`
// above) to XYB and, if next_linear is set, writes the 2x2 downsample of its row
// pairs to rows [row_begin / 2, ceil(row_end / 2)) of next_linear.
struct PyramidBand {
  const YuvSource* yuv = nullptr;  // scale 0
  const Image3* linear = nullptr;  // scales >= 1
  const Image3* xyb = nullptr;
  const Image3* next_linear = nullptr;
  int row_begin = 0;
  int row_end = 0;
  // Scale 0: two rows of three planes, LinearStride(width) floats each, 32-byte
  // aligned.
  float* linear_scratch = nullptr;
};

// Per-thread memory of ChannelSums for widths up to `padded_width` (all 32-byte
// aligned; sizes in floats).
struct ChannelScratch {
  float* ring = nullptr;          // 5 * kRingRows * padded_width
  float* column_state = nullptr;  // 5 * 6 * padded_width (6 floats per pole state)
  float* transposed = nullptr;    // 2 * (padded_width + pads) * kLanes
  int padded_width = 0;

  static size_t RingFloats(int padded_width) { return size_t{5} * kRingRows * padded_width; }
  static size_t ColumnStateFloats(int padded_width) { return size_t{30} * padded_width; }
  static size_t TransposedFloats(int padded_width) {
    return size_t{2} * (padded_width + kTransposePadLeft + kTransposePadRight) * kLanes;
  }
};

// One channel of one scale: the five blurs (fused: blurred rows never reach memory),
// the per-pixel terms and the six sums in raster order.
struct ChannelJob {
  const float* ref = nullptr;  // XYB plane, padded as described above
  const float* dis = nullptr;
  ptrdiff_t stride = 0;  // = PaddedWidth(width)
  int width = 0;
  int height = 0;
};

struct KernelTable {
  const char* name;
  void (*pyramid_band)(const PyramidBand& band);
  void (*channel_sums)(const ChannelJob& job, const ChannelScratch& scratch, double (&sums)[kSumsPerChannel]);
};

const KernelTable& GenericKernels();
// Requires AVX2 at run time (Avx2Supported()).
const KernelTable& Avx2Kernels();
bool Avx2Supported();

}  // namespace internal
}  // namespace ssimulacra2
}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_SSIMULACRA2_SSIMULACRA2_KERNELS_H_
