#include "engine/metrics/ssimulacra2/ssimulacra2_threads.h"

#include <cstring>

#include "engine/metrics/ssimulacra2/ssimulacra2_reference.h"

namespace exactq {
namespace ssimulacra2 {
namespace {

// Rows per pyramid task (even, so that each task owns whole downsample pairs).
constexpr int kBandRows = 16;

const internal::KernelTable* PickKernels(Ssimulacra2Isa isa) {
  const bool avx2 = internal::Avx2Supported();
  if (isa == Ssimulacra2Isa::kGeneric || !avx2) return &internal::GenericKernels();
  return &internal::Avx2Kernels();
}

internal::YuvSource SourceOf(const Frame& frame, const int32_t* chroma_x, const YuvToRgbCoefficients& k) {
  const FrameGeometry& g = frame.geometry();
  internal::YuvSource src;
  for (int p = 0; p < 3; ++p) {
    src.planes[p] = frame.plane_bytes(p);
    src.plane_width[p] = g.plane_width(p);
  }
  src.bytes_per_sample = g.bytes_per_sample();
  src.width = g.width;
  src.height = g.height;
  src.chroma_height = g.plane_height(1);
  src.chroma_x = chroma_x;
  src.coefficients = k;
  return src;
}

}  // namespace

void Ssimulacra2Threads::AlignedFloats::Resize(size_t floats) {
  const size_t bytes = (floats * sizeof(float) + 63) / 64 * 64;
  data.reset(static_cast<float*>(std::aligned_alloc(64, bytes == 0 ? 64 : bytes)));
  std::memset(data.get(), 0, bytes == 0 ? 64 : bytes);
  size = floats;
}

Ssimulacra2Threads::Ssimulacra2Threads(int num_threads, Ssimulacra2Isa isa)
    : kernels_(PickKernels(isa)), pool_(num_threads) {}

void Ssimulacra2Threads::Prepare(const FrameGeometry& geometry) {
  if (geometry == geometry_ && num_scales_ > 0) return;
  geometry_ = geometry;
  const int width = geometry.width;
  const int height = geometry.height;
  num_scales_ = ScaleCount(width, height);

  chroma_x_.resize(width);
  for (int x = 0; x < width; ++x) {
    chroma_x_[x] = NearestChromaIndex(x, width, geometry.plane_width(1));
  }
  for (int image = 0; image < 2; ++image) {
    for (int s = 0; s < num_scales_; ++s) {
      const int w = ScaleSide(width, s);
      const int h = ScaleSide(height, s);
      internal::Image3& xyb = xyb_view_[image][s];
      xyb.width = w;
      xyb.height = h;
      xyb.stride = internal::PaddedWidth(w);
      xyb.plane_stride = xyb.stride * internal::PaddedHeight(h);
      xyb_[image][s].Resize(3 * xyb.plane_stride);
      xyb.data = xyb_[image][s].data.get();
      if (s == 0) continue;
      internal::Image3& linear = linear_view_[image][s];
      linear.width = w;
      linear.height = h;
      linear.stride = internal::LinearStride(w);
      linear.plane_stride = linear.stride * h;
      linear_[image][s].Resize(3 * linear.plane_stride);
      linear.data = linear_[image][s].data.get();
    }
  }
  const int padded = internal::PaddedWidth(width);
  linear_scratch_.resize(num_threads());
  channel_scratch_.resize(num_threads());
  for (int worker = 0; worker < num_threads(); ++worker) {
    linear_scratch_[worker].Resize(6 * internal::LinearStride(width));
    channel_scratch_[worker].Resize(internal::ChannelScratch::RingFloats(padded) +
                                    internal::ChannelScratch::ColumnStateFloats(padded) +
                                    internal::ChannelScratch::TransposedFloats(padded));
  }
}

absl::StatusOr<FrameSums> Ssimulacra2Threads::Sums(const Frame& ref, const Frame& dis, YuvMatrix matrix) {
  if (absl::Status s = CheckSsimulacra2Pair(ref, dis); !s.ok()) return s;
  const FrameGeometry& g = ref.geometry();
  Prepare(g);
  const YuvToRgbCoefficients k = MakeYuvToRgbCoefficients(matrix, g.format.bit_depth);
  const internal::YuvSource sources[2] = {SourceOf(ref, chroma_x_.data(), k), SourceOf(dis, chroma_x_.data(), k)};

  // The pyramid, one scale after the other (scale s + 1 reads scale s's linear RGB).
  for (int s = 0; s < num_scales_; ++s) {
    const int height = ScaleSide(g.height, s);
    const int bands = (height + kBandRows - 1) / kBandRows;
    pool_.Run(2 * bands, [&](int task, int worker) {
      const int image = task / bands;
      const int band = task % bands;
      internal::PyramidBand job;
      if (s == 0) {
        job.yuv = &sources[image];
      } else {
        job.linear = &linear_view_[image][s];
      }
      job.xyb = &xyb_view_[image][s];
      job.next_linear = s + 1 < num_scales_ ? &linear_view_[image][s + 1] : nullptr;
      job.row_begin = band * kBandRows;
      job.row_end = job.row_begin + kBandRows < height ? job.row_begin + kBandRows : height;
      job.linear_scratch = linear_scratch_[worker].data.get();
      kernels_->pyramid_band(job);
    });
  }

  // One task per (scale, channel), largest first; each fills its own six sums.
  FrameSums sums;
  sums.width = g.width;
  sums.height = g.height;
  sums.num_scales = num_scales_;
  const int padded = internal::PaddedWidth(g.width);
  pool_.Run(num_scales_ * kChannels, [&](int task, int worker) {
    const int s = task / kChannels;
    const int c = task % kChannels;
    internal::ChannelJob job;
    job.ref = xyb_view_[0][s].data + c * xyb_view_[0][s].plane_stride;
    job.dis = xyb_view_[1][s].data + c * xyb_view_[1][s].plane_stride;
    job.stride = xyb_view_[0][s].stride;
    job.width = xyb_view_[0][s].width;
    job.height = xyb_view_[0][s].height;
    float* base = channel_scratch_[worker].data.get();
    internal::ChannelScratch scratch;
    scratch.padded_width = padded;
    scratch.ring = base;
    scratch.column_state = scratch.ring + internal::ChannelScratch::RingFloats(padded);
    scratch.transposed = scratch.column_state + internal::ChannelScratch::ColumnStateFloats(padded);
    kernels_->channel_sums(job, scratch, sums.sums[s][c]);
  });
  return sums;
}

absl::StatusOr<double> Ssimulacra2Threads::Score(const Frame& ref, const Frame& dis, YuvMatrix matrix) {
  absl::StatusOr<FrameSums> sums = Sums(ref, dis, matrix);
  if (!sums.ok()) return sums.status();
  return ScoreFromSums(*sums);
}

}  // namespace ssimulacra2
}  // namespace exactq
