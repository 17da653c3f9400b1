#include "engine/scale/bicubic_scaler.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "absl/strings/str_cat.h"

namespace exactq {
namespace scale {
namespace {

// The kernels below are forced inline so that each is compiled inside the AVX2 or the
// baseline entry point that calls it (integer arithmetic: the bytes do not depend on
// which one runs).
#define EXACTQ_SCALE_INLINE inline __attribute__((always_inline))

int64_t FloorDiv(int64_t a, int64_t b) {  // b > 0
  const int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

// One folded axis as the kernels read it.
struct Axis {
  int dst;
  int taps;
  const int32_t* first;
  const int32_t* weight;
  // The AVX2 horizontal kernel's tables (BicubicScaler::Shuffles); 0 outputs: none.
  int shuffled_outputs = 0;
  const int32_t* shuffle_base = nullptr;
  const int8_t* shuffle_mask = nullptr;
  const int16_t* shuffle_weight = nullptr;
};

// A horizontally scaled row's sums. Every partial sum is at most max_value * sum |w| in
// magnitude, below 2^16 * 2^15 = 2^31 while an output's sum |w| stays below 2^15: it is
// 2^14 plus twice the weight of the kernel's negative lobes, at most 21,698 (1.32 * 2^14)
// over every pair of sizes up to 128 and the ladder's sizes
// (bicubic_scaler_parity_test); BicubicScaler::Create checks the actual taps.
using Row = int32_t;

// One source row at the target width: out[x] = sum_k row[first[x] + k] * weight[x][k],
// for x from `begin`.
template <int kTaps, class Sample>
EXACTQ_SCALE_INLINE void HorizontalRow(const Sample* __restrict row, const Axis& h, Row* __restrict out,
                                       int begin = 0) {
  const int taps = kTaps > 0 ? kTaps : h.taps;
  for (int x = begin; x < h.dst; ++x) {
    const Sample* s = row + h.first[x];
    const int32_t* w = h.weight + static_cast<size_t>(x) * taps;
    Row sum = 0;
    for (int k = 0; k < taps; ++k) sum += static_cast<Row>(s[k]) * static_cast<Row>(w[k]);
    out[x] = sum;
  }
}

// floor((v + 2^(2 kTapBits - 1)) / 2^(2 kTapBits)) clamped to [0, max_value], written so
// that it vectorises without a 64-bit arithmetic shift: a negative v + half floors to a
// negative value and clamps to 0 either way.
template <class Sample>
EXACTQ_SCALE_INLINE Sample RoundAndClamp(int64_t v, int64_t max_value) {
  int64_t t = v + (int64_t{1} << (2 * kTapBits - 1));
  t = t < 0 ? 0 : t;
  const int64_t value = static_cast<int64_t>(static_cast<uint64_t>(t) >> (2 * kTapBits));
  return static_cast<Sample>(value > max_value ? max_value : value);
}

// One output row from four horizontally scaled rows (every upscale: the ladder's case).
template <class Sample>
EXACTQ_SCALE_INLINE void VerticalRow4(const Row* const* rows, const int32_t* w, int width, int64_t max_value,
                                      Sample* __restrict out) {
  const Row* __restrict r0 = rows[0];
  const Row* __restrict r1 = rows[1];
  const Row* __restrict r2 = rows[2];
  const Row* __restrict r3 = rows[3];
  const int64_t w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3];
  for (int x = 0; x < width; ++x) {
    const int64_t v = w0 * static_cast<int64_t>(r0[x]) + w1 * static_cast<int64_t>(r1[x]) +
                      w2 * static_cast<int64_t>(r2[x]) + w3 * static_cast<int64_t>(r3[x]);
    out[x] = RoundAndClamp<Sample>(v, max_value);
  }
}

// Any tap count: the sums accumulate in `sums`, one tap row at a time.
template <class Sample>
EXACTQ_SCALE_INLINE void VerticalRowAny(const Row* const* rows, const int32_t* w, int taps, int width,
                                        int64_t max_value, int64_t* __restrict sums, Sample* __restrict out) {
  for (int x = 0; x < width; ++x) sums[x] = 0;
  for (int k = 0; k < taps; ++k) {
    const Row* __restrict r = rows[k];
    const int64_t wk = w[k];
    for (int x = 0; x < width; ++x) sums[x] += wk * static_cast<int64_t>(r[x]);
  }
  for (int x = 0; x < width; ++x) out[x] = RoundAndClamp<Sample>(sums[x], max_value);
}

// One band of output rows [y_begin, y_end) of a plane. The vertical pass walks them in
// order; the source rows it reads (first[y] .. first[y] + taps - 1, non-decreasing in y)
// are scaled horizontally once each into a ring of `v.taps` rows, slot r % v.taps. A band
// starts with an empty ring, so bands are independent (rows near a band's start are
// scaled horizontally by both neighbours: the same sums twice).
template <class Sample>
struct PlaneJob {
  int y_begin;
  int y_end;
  const Sample* source;  // source_width per row
  int source_width;
  Sample* target;  // h.dst per row
  Axis h;
  Axis v;
  int64_t max_value;
  Row* ring;         // v.taps rows of h.dst
  int* ring_rows;    // the source row each slot holds, -1: none
  const Row** rows;  // v.taps entries
  int64_t* sums;     // h.dst
};

#if defined(__x86_64__)
// The four-tap horizontal pass (every upscale) eight outputs at a time. Four outputs'
// samples lie within 16 bytes of the first one's (checked when the tables are made), so
// one load and one byte shuffle put their 4 x 4 samples, widened to 16 bits, in a
// register; pmaddwd multiplies them by the 16-bit taps and adds pairs, phaddd adds the
// pairs of two such groups. Integer arithmetic on the same terms as HorizontalRow (the
// samples and taps fit 16 bits, every sum 32): the same sums. Not inlined: it is only
// ever called from the AVX2 build.
template <class Sample>
__attribute__((target("avx2"))) void HorizontalRow4Avx2(const Sample* __restrict row, const Axis& h,
                                                        Row* __restrict out) {
  const uint8_t* bytes = reinterpret_cast<const uint8_t*>(row);
  for (int g = 0; g < h.shuffled_outputs / 8; ++g) {
    __m256i half[2];
    for (int j = 0; j < 2; ++j) {
      const int group = 2 * g + j;  // four outputs
      const __m128i window = _mm_loadu_si128(
          reinterpret_cast<const __m128i*>(bytes + static_cast<size_t>(h.shuffle_base[group]) * sizeof(Sample)));
      const __m256i samples = _mm256_shuffle_epi8(
          _mm256_broadcastsi128_si256(window),
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(h.shuffle_mask + 32 * static_cast<size_t>(group))));
      half[j] = _mm256_madd_epi16(
          samples,
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(h.shuffle_weight + 16 * static_cast<size_t>(group))));
    }
    // Lanes: outputs 0 1 4 5 | 2 3 6 7; the permute puts them in order.
    const __m256i sums = _mm256_permute4x64_epi64(_mm256_hadd_epi32(half[0], half[1]), 0xD8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8 * static_cast<size_t>(g)), sums);
  }
  HorizontalRow<4>(row, h, out, h.shuffled_outputs);
}
#endif

template <class Sample, bool kAvx2>
EXACTQ_SCALE_INLINE void ScalePlaneKernel(const PlaneJob<Sample>& job) {
  const Sample* source = job.source;
  Sample* target = job.target;
  Row* ring = job.ring;
  const Row** rows = job.rows;
  const int width = job.h.dst;
  const int taps = job.v.taps;
  for (int s = 0; s < taps; ++s) job.ring_rows[s] = -1;
  for (int y = job.y_begin; y < job.y_end; ++y) {
    for (int k = 0; k < taps; ++k) {
      const int r = job.v.first[y] + k;
      const int slot = r % taps;
      Row* row = ring + static_cast<size_t>(slot) * width;
      if (job.ring_rows[slot] != r) {
        const Sample* in = source + static_cast<size_t>(r) * job.source_width;
        if (job.h.taps == 4) {  // every upscale
#if defined(__x86_64__)
          if (kAvx2 && job.h.shuffled_outputs > 0) {
            HorizontalRow4Avx2(in, job.h, row);
          } else {
            HorizontalRow<4>(in, job.h, row);
          }
#else
          HorizontalRow<4>(in, job.h, row);
#endif
        } else if (job.h.taps == 8) {
          HorizontalRow<8>(in, job.h, row);  // down by up to 2
        } else {
          HorizontalRow<0>(in, job.h, row);
        }
        job.ring_rows[slot] = r;
      }
      rows[k] = row;
    }
    const int32_t* w = job.v.weight + static_cast<size_t>(y) * taps;
    Sample* out = target + static_cast<size_t>(y) * width;
    if (taps == 4) {
      VerticalRow4<Sample>(rows, w, width, job.max_value, out);
    } else {
      VerticalRowAny<Sample>(rows, w, taps, width, job.max_value, job.sums, out);
    }
  }
}

template <class Sample>
void ScalePlaneBaseline(const PlaneJob<Sample>& job) {
  ScalePlaneKernel<Sample, false>(job);
}

#if defined(__x86_64__)
template <class Sample>
__attribute__((target("avx2"))) void ScalePlaneAvx2(const PlaneJob<Sample>& job) {
  ScalePlaneKernel<Sample, true>(job);
}
bool CpuHasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}
#else
template <class Sample>
void ScalePlaneAvx2(const PlaneJob<Sample>& job) {
  ScalePlaneKernel<Sample, false>(job);
}
bool CpuHasAvx2() { return false; }
#endif

absl::Status SameFormat(const FrameGeometry& source, const FrameGeometry& target) {
  if (source.format == target.format) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("scale: the source is ", GeometryDescription(source),
                                                 " but the target is ", GeometryDescription(target),
                                                 ": the pixel format must be the same"));
}

}  // namespace

ScalerIsa BestScalerIsa() { return CpuHasAvx2() ? ScalerIsa::kAvx2 : ScalerIsa::kBaseline; }

const char* ScalerIsaName(ScalerIsa isa) { return isa == ScalerIsa::kAvx2 ? "avx2" : "baseline"; }

double BicubicKernel(double t) {
  t = std::fabs(t);
  if (t < 1.0) return (42.0 * t * t * t - 72.0 * t * t + 30.0) / 30.0;
  if (t < 2.0) return (-18.0 * t * t * t + 90.0 * t * t - 144.0 * t + 72.0) / 30.0;
  return 0.0;
}

AxisTaps BicubicTaps(int src, int dst) {
  AxisTaps axis;
  axis.src = src;
  axis.dst = dst;
  const bool downscale = src > dst;
  // Support radius 2 in source samples, 2 * src / dst when the kernel is stretched.
  const int radius = downscale ? static_cast<int>((2 * static_cast<int64_t>(src) + dst - 1) / dst) : 2;
  axis.taps = 2 * radius;
  axis.first.resize(static_cast<size_t>(dst));
  axis.weight.resize(static_cast<size_t>(dst) * axis.taps);
  const int64_t scale_denominator = 2 * static_cast<int64_t>(std::max(src, dst));
  std::vector<double> k(static_cast<size_t>(axis.taps));
  for (int i = 0; i < dst; ++i) {
    // x = x_num / (2 dst): the source position of output i.
    const int64_t x_num = (2 * static_cast<int64_t>(i) + 1) * src - dst;
    const int64_t floor_x = FloorDiv(x_num, 2 * static_cast<int64_t>(dst));
    const int64_t first = floor_x - radius + 1;
    axis.first[static_cast<size_t>(i)] = static_cast<int32_t>(first);
    double total = 0.0;
    for (int j = 0; j < axis.taps; ++j) {
      const int64_t distance_num = std::llabs(2 * (first + j) * dst - x_num);
      k[static_cast<size_t>(j)] =
          BicubicKernel(static_cast<double>(distance_num) / static_cast<double>(scale_denominator));
      total += k[static_cast<size_t>(j)];
    }
    int32_t* w = &axis.weight[static_cast<size_t>(i) * axis.taps];
    int32_t sum = 0;
    int largest = 0;
    for (int j = 0; j < axis.taps; ++j) {
      w[j] = static_cast<int32_t>(std::lround(k[static_cast<size_t>(j)] / total * (1 << kTapBits)));
      sum += w[j];
      if (k[static_cast<size_t>(j)] > k[static_cast<size_t>(largest)]) largest = j;
    }
    w[largest] += (1 << kTapBits) - sum;
  }
  return axis;
}

// Each output's taps moved onto the samples their clamped indices read: a window of
// min(taps, src) samples inside the plane, the weights of taps that clamp to one sample
// added together (an integer sum: the same result).
BicubicScaler::FoldedAxis BicubicScaler::Fold(const AxisTaps& axis) {
  FoldedAxis out;
  out.src = axis.src;
  out.dst = axis.dst;
  out.taps = std::min(axis.taps, axis.src);
  out.first.resize(static_cast<size_t>(axis.dst));
  out.weight.assign(static_cast<size_t>(axis.dst) * out.taps, 0);
  for (int i = 0; i < axis.dst; ++i) {
    const int first = axis.first[static_cast<size_t>(i)];
    const int folded_first = std::clamp(first, 0, axis.src - out.taps);
    out.first[static_cast<size_t>(i)] = folded_first;
    int32_t* w = &out.weight[static_cast<size_t>(i) * out.taps];
    for (int k = 0; k < axis.taps; ++k) {
      const int index = std::clamp(first + k, 0, axis.src - 1);
      w[index - folded_first] += axis.weight[static_cast<size_t>(i) * axis.taps + k];
    }
    int64_t abs_sum = 0;
    for (int k = 0; k < out.taps; ++k) abs_sum += std::abs(w[k]);
    out.max_abs_weight_sum = std::max(out.max_abs_weight_sum, abs_sum);
  }
  return out;
}

absl::StatusOr<BicubicScaler> BicubicScaler::Create(const FrameGeometry& source, const FrameGeometry& target,
                                                    ScalerIsa isa) {
  if (absl::Status s = ValidateGeometry(source); !s.ok()) return s;
  if (absl::Status s = ValidateGeometry(target); !s.ok()) return s;
  if (absl::Status s = SameFormat(source, target); !s.ok()) return s;
  BicubicScaler scaler;
  scaler.source_ = source;
  scaler.target_ = target;
  scaler.isa_ = isa == ScalerIsa::kAvx2 && CpuHasAvx2() ? ScalerIsa::kAvx2 : ScalerIsa::kBaseline;
  const int64_t max_value = source.max_sample_value();
  for (int p = 0; p < source.plane_count(); ++p) {
    PlaneTaps taps;
    if (p == 2) {
      taps = scaler.planes_[1];  // Cr's geometry is Cb's
    } else {
      taps.h = Fold(BicubicTaps(source.plane_width(p), target.plane_width(p)));
      taps.v = Fold(BicubicTaps(source.plane_height(p), target.plane_height(p)));
      // The horizontal sums' bound (Row, above).
      if (max_value * taps.h.max_abs_weight_sum > std::numeric_limits<Row>::max()) {
        return absl::InternalError(absl::StrCat("scale: ", GeometryDescription(source), " -> ",
                                                GeometryDescription(target), ": taps whose sums could overflow (",
                                                taps.h.max_abs_weight_sum, ")"));
      }
    }
    scaler.planes_.push_back(std::move(taps));
  }
  if (scaler.isa_ == ScalerIsa::kAvx2) {
    for (PlaneTaps& taps : scaler.planes_) Shuffles(source, &taps);
  }
  return scaler;
}

// The AVX2 four-tap kernel's tables for the leading outputs it can take, in groups of
// eight: for each four outputs, where their 16-byte window starts (the first output's
// first sample), the byte shuffle that puts their samples in 16-bit lanes, and their taps
// as 16 bits. Samples must fit 16 bits signed (depth <= 15); the outputs a window cannot
// hold (near the row's end) stay with HorizontalRow.
void BicubicScaler::Shuffles(const FrameGeometry& source, PlaneTaps* taps) {
  const FoldedAxis& h = taps->h;
  const int bytes = source.bytes_per_sample();
  if (h.taps != 4 || source.format.bit_depth > 15) return;
  for (int32_t w : h.weight) {
    if (w < std::numeric_limits<int16_t>::min() || w > std::numeric_limits<int16_t>::max()) return;
  }
  const int window = 16 / bytes;  // samples in one 16-byte load
  auto fits = [&](int x0) {       // outputs x0 .. x0 + 3
    if (x0 + 3 >= h.dst) return false;
    const int base = h.first[static_cast<size_t>(x0)];
    return base + window <= h.src && h.first[static_cast<size_t>(x0) + 3] + 4 - base <= window;
  };
  int outputs = 0;
  while (fits(outputs) && fits(outputs + 4)) outputs += 8;
  taps->shuffled_outputs = outputs;
  taps->shuffle_base.resize(static_cast<size_t>(outputs / 4));
  taps->shuffle_mask.resize(static_cast<size_t>(outputs / 4) * 32);
  taps->shuffle_weight.resize(static_cast<size_t>(outputs / 4) * 16);
  for (int group = 0; group < outputs / 4; ++group) {
    const int base = h.first[static_cast<size_t>(group) * 4];
    taps->shuffle_base[static_cast<size_t>(group)] = base;
    for (int j = 0; j < 4; ++j) {  // output 4 group + j: lane j / 2, bytes 8 (j % 2) ..
      const size_t x = static_cast<size_t>(group) * 4 + j;
      for (int k = 0; k < 4; ++k) {
        const int offset = (h.first[x] - base + k) * bytes;  // the sample's first byte in the window
        int8_t* lane = &taps->shuffle_mask[static_cast<size_t>(group) * 32 + 16 * (j / 2) + 8 * (j % 2) + 2 * k];
        lane[0] = static_cast<int8_t>(offset);
        lane[1] = bytes == 2 ? static_cast<int8_t>(offset + 1) : static_cast<int8_t>(0x80);  // 0x80: a zero byte
        taps->shuffle_weight[static_cast<size_t>(group) * 16 + 4 * j + k] = static_cast<int16_t>(h.weight[x * 4 + k]);
      }
    }
  }
}

template <class Sample>
void BicubicScaler::ScaleBand(const Frame& source, int plane, int y_begin, int y_end, Scratch* scratch,
                              Frame* target) const {
  const PlaneTaps& taps = planes_[static_cast<size_t>(plane)];
  const int width = taps.h.dst;
  scratch->ring.resize(static_cast<size_t>(taps.v.taps) * width);
  scratch->ring_rows.resize(static_cast<size_t>(taps.v.taps));
  scratch->sums.resize(static_cast<size_t>(width));
  scratch->rows.resize(static_cast<size_t>(taps.v.taps));
  PlaneJob<Sample> job;
  job.y_begin = y_begin;
  job.y_end = y_end;
  job.source = reinterpret_cast<const Sample*>(source.plane_bytes(plane));
  job.source_width = taps.h.src;
  job.target = reinterpret_cast<Sample*>(target->mutable_plane_bytes(plane));
  job.h = Axis{taps.h.dst, taps.h.taps, taps.h.first.data(), taps.h.weight.data()};
  job.h.shuffled_outputs = taps.shuffled_outputs;
  job.h.shuffle_base = taps.shuffle_base.data();
  job.h.shuffle_mask = taps.shuffle_mask.data();
  job.h.shuffle_weight = taps.shuffle_weight.data();
  job.v = Axis{taps.v.dst, taps.v.taps, taps.v.first.data(), taps.v.weight.data()};
  job.max_value = source_.max_sample_value();
  job.ring = scratch->ring.data();
  job.ring_rows = scratch->ring_rows.data();
  job.rows = scratch->rows.data();
  job.sums = scratch->sums.data();
  if (isa_ == ScalerIsa::kAvx2) {
    ScalePlaneAvx2<Sample>(job);
  } else {
    ScalePlaneBaseline<Sample>(job);
  }
}

absl::Status BicubicScaler::Scale(const Frame& source, Frame* target, WorkerPool* pool) {
  if (source.geometry() != source_) {
    return absl::InvalidArgumentError(absl::StrCat("scale: the picture is ", GeometryDescription(source.geometry()),
                                                   " but the scaler was made for ", GeometryDescription(source_)));
  }
  // Keeps the buffer when it is large enough (and gives a moved-from frame one).
  if (absl::Status s = target->Reset(target_); !s.ok()) return s;
  // Tasks: (plane, band of output rows); one band per plane without a pool. The list
  // depends only on the geometry and whether a pool splits: made once for each.
  const int workers = pool != nullptr ? pool->num_threads() : 1;
  std::vector<Band>& bands = bands_[workers > 1 ? 1 : 0];
  if (bands.empty()) {
    for (int p = 0; p < source_.plane_count(); ++p) {
      const int rows = planes_[static_cast<size_t>(p)].v.dst;
      const int step = workers > 1 ? kBandRows : rows;
      for (int y = 0; y < rows; y += step) bands.push_back({p, y, std::min(rows, y + step)});
    }
  }
  if (scratch_.size() < static_cast<size_t>(workers)) scratch_.resize(static_cast<size_t>(workers));
  const bool wide_samples = source_.bytes_per_sample() == 2;
  auto run = [&](int task, int worker) {
    const Band& b = bands[static_cast<size_t>(task)];
    Scratch* scratch = &scratch_[static_cast<size_t>(worker)];
    if (wide_samples) {
      ScaleBand<uint16_t>(source, b.plane, b.y_begin, b.y_end, scratch, target);
    } else {
      ScaleBand<uint8_t>(source, b.plane, b.y_begin, b.y_end, scratch, target);
    }
  };
  if (workers > 1) {
    pool->Run(static_cast<int>(bands.size()), run);
  } else {
    for (size_t t = 0; t < bands.size(); ++t) run(static_cast<int>(t), 0);
  }
  return absl::OkStatus();
}

absl::StatusOr<Frame> ScaleBicubic(const Frame& source, const FrameGeometry& target) {
  absl::StatusOr<BicubicScaler> scaler = BicubicScaler::Create(source.geometry(), target);
  if (!scaler.ok()) return scaler.status();
  absl::StatusOr<Frame> scaled = Frame::Create(target);
  if (!scaled.ok()) return scaled.status();
  if (absl::Status s = scaler->Scale(source, &*scaled); !s.ok()) return s;
  return scaled;
}

}  // namespace scale
}  // namespace exactq
