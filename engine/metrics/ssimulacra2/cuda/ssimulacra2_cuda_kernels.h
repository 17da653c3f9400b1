// The per-thread bodies of the ssimulacra2 CUDA twin's kernels, host/device code
// (EXACTQ_HD), and the layout of the image planes in device scratch.
//
// The kernels of ssimulacra2_cuda_pipeline.cu are thin wrappers around these bodies; the
// host-only ssimulacra2_cuda_emulation_test runs the same bodies in plain loops (every
// thread, in any order: no body reads what another body of the same launch writes; the
// tiled horizontal blur's phases, which share tiles within a warp, in the warp's order)
// and sums the term planes with the plain loop, and must get ReferenceSums' bits. So the
// walk over the images (indexing, chroma, pyramid, blur lines and tiles, term planes) is
// checked on any machine; the device adds the launch geometry, the warp's
// synchronisation, the streams and the exact ordered sum.
//
// Every body calls the shared templates of ssimulacra2_math.h on ScalarLanes, in the
// reference's order (ssimulacra2_reference.cc), one IEEE operation each.
#ifndef EXACTQ_ENGINE_METRICS_SSIMULACRA2_CUDA_SSIMULACRA2_CUDA_KERNELS_H_
#define EXACTQ_ENGINE_METRICS_SSIMULACRA2_CUDA_SSIMULACRA2_CUDA_KERNELS_H_

#include <cstddef>
#include <cstdint>

#include "engine/metrics/ssimulacra2/ssimulacra2_math.h"

namespace exactq {
namespace ssimulacra2 {
namespace gpu {

inline constexpr int kImageChannels = 3;                                         // X, Y, B (or R, G, B)
inline constexpr int kSumCount = kMaxScales * kImageChannels * kSumsPerChannel;  // 108
inline constexpr int kBlurKinds = 5;                                             // mu1, mu2, s11, s22, s12
inline constexpr int kBlurLines = kImageChannels * kBlurKinds;
// Per channel two stored planes of doubles, d (the SSIM dissimilarity) and the edge
// difference; each of the channel's six terms is an exact function of one of them
// (TermFromBase).
inline constexpr int kTermBases = 2;
inline constexpr int kTermBasePlanes = kImageChannels * kTermBases;

// What the device leaves for the host after a frame, read back in one copy: the 108 sums
// (FrameSums::sums order, 0 for scales not computed) and, per sum, the status of its
// segment pipeline (exact::gpu::kSegmentAccepted = 0; 0 too where no segment pipeline
// ran: the event walk and the inexact tree sum have no refusals) and the chunks it
// summarised lane by lane.
struct SumResults {
  double sums[kSumCount];
  int32_t status[kSumCount];
  int32_t
      tile_chunks[kSumCount];  // chunks through the tile path (the strided form refused them; a first chunk: one term)
};

// One frame pair on the device.
struct DeviceFrame {
  const void* ref = nullptr;  // device: the frame's bytes in the wire layout (planes Y, U, V)
  const void* dis = nullptr;
  int width = 0;
  int height = 0;
  int bit_depth = 8;  // 8: one byte per sample; 9..16: little-endian uint16
  int chroma_width = 0;
  int chroma_height = 0;
  size_t plane_offset[3] = {0, 0, 0};   // bytes from the frame's start
  YuvToRgbCoefficients coefficients{};  // MakeYuvToRgbCoefficients(matrix, bit_depth)
  float cube_root_of_bias = 0.0f;       // CubeRootOfOpsinBias(), formed on the host
  const float* eotf_table = nullptr;    // device copy of kSrgbEotfTable
  void* scratch = nullptr;              // ScratchBytes(width, height) of device memory
  SumResults* results = nullptr;        // device: the 108 sums and their statuses
};

// B.4 of one pixel's linear RGB into its three XYB planes at index i.
EXACTQ_HD inline void WriteXyb(float* xyb, size_t plane, size_t i, float r, float g, float b, float cube_root_of_bias) {
  float xo, yo, bo;
  LinearRgbToXyb<ScalarLanes>(r, g, b, cube_root_of_bias, xo, yo, bo);
  xyb[i] = xo;
  xyb[plane + i] = yo;
  xyb[2 * plane + i] = bo;
}

// Scale sides and count, as ScaleSide/ScaleCount (ssimulacra2_score.cc) define them:
// repeated ceil(side / 2), scales while both sides are >= kMinScaleSide, at most 6.
EXACTQ_HD inline int HalfSide(int side) { return (side + 1) / 2; }
EXACTQ_HD inline int ScaleCountOf(int width, int height) {
  int count = 0;
  int w = width;
  int h = height;
  while (count < kMaxScales && w >= kMinScaleSide && h >= kMinScaleSide) {
    ++count;
    w = HalfSide(w);
    h = HalfSide(h);
  }
  return count;
}

inline size_t AlignScratch(size_t bytes) { return (bytes + 255) & ~size_t{255}; }

// The image planes. Every plane has room for a full-size (scale 0) plane, `plane`
// samples; a scale's plane is packed rows of its own width at the same start. Scale s
// uses lin[s % 2] (the pyramid's ping-pong), xyb[s % 2] and blurred[s % 2]: while its
// terms are formed, the main stream already builds scale s + 1 in the other parity's.
// The term base planes are per scale (bases[s], bases_plane[s] doubles each: scale s's
// size, 8% more than a full plane for all scales together): scale s's sums read only
// its own, so no later scale's terms need wait for them (with one sum stream per scale
// parity they still do, in stream order).
struct Planes {
  size_t plane = 0;
  float* lin[2][2] = {};                // [ping-pong buffer][image]: 3 planes each (linear R, G, B)
  float* xyb[2][2] = {};                // [scale parity][image]: 3 planes each
  float* rows = nullptr;                // kBlurLines planes: the horizontal pass, line = channel * 5 + kind
  float* blurred[2] = {};               // [scale parity]: kBlurLines planes, after the vertical pass
  double* bases[kMaxScales] = {};       // [scale]: kTermBasePlanes planes of doubles: TermBasePlane
  size_t bases_plane[kMaxScales] = {};  // [scale]: doubles per base plane (the scale's pixels)
  size_t bytes = 0;                     // from the start of the scratch
};

// Scale s's planes (the image planes of parity s % 2, its own base planes): what its
// blur and terms read and write.
struct ScalePlanes {
  size_t plane = 0;
  const float* xyb[2] = {};  // [image]: 3 planes each
  float* rows = nullptr;
  float* blurred = nullptr;
  double* bases = nullptr;
  size_t bases_plane = 0;
};

EXACTQ_HD inline ScalePlanes ScaleView(const Planes& p, int s) {
  const int parity = s % 2;
  ScalePlanes v;
  v.plane = p.plane;
  v.xyb[0] = p.xyb[parity][0];
  v.xyb[1] = p.xyb[parity][1];
  v.rows = p.rows;
  v.blurred = p.blurred[parity];
  v.bases = p.bases[s];
  v.bases_plane = p.bases_plane[s];
  return v;
}

// The stored plane term k (kSumSsim .. kSumDetail4) of channel c is formed from: d for
// the two SSIM terms, the edge difference for the four others.
EXACTQ_HD inline double* TermBasePlane(const ScalePlanes& p, int c, int k) {
  const int base = k == kSumSsim || k == kSumSsim4 ? 0 : 1;
  return p.bases + static_cast<size_t>(c * kTermBases + base) * p.bases_plane;
}

// base may be null (then only `bytes` is meaningful).
inline Planes CarvePlanes(void* base, int width, int height) {
  Planes p;
  p.plane = static_cast<size_t>(width) * height;
  char* b = static_cast<char*>(base);
  size_t offset = 0;
  const auto take = [&](size_t bytes) {
    char* at = b == nullptr ? nullptr : b + offset;
    offset += AlignScratch(bytes);
    return at;
  };
  const size_t image3 = kImageChannels * p.plane * sizeof(float);
  for (auto& buffer : p.lin) {
    for (float*& image : buffer) image = reinterpret_cast<float*>(take(image3));
  }
  for (auto& parity : p.xyb) {
    for (float*& image : parity) image = reinterpret_cast<float*>(take(image3));
  }
  p.rows = reinterpret_cast<float*>(take(kBlurLines * p.plane * sizeof(float)));
  for (float*& parity : p.blurred) parity = reinterpret_cast<float*>(take(kBlurLines * p.plane * sizeof(float)));
  int w = width;
  int h = height;
  for (int s = 0; s < ScaleCountOf(width, height); ++s) {
    p.bases_plane[s] = static_cast<size_t>(w) * h;
    p.bases[s] = reinterpret_cast<double*>(take(kTermBasePlanes * p.bases_plane[s] * sizeof(double)));
    w = HalfSide(w);
    h = HalfSide(h);
  }
  p.bytes = offset;
  return p;
}

// ---------------------------------------------------------------------------------
// Bodies. Each is one thread's work; out-of-range threads return at once.

// B.2-B.3 at pixel (x, y) of scale 0 of `image` (0 ref, 1 dis) into lin[0][image], and
// B.4 of the same pixel into xyb[0][image] (scale 0's XYB needs only the pixel itself).
template <class T>
EXACTQ_HD inline void YuvToLinearAt(const DeviceFrame& f, const Planes& p, int x, int y, int image) {
  if (x >= f.width || y >= f.height) return;
  const char* base = static_cast<const char*>(image == 0 ? f.ref : f.dis);
  float* out = p.lin[0][image];
  const T* luma = reinterpret_cast<const T*>(base + f.plane_offset[0]);
  const T* cb = reinterpret_cast<const T*>(base + f.plane_offset[1]);
  const T* cr = reinterpret_cast<const T*>(base + f.plane_offset[2]);
  const int cy = NearestChromaIndex(y, f.height, f.chroma_height);
  const int cx = NearestChromaIndex(x, f.width, f.chroma_width);
  const size_t i = static_cast<size_t>(y) * f.width + x;
  const size_t ci = static_cast<size_t>(cy) * f.chroma_width + cx;
  float r, g, b;
  YuvToLinearRgb<ScalarLanes>(f.coefficients, f.eotf_table, static_cast<float>(luma[i]), static_cast<float>(cb[ci]),
                              static_cast<float>(cr[ci]), r, g, b);
  out[i] = r;
  out[p.plane + i] = g;
  out[2 * p.plane + i] = b;
  WriteXyb(p.xyb[0][image], p.plane, i, r, g, b, f.cube_root_of_bias);
}

// B.5 then B.4: output (ox, oy) of the three channels of lin[1 - cur][image] (w x h) into
// lin[cur][image], and that pixel's XYB into xyb[cur][image] (cur = the new scale's parity).
EXACTQ_HD inline void DownsampleAt(const Planes& p, int cur, int w, int h, int ox, int oy, int image,
                                   float cube_root_of_bias) {
  const int ow = HalfSide(w);
  const int oh = HalfSide(h);
  if (ox >= ow || oy >= oh) return;
  const int y0 = 2 * oy;
  const int y1 = 2 * oy + 1 < h ? 2 * oy + 1 : h - 1;
  const int x0 = 2 * ox;
  const int x1 = 2 * ox + 1 < w ? 2 * ox + 1 : w - 1;
  const size_t r0 = static_cast<size_t>(y0) * w;
  const size_t r1 = static_cast<size_t>(y1) * w;
  const size_t o = static_cast<size_t>(oy) * ow + ox;
  float rgb[kImageChannels];
  for (int c = 0; c < kImageChannels; ++c) {
    const float* in = p.lin[1 - cur][image] + c * p.plane;
    rgb[c] = Downsample4<ScalarLanes>(in[r0 + x0], in[r0 + x1], in[r1 + x0], in[r1 + x1]);
    p.lin[cur][image][c * p.plane + o] = rgb[c];
  }
  WriteXyb(p.xyb[cur][image], p.plane, o, rgb[0], rgb[1], rgb[2], cube_root_of_bias);
}

// The input of blur line `line` (channel * 5 + kind) from `start`: img1, img2,
// img1*img1, img2*img2, img1*img2 (each product one f32 rounding: the reference's
// Multiply).
struct BlurInput {
  const float* a;
  const float* b;
  bool product;
  EXACTQ_HD float operator()(size_t i) const { return product ? a[i] * b[i] : a[i]; }
};

EXACTQ_HD inline BlurInput BlurInputFor(const ScalePlanes& p, int line, size_t start) {
  const int c = line / kBlurKinds;
  const int kind = line % kBlurKinds;
  const float* one = p.xyb[0] + c * p.plane + start;
  const float* two = p.xyb[1] + c * p.plane + start;
  switch (kind) {
    case 0:
      return {one, one, false};
    case 1:
      return {two, two, false};
    case 2:
      return {one, one, true};
    case 3:
      return {two, two, true};
    default:
      return {one, two, true};
  }
}

struct PlaneInput {
  const float* p;
  EXACTQ_HD float operator()(size_t i) const { return p[i]; }
};

// B.6 along one line: ssimulacra2_reference.cc BlurLine, operation for operation, steps
// n_begin .. n_end - 1 of it (the whole line is n = -kBlurRadius + 1 .. length - 1, from
// ZeroBlurState), carrying `state`. in(j) is the line's input at position j (0 <= j <
// length); out(n, o) receives output n.
template <class Input, class Output>
EXACTQ_HD inline void BlurLineSteps(const Input& in, const Output& out, int length, int n_begin, int n_end,
                                    BlurState<float>& state) {
  for (int n = n_begin; n < n_end; ++n) {
    const int left = n - kBlurRadius - 1;
    const int right = n + kBlurRadius - 1;
    const float left_value = left >= 0 ? in(left) : 0.0f;
    const float right_value = right < length ? in(right) : 0.0f;
    const float o = BlurStep(state, left_value, right_value);
    if (n >= 0) out(n, o);
  }
}

// A line of a plane: position j at j * stride.
template <class Input>
struct StridedInput {
  Input in;
  size_t stride;
  EXACTQ_HD float operator()(int j) const { return in(static_cast<size_t>(j) * stride); }
};

struct StridedOutput {
  float* p;
  size_t stride;
  EXACTQ_HD void operator()(int n, float o) const { p[static_cast<size_t>(n) * stride] = o; }
};

// The whole line, one thread walking it start to end.
template <class Input>
EXACTQ_HD inline void BlurLineAt(const Input& in, float* out, int length, size_t stride) {
  BlurState<float> state = ZeroBlurState(0.0f);
  BlurLineSteps(StridedInput<Input>{in, stride}, StridedOutput{out, stride}, length, -kBlurRadius + 1, length, state);
}

// The horizontal pass, thread t = line * h + row, of xyb (w x h) into rows. (The device
// runs the tiled form below; this one is the plain form it is tested against.)
EXACTQ_HD inline void BlurRowAt(const ScalePlanes& p, int w, int h, int64_t t) {
  if (t >= static_cast<int64_t>(h) * kBlurLines) return;
  const int row = static_cast<int>(t % h);
  const int line = static_cast<int>(t / h);
  const size_t start = static_cast<size_t>(row) * w;
  BlurLineAt(BlurInputFor(p, line, start), p.rows + line * p.plane + start, w, 1);
}

// The horizontal pass, tiled: a warp takes 32 rows of one blur line (lane = row - row0)
// and goes along them in tiles of 32 columns. Each input tile is loaded coalesced (for
// each of the 32 rows, lane = column) into shared memory, each lane walks its own row
// through it with BlurLineSteps (the same steps, in the same order, as BlurLineAt; the
// filter state carried from tile to tile in registers), and each finished output tile is
// stored coalesced. Group b is the steps whose right input lies in tile b: n = 32b - 4 ..
// 32b + 27; they read tiles b - 1 and b (left inputs lag by 10) and write outputs in tiles
// b - 1 and b, so two of each are resident (slot = tile % 2). Per group, with the warp
// in step between phases (__syncwarp on the device):
//   BlurTilePut(b)    input tile b (fetched into registers during the previous group)
//                     into slot b % 2 (tile b - 2 is no longer read);
//   BlurTileFetch(b + 1)  the next input tile into registers (its loads in flight
//                     during the walk);
//   BlurTileWalk(b)   every lane: the group's steps of its row;
//   BlurTileStore(b - 1)  output tile b - 1 is complete: to rows.
// then BlurTileStore(last group). Rows >= h and columns >= w load 0 and are not stored.
inline constexpr int kBlurTile = 32;
inline constexpr int kBlurStepLead = kBlurRadius - 1;  // the right input is 4 ahead of the output

struct BlurRowTiles {
  float in[2][kBlurTile][kBlurTile + 1];  // [slot][row in warp][column in tile]; +1: no bank conflicts
  float out[2][kBlurTile][kBlurTile + 1];
};

EXACTQ_HD inline int BlurRowGroups(int w) { return (w + kBlurStepLead + kBlurTile - 1) / kBlurTile; }

// Input tile b of the warp's rows into registers, lane = column: all its loads are
// issued before any value is used, so a tile costs one memory latency, and the kernel
// fetches tile b + 1 while the lanes walk tile b. The products (s11, s22, s12) are formed
// only when the tile is put into shared memory: a multiply at fetch time would wait for
// its loads there and then (on the H200 that wait was half the kernel's stalls).
struct BlurTileRegs {
  float a[kBlurTile];
  float b[kBlurTile];  // the second factor, for product lines
};

EXACTQ_HD inline void BlurTileFetch(const ScalePlanes& p, int w, int h, int line, int row0, int b, int lane,
                                    BlurTileRegs& r) {
  const int column = b * kBlurTile + lane;
  const BlurInput in = BlurInputFor(p, line, 0);
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int k = 0; k < kBlurTile; ++k) {
    const int row = row0 + k;
    const bool inside = row < h && column < w;
    const size_t i = static_cast<size_t>(row) * w + static_cast<size_t>(column);
    r.a[k] = inside ? in.a[i] : 0.0f;
    r.b[k] = inside && in.product ? in.b[i] : 0.0f;
  }
}

// The fetched tile b into its slot (b % 2; tile b - 2, the slot's previous tile, is no
// longer read), each value as BlurInput gives it (a product rounded once).
EXACTQ_HD inline void BlurTilePut(const ScalePlanes& p, int line, int b, int lane, const BlurTileRegs& r,
                                  BlurRowTiles& t) {
  const bool product = BlurInputFor(p, line, 0).product;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int k = 0; k < kBlurTile; ++k) t.in[b & 1][k][lane] = product ? r.a[k] * r.b[k] : r.a[k];
}

struct TileInput {
  const BlurRowTiles* t;
  int lane;
  EXACTQ_HD float operator()(int j) const { return t->in[(j / kBlurTile) & 1][lane][j % kBlurTile]; }
};

struct TileOutput {
  BlurRowTiles* t;
  int lane;
  EXACTQ_HD void operator()(int n, float o) const { t->out[(n / kBlurTile) & 1][lane][n % kBlurTile] = o; }
};

// Right input j = n + kBlurStepLead, left input n - kBlurRadius - 1: the left one lags
// the right one by this many columns.
inline constexpr int kBlurLeftLag = 2 * kBlurRadius;

EXACTQ_HD inline void BlurTileWalk(int w, int h, int row0, int b, int lane, BlurRowTiles& t, BlurState<float>& state) {
  if (row0 + lane >= h) return;
  if (b >= 1 && (b + 1) * kBlurTile <= w) {
    // An inner group: every step's inputs and output lie inside the row, so BlurLineSteps'
    // edge tests are all true and its index arithmetic is known here; the same steps on
    // the same values, with the tile offsets fixed at compile time (on the device a group
    // took ~87 instructions a step the general way).
    const float* in_before = t.in[(b - 1) & 1][lane];
    const float* in_this = t.in[b & 1][lane];
    float* out_before = t.out[(b - 1) & 1][lane];
    float* out_this = t.out[b & 1][lane];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int k = 0; k < kBlurTile; ++k) {  // step n = b * kBlurTile - kBlurStepLead + k
      const float left = k < kBlurLeftLag ? in_before[kBlurTile - kBlurLeftLag + k] : in_this[k - kBlurLeftLag];
      const float o = BlurStep(state, left, in_this[k]);
      if (k < kBlurStepLead) {
        out_before[kBlurTile - kBlurStepLead + k] = o;
      } else {
        out_this[k - kBlurStepLead] = o;
      }
    }
    return;
  }
  const int n_begin = b * kBlurTile - kBlurStepLead;
  const int group_end = n_begin + kBlurTile;
  BlurLineSteps(TileInput{&t, lane}, TileOutput{&t, lane}, w, n_begin, group_end < w ? group_end : w, state);
}

EXACTQ_HD inline void BlurTileStore(const ScalePlanes& p, int w, int h, int line, int row0, int tile, int lane,
                                    const BlurRowTiles& t) {
  const int column = tile * kBlurTile + lane;
  if (column >= w) return;
  for (int r = 0; r < kBlurTile; ++r) {
    const int row = row0 + r;
    if (row >= h) break;
    p.rows[line * p.plane + static_cast<size_t>(row) * w + column] = t.out[tile & 1][r][lane];
  }
}

// The vertical pass, thread t = line * w + column, of rows into blurred: BlurLineAt's
// steps down the column, in batches of kBlurColumnBatch steps. Each batch's loads are
// issued a batch ahead (two register buffers), so the recursion waits on its arithmetic,
// not on each row's load; and each row is loaded once: a step's left input is the right
// input of the step kBlurColumnLag before it (0 before the column's start, as in
// BlurLineSteps), carried in registers.
inline constexpr int kBlurColumnBatch = 16;
inline constexpr int kBlurColumnLag = 2 * kBlurRadius;
static_assert(kBlurColumnBatch >= kBlurColumnLag, "a step's left input is in this batch or the one before");

struct BlurColumnBatch {
  float right[kBlurColumnBatch];
};

// The right inputs of steps n0 .. n0 + kBlurColumnBatch - 1 (0 past the column's end).
EXACTQ_HD inline void LoadColumnBatch(const float* in, size_t stride, int h, int n0, BlurColumnBatch& batch) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int k = 0; k < kBlurColumnBatch; ++k) {
    const int r = n0 + k + kBlurRadius - 1;  // >= 0: n0 >= -kBlurRadius + 1
    batch.right[k] = r < h ? in[static_cast<size_t>(r) * stride] : 0.0f;
  }
}

// Steps n0 .. of the batch; `carry` holds the right inputs of the kBlurColumnLag steps
// before n0 and is left holding this batch's last ones.
EXACTQ_HD inline void StepColumnBatch(const BlurColumnBatch& batch, float (&carry)[kBlurColumnLag], float* out,
                                      size_t stride, int h, int n0, BlurState<float>& state) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int k = 0; k < kBlurColumnBatch; ++k) {
    const int n = n0 + k;
    if (n < h) {
      const float left = k < kBlurColumnLag ? carry[k] : batch.right[k - kBlurColumnLag];
      const float o = BlurStep(state, left, batch.right[k]);
      if (n >= 0) out[static_cast<size_t>(n) * stride] = o;
    }
  }
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int j = 0; j < kBlurColumnLag; ++j) carry[j] = batch.right[kBlurColumnBatch - kBlurColumnLag + j];
}

EXACTQ_HD inline void BlurColumnAt(const ScalePlanes& p, int w, int h, int64_t t) {
  if (t >= static_cast<int64_t>(w) * kBlurLines) return;
  const int column = static_cast<int>(t % w);
  const int line = static_cast<int>(t / w);
  const float* in = p.rows + line * p.plane + column;
  float* out = p.blurred + line * p.plane + column;
  const size_t stride = static_cast<size_t>(w);
  BlurState<float> state = ZeroBlurState(0.0f);
  float carry[kBlurColumnLag];
  for (float& v : carry) v = 0.0f;  // the steps before the first have no inputs: 0
  BlurColumnBatch even;
  BlurColumnBatch odd;
  constexpr int kB = kBlurColumnBatch;
  LoadColumnBatch(in, stride, h, -kBlurRadius + 1, even);
  for (int n0 = -kBlurRadius + 1; n0 < h; n0 += 2 * kB) {
    LoadColumnBatch(in, stride, h, n0 + kB, odd);
    StepColumnBatch(even, carry, out, stride, h, n0, state);
    LoadColumnBatch(in, stride, h, n0 + 2 * kB, even);
    StepColumnBatch(odd, carry, out, stride, h, n0 + kB, state);
  }
}

// B.7 at pixel i of channel c: the SSIM dissimilarity d and the edge difference, as
// ChannelSums computes them.
EXACTQ_HD inline void TermBasesAt(const ScalePlanes& p, int c, size_t i, double& d, double& edge) {
  using L = ScalarLanes;
  const float img1 = p.xyb[0][c * p.plane + i];
  const float img2 = p.xyb[1][c * p.plane + i];
  const float* b = p.blurred + static_cast<size_t>(c) * kBlurKinds * p.plane;
  const float mu1 = b[i];
  const float mu2 = b[p.plane + i];
  const float s11 = b[2 * p.plane + i];
  const float s22 = b[3 * p.plane + i];
  const float s12 = b[4 * p.plane + i];
  float num_m, num_s, den_s;
  SsimFactors<L>(mu1, mu2, s11, s22, s12, num_m, num_s, den_s);
  d = SsimDissimilarity<L>(num_m, num_s, den_s);
  edge = EdgeDifference<L>(img1, mu1, img2, mu2);
}

inline constexpr double kInfinity = __builtin_huge_val();  // usable in host and device code

// B.8: term k from its base (TermBasePlane's value): d, d^4, the edge difference's
// artifact and detail parts and their fourth powers, as ChannelSums forms them
// (SplitEdgeDifference's parts: max(y, +0) for y = edge or -edge, the edge itself where
// it is not finite; Quartic). k only picks among values, with no branch on it: the sums'
// chunk loops call this once per term (MappedArrayTerms<TermOfBase>), and a chain of
// branches there kept each term's arithmetic apart (on the H200 a third of the chunk
// stage's instructions). TermFromBaseIsTheSpecB8Term checks it against B.8 kind by kind.
EXACTQ_HD inline double TermFromBase(int k, double base) {
  const bool edge = k >= kSumArtifact;  // an edge difference's part, not d
  const bool detail = k >= kSumDetail;  // the part below zero, negated
  const bool fourth = (k & 1) != 0;     // kSumSsim4, kSumArtifact4, kSumDetail4
  const double y = detail ? -base : base;
  const bool finite = fabs(base) < kInfinity;  // false for NaN and +-inf
  // y where y > 0, +0 where y <= 0, the base itself where it is not finite. Not written
  // as a max of y and 0, which the compiler forms and the device emulates (it has no
  // binary64 max instruction) in five instructions or so.
  const double part = finite && !(y > 0.0) ? 0.0 : (finite ? y : base);
  const double v = edge ? part : base;
  const double q = Quartic(v);
  return fourth ? q : v;
}
static_assert(kSumSsim == 0 && kSumSsim4 == 1 && kSumArtifact == 2 && kSumArtifact4 == 3 && kSumDetail == 4 &&
                  kSumDetail4 == 5,
              "TermFromBase reads the sum's kind from these values");

// The map of term k, for engine/exact's MappedArrayTerms over TermBasePlane(p, c, k).
struct TermOfBase {
  int k = 0;
  EXACTQ_HD double operator()(double base) const { return TermFromBase(k, base); }
};

// TermOfBase{K} with K fixed at compile time (the same function): what the pipeline's
// VisitMap hands the exact sums' per-term loop, so that it holds only kind K's arithmetic.
template <int K>
struct TermOfKind {
  // Every finite term but d's is >= 0 for any base: a part is max(y, +0), a fourth power
  // the square of a square (TermFromBaseIsTheSpecB8Term checks it). d's sum would need
  // the stored d to be clamped, a promise about the data, not the map.
  static constexpr bool kNonNegativeTerms = K != kSumSsim;
  EXACTQ_HD double operator()(double base) const { return TermFromBase(K, base); }
};

// The segment pipeline's advice for term k: TermFromBase's value in binary32, from the
// base rounded to float. The exact sums never read it; it only says where the running
// sum will cross a binade (the approximate chunk sums: engine/exact's PredictCrossing
// keeps a margin of 2^-20 relative, and a finite, normal advice term is within 7 float
// roundings, 4.2e-7 relative, of the exact term). Wrong advice costs time, never bits: a
// misplaced check is refused and the frame is summed again by the event walk. A
// non-finite base gives a non-finite or zero advice term; the exact sums meet the same
// base and refuse the chunk (a special term) wherever the advice put it. On the H200
// binary32 advice made the exact frame 2% faster (the terms kernel issues binary64
// arithmetic at half the binary32 rate), with the same chunks through the redo on every
// corpus frame.
EXACTQ_HD inline float AdviceTermFromBase(int k, float base) {
  const bool edge = k >= kSumArtifact;
  const bool detail = k >= kSumDetail;
  const bool fourth = (k & 1) != 0;
  const float y = detail ? -base : base;
  const float v = edge ? (y > 0.0f ? y : 0.0f) : base;
  const float v2 = v * v;
  return fourth ? v2 * v2 : v;
}

// Pixel i of channel c: its six terms, and (store_bases) its two bases into their planes.
EXACTQ_HD inline void TermsAt(const ScalePlanes& p, int c, size_t i, bool store_bases,
                              double (&terms)[kSumsPerChannel]) {
  double d, edge;
  TermBasesAt(p, c, i, d, edge);
  if (store_bases) {
    TermBasePlane(p, c, kSumSsim)[i] = d;
    TermBasePlane(p, c, kSumArtifact)[i] = edge;
  }
  for (int k = 0; k < kSumsPerChannel; ++k) terms[k] = TermFromBase(k, k == kSumSsim || k == kSumSsim4 ? d : edge);
}

// A base's plain store (the device's kernel may store them under an L2 policy instead).
struct PlainStore {
  EXACTQ_HD void operator()(double* at, double v) const { *at = v; }
};

// Pixel i of channel c for the segment pipeline: its two bases into their planes (through
// `store`), and its six advice terms (AdviceTermFromBase).
template <class Store = PlainStore>
EXACTQ_HD inline void BasesAndAdviceAt(const ScalePlanes& p, int c, size_t i, float (&advice)[kSumsPerChannel],
                                       Store store = {}) {
  double d, edge;
  TermBasesAt(p, c, i, d, edge);
  store(TermBasePlane(p, c, kSumSsim) + i, d);
  store(TermBasePlane(p, c, kSumArtifact) + i, edge);
  const float fd = static_cast<float>(d);
  const float fe = static_cast<float>(edge);
  for (int k = 0; k < kSumsPerChannel; ++k)
    advice[k] = AdviceTermFromBase(k, k == kSumSsim || k == kSumSsim4 ? fd : fe);
}

}  // namespace gpu
}  // namespace ssimulacra2
}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_SSIMULACRA2_CUDA_SSIMULACRA2_CUDA_KERNELS_H_
