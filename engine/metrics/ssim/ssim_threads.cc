#include "engine/metrics/ssim/ssim_threads.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/metrics/ssim/ssim_math.h"
#include "engine/metrics/ssim/ssim_reference.h"

namespace exactq {
namespace ssim {
namespace {

// GCC vector types: +, -, *, / act lane by lane with the scalar IEEE roundings.
using V2 = double __attribute__((vector_size(16)));
using V4 = double __attribute__((vector_size(32)));

// The helpers below are forced inline so that they are compiled inside the AVX or SSE2
// entry point that instantiates them (the object has no out-of-line copies; checked with
// nm). Speed depends on it, the bits do not: an out-of-line copy would do the same IEEE
// operations.
#define EXACTQ_SSIM_INLINE inline __attribute__((always_inline))

// Columns are padded to a multiple of 4 so that both widths step evenly.
constexpr int kColumnAlign = 4;
// The five moment planes, in Moments order.
constexpr int kPlanes = 5;

template <class V>
EXACTQ_SSIM_INLINE V Load(const double* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class V>
EXACTQ_SSIM_INLINE void Store(double* p, V v) {
  std::memcpy(p, &v, sizeof v);
}

// One worker's scratch for one frame.
struct BandScratch {
  int width = -1;
  int padded = 0;  // width rounded up to kColumnAlign
  // Zero-padded input lines: s, d, s*s, s*d, d*d at [kRadius, kRadius + width); the
  // borders stay zero, which is what makes out-of-frame taps contribute nothing.
  std::vector<double> line;  // kPlanes x (padded + 2 * kRadius)
  // Horizontal moments of the last kTapCount input rows (row y in slot y % kTapCount),
  // interleaved by groups of kColumnAlign columns: [group][plane][column in group]. The
  // vertical pass then reads nine sequential streams instead of 45 (measured at 3840
  // columns: 115 ms per frame instead of 345 with one plane after another).
  std::vector<double> ring;       // kTapCount x padded x kPlanes
  std::vector<double> lx;         // kept horizontal tap sum per column (256 in the padding)
  std::vector<double> row_terms;  // padded

  void Resize(int w) {
    if (w == width) return;
    width = w;
    padded = (w + kColumnAlign - 1) / kColumnAlign * kColumnAlign;
    line.assign(static_cast<size_t>(kPlanes) * line_stride(), 0.0);
    ring.assign(static_cast<size_t>(kTapCount) * kPlanes * padded, 0.0);
    lx.assign(padded, static_cast<double>(kTapSum));
    for (int x = 0; x < w; ++x) lx[x] = KeptTapSum(x, w);
    row_terms.assign(padded, 0.0);
  }
  size_t line_stride() const { return static_cast<size_t>(padded) + 2 * kRadius; }
  double* line_plane(int p) { return line.data() + p * line_stride(); }
  double* ring_row(int y) { return ring.data() + static_cast<size_t>(y % kTapCount) * kPlanes * padded; }
};

// Where plane p of columns x.. (x a multiple of the lane count) sits in a ring row.
EXACTQ_SSIM_INLINE size_t RingOffset(int x, int p) {
  return static_cast<size_t>(x / kColumnAlign) * (kPlanes * kColumnAlign) + p * kColumnAlign + x % kColumnAlign;
}

template <class Sample>
struct BandJob {
  const Sample* ref;
  const Sample* dis;
  int width;
  int height;
  Stabilisers st;
  int row_begin;  // output rows [row_begin, row_end)
  int row_end;
  BandScratch* scratch;
  double* terms;     // where row_begin's terms go (row stride = width), or null:
  double* term_sum;  // ... then the terms are added here in raster order instead
};

// 68*p[4] + 55*(p[3]+p[5]) + 28*(p[2]+p[6]) + 9*(p[1]+p[7]) + 2*(p[0]+p[8]) over nine
// values. Exact in any grouping: integers below 2^53 throughout.
template <class V>
EXACTQ_SSIM_INLINE V SymmetricTaps(V p0, V p1, V p2, V p3, V p4, V p5, V p6, V p7, V p8) {
  constexpr double t0 = Tap(0), t1 = Tap(1), t2 = Tap(2), t3 = Tap(3), t4 = Tap(4);
  return t4 * p4 + t3 * (p3 + p5) + t2 * (p2 + p6) + t1 * (p1 + p7) + t0 * (p0 + p8);
}

// Horizontal moments of input row y into its ring slot.
template <class V, class Sample>
EXACTQ_SSIM_INLINE void HorizontalRow(const BandJob<Sample>& job, int y) {
  constexpr int kLanes = sizeof(V) / sizeof(double);
  BandScratch& sc = *job.scratch;
  const size_t offset = static_cast<size_t>(y) * job.width;
  const Sample* ref = job.ref + offset;
  const Sample* dis = job.dis + offset;
  double* s = sc.line_plane(0) + kRadius;
  double* d = sc.line_plane(1) + kRadius;
  double* ss = sc.line_plane(2) + kRadius;
  double* sd = sc.line_plane(3) + kRadius;
  double* dd = sc.line_plane(4) + kRadius;
  for (int x = 0; x < job.width; ++x) {
    const double a = ref[x];
    const double b = dis[x];
    s[x] = a;
    d[x] = b;
    ss[x] = a * a;  // exact: below 2^32
    sd[x] = a * b;
    dd[x] = b * b;
  }
  double* out = sc.ring_row(y);
  for (int x = 0; x < sc.padded; x += kLanes) {
    for (int p = 0; p < kPlanes; ++p) {
      const double* q = sc.line_plane(p) + x;  // q[k] is sample x - kRadius + k
      Store(out + RingOffset(x, p),
            SymmetricTaps(Load<V>(q), Load<V>(q + 1), Load<V>(q + 2), Load<V>(q + 3), Load<V>(q + 4), Load<V>(q + 5),
                          Load<V>(q + 6), Load<V>(q + 7), Load<V>(q + 8)));
    }
  }
}

// Output row r: vertical taps over the ring, then the terms into sc.row_terms.
template <class V, class Sample>
EXACTQ_SSIM_INLINE void OutputRow(const BandJob<Sample>& job, int r) {
  constexpr int kLanes = sizeof(V) / sizeof(double);
  BandScratch& sc = *job.scratch;
  const int k_begin = TapBegin(r);
  const int k_end = TapEnd(r, job.height);
  const double ly = KeptTapSum(r, job.height);
  const double* rows[kTapCount] = {};
  for (int k = k_begin; k < k_end; ++k) rows[k] = sc.ring_row(r - kRadius + k);
  const bool full = k_begin == 0 && k_end == kTapCount;
  for (int x = 0; x < sc.padded; x += kLanes) {
    V m[kPlanes];
    for (int p = 0; p < kPlanes; ++p) {
      const size_t o = RingOffset(x, p);
      if (full) {
        m[p] = SymmetricTaps(Load<V>(rows[0] + o), Load<V>(rows[1] + o), Load<V>(rows[2] + o), Load<V>(rows[3] + o),
                             Load<V>(rows[4] + o), Load<V>(rows[5] + o), Load<V>(rows[6] + o), Load<V>(rows[7] + o),
                             Load<V>(rows[8] + o));
      } else {
        V acc = {};
        for (int k = k_begin; k < k_end; ++k) {
          acc += static_cast<double>(Tap(k)) * Load<V>(rows[k] + o);
        }
        m[p] = acc;
      }
    }
    const V w = Load<V>(sc.lx.data() + x) * ly;  // Lx * Ly: exact, <= 2^16
    Store(sc.row_terms.data() + x, SsimTerm<V>(m[0], m[1], m[2], m[3], m[4], w, job.st));
  }
}

template <class V, class Sample>
EXACTQ_SSIM_INLINE void RunBand(const BandJob<Sample>& job) {
  job.scratch->Resize(job.width);
  const int width = job.width;
  int next_input = std::max(0, job.row_begin - kRadius);
  for (int r = job.row_begin; r < job.row_end; ++r) {
    const int last_input = std::min(job.height - 1, r + kRadius);
    for (; next_input <= last_input; ++next_input) HorizontalRow<V>(job, next_input);
    OutputRow<V>(job, r);
    const double* t = job.scratch->row_terms.data();
    if (job.terms != nullptr) {
      std::memcpy(job.terms + static_cast<size_t>(r - job.row_begin) * width, t, sizeof(double) * width);
    } else {
      double s = *job.term_sum;
      for (int x = 0; x < width; ++x) s = s + t[x];  // the reference's raster-order adds
      *job.term_sum = s;
    }
  }
}

template <class Sample>
void RunBandSse2(const BandJob<Sample>& job) {
  RunBand<V2>(job);
}

#if defined(__x86_64__) || defined(__i386__)
template <class Sample>
__attribute__((target("avx"))) void RunBandAvx(const BandJob<Sample>& job) {
  RunBand<V4>(job);
}
bool CpuHasAvx() { return __builtin_cpu_supports("avx"); }
#else
template <class Sample>
void RunBandAvx(const BandJob<Sample>& job) {
  RunBand<V2>(job);
}
bool CpuHasAvx() { return false; }
#endif

template <class Sample>
void RunBandIsa(SsimIsa isa, const BandJob<Sample>& job) {
  if (isa == SsimIsa::kAvx) {
    RunBandAvx(job);
  } else {
    RunBandSse2(job);
  }
}

}  // namespace

const char* SsimIsaName(SsimIsa isa) {
  switch (isa) {
    case SsimIsa::kAvx:
      return "avx";
    case SsimIsa::kSse2:
      return "sse2";
    case SsimIsa::kAuto:
      break;
  }
  return "auto";
}

const char* SsimFrameSumName(SsimFrameSum frame_sum) {
  return frame_sum == SsimFrameSum::kRasterLoop ? "raster_loop" : "ordered_sum";
}

SsimThreads::SsimThreads(int num_threads, SsimFrameSum frame_sum, SsimIsa isa)
    : num_threads_(std::max(1, num_threads)),
      pool_(num_threads_ > 1 ? std::make_unique<WorkerPool>(num_threads_) : nullptr),
      frame_sum_(frame_sum),
      isa_(isa == SsimIsa::kSse2 || !CpuHasAvx() ? SsimIsa::kSse2 : SsimIsa::kAvx) {}

namespace {

struct ThreadedConfig {
  int num_threads;
  SsimFrameSum frame_sum;
  SsimIsa isa;
  WorkerPool* pool;  // num_threads threads, the caller included; null for one thread
};

template <class Sample>
absl::StatusOr<SsimSums> ThreadedSums(const Sample* ref, const Sample* dis, int width, int height, int bit_depth,
                                      const ThreadedConfig& config, std::vector<double>& terms,
                                      exact::OrderedSumStats& stats) {
  // sum(w) = sum over pixels of Lx * Ly = (sum Lx) * (sum Ly): an exact integer, equal
  // to the reference's running double sum of the weights (every add exact below 2^53).
  int64_t lx_total = 0;
  for (int x = 0; x < width; ++x) lx_total += KeptTapSum(x, width);
  int64_t ly_total = 0;
  for (int y = 0; y < height; ++y) ly_total += KeptTapSum(y, height);
  SsimSums sums;
  sums.weight_sum = static_cast<double>(lx_total * ly_total);
  stats = exact::OrderedSumStats{};

  const Stabilisers st = StabilisersFor(bit_depth);
  const int workers = std::min(config.num_threads, height);
  const auto band_begin = [&](int i) { return static_cast<int>(static_cast<int64_t>(height) * i / workers); };
  // Scratch per call and worker: about 50 doubles per column (1.6 MB at 3840), nothing
  // shared between workers.
  std::vector<BandScratch> scratch(workers);
  // With the raster loop, band 0 adds its own terms as it goes (it is the first part of
  // the raster order) and only the later bands' terms are stored.
  const bool loop = config.frame_sum == SsimFrameSum::kRasterLoop || workers == 1;
  const size_t stored_from = loop ? static_cast<size_t>(band_begin(1)) * width : 0;
  terms.resize(static_cast<size_t>(width) * height - stored_from);
  const auto band = [&](int i) {
    const int begin = band_begin(i);
    BandJob<Sample> job{ref, dis, width, height, st, begin, band_begin(i + 1), &scratch[i], nullptr, nullptr};
    if (loop && i == 0) {
      job.term_sum = &sums.term_sum;
    } else {
      job.terms = terms.data() + (static_cast<size_t>(begin) * width - stored_from);
    }
    RunBandIsa(config.isa, job);
  };
  // Who computes a band never changes a bit: each band writes its own terms.
  if (workers == 1 || config.pool == nullptr) {
    for (int i = 0; i < workers; ++i) band(i);
  } else {
    config.pool->Run(workers, [&band](int task, int) { band(task); });
  }
  if (loop) {
    // The reference's loop, continued from band 0's prefix over the later bands.
    double s = sums.term_sum;
    for (const double t : terms) s = s + t;
    sums.term_sum = s;
    return sums;
  }
  exact::OrderedSumThreads sum(config.num_threads, {}, config.pool);
  absl::StatusOr<double> total = sum.Sum(terms.data(), terms.size(), &stats);
  if (!total.ok()) return total.status();
  sums.term_sum = *total;
  return sums;
}

}  // namespace

absl::StatusOr<SsimSums> SsimThreads::Sums(const Frame& ref, const Frame& dis) {
  const FrameGeometry& g = ref.geometry();
  if (absl::Status s = CheckSsimInput(g, dis.geometry()); !s.ok()) return s;
  const ThreadedConfig config{num_threads_, frame_sum_, isa_, pool_.get()};
  if (g.bytes_per_sample() == 1) {
    return ThreadedSums(ref.plane8(0), dis.plane8(0), g.width, g.height, g.format.bit_depth, config, terms_,
                        last_sum_stats_);
  }
  return ThreadedSums(ref.plane16(0), dis.plane16(0), g.width, g.height, g.format.bit_depth, config, terms_,
                      last_sum_stats_);
}

absl::StatusOr<FrameScores> SsimThreads::Score(const Frame& ref, const Frame& dis, const SsimOptions& options) {
  absl::StatusOr<SsimSums> sums = Sums(ref, dis);
  if (!sums.ok()) return sums.status();
  return SsimOutputs(*sums, ref.geometry(), options);
}

}  // namespace ssim
}  // namespace exactq
