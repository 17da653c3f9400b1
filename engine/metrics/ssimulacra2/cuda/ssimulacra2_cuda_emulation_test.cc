// Host-only: the kernel bodies of the CUDA twin (ssimulacra2_cuda_kernels.h), run in
// plain loops in the pipeline's launch order (ssimulacra2_cuda_pipeline.cu), with each
// sum's terms (TermFromBase of the stored base planes) added by the plain loop, give
// ReferenceSums' bits. This checks
// the device walk over the images (chroma indexing, the pyramid's ping-pong and the
// scale parities, blur lines, plane strides, the terms, sum order) on machines without a
// GPU; the device itself adds the launch geometry and the exact ordered sum
// (ssimulacra2_cuda_test).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "engine/format/frame.h"
#include "engine/format/frame_geometry.h"
#include "engine/metrics/ssimulacra2/cuda/ssimulacra2_cuda_kernels.h"
#include "engine/metrics/ssimulacra2/srgb_eotf_table.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_reference.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_score.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_test_frames.h"
#include "gtest/gtest.h"

namespace exactq {
namespace ssimulacra2 {
namespace gpu {
namespace {

using testing_frames::MakeTestFrame;
using testing_frames::Noise;

// BlurRowsTiledKernel on the host: per block (32 rows of one line), the warp's phases in
// order, each phase for every lane. The tiles start as NaN, so a read of a slot the
// kernel never wrote shows in the sums.
void EmulateTiledRows(const ScalePlanes& p, int w, int h) {
  auto tiles = std::make_unique<BlurRowTiles>();
  for (int line = 0; line < kBlurLines; ++line) {
    for (int row0 = 0; row0 < h; row0 += kBlurTile) {
      float* raw = &tiles->in[0][0][0];
      std::fill(raw, raw + sizeof(BlurRowTiles) / sizeof(float), std::numeric_limits<float>::quiet_NaN());
      BlurState<float> states[kBlurTile];
      for (BlurState<float>& state : states) state = ZeroBlurState(0.0f);
      const int groups = BlurRowGroups(w);
      BlurTileRegs next[kBlurTile];  // each lane's registers
      for (int lane = 0; lane < kBlurTile; ++lane) BlurTileFetch(p, w, h, line, row0, 0, lane, next[lane]);
      for (int b = 0; b < groups; ++b) {
        for (int lane = 0; lane < kBlurTile; ++lane) BlurTilePut(p, line, b, lane, next[lane], *tiles);
        if (b + 1 < groups) {
          for (int lane = 0; lane < kBlurTile; ++lane) BlurTileFetch(p, w, h, line, row0, b + 1, lane, next[lane]);
        }
        for (int lane = 0; lane < kBlurTile; ++lane) BlurTileWalk(w, h, row0, b, lane, *tiles, states[lane]);
        if (b > 0) {
          for (int lane = 0; lane < kBlurTile; ++lane) BlurTileStore(p, w, h, line, row0, b - 1, lane, *tiles);
        }
      }
      for (int lane = 0; lane < kBlurTile; ++lane) BlurTileStore(p, w, h, line, row0, groups - 1, lane, *tiles);
    }
  }
}

// The pipeline on the host: every "thread" of every launch, launches in stream order.
FrameSums Emulate(const Frame& ref, const Frame& dis, YuvMatrix matrix) {
  const FrameGeometry& g = ref.geometry();
  std::vector<uint64_t> scratch((CarvePlanes(nullptr, g.width, g.height).bytes + 7) / 8);
  const Planes p = CarvePlanes(scratch.data(), g.width, g.height);
  DeviceFrame f;
  f.ref = ref.bytes();
  f.dis = dis.bytes();
  f.width = g.width;
  f.height = g.height;
  f.bit_depth = g.format.bit_depth;
  f.chroma_width = g.plane_width(1);
  f.chroma_height = g.plane_height(1);
  for (int i = 0; i < 3; ++i) f.plane_offset[i] = g.plane_offset(i);
  f.coefficients = MakeYuvToRgbCoefficients(matrix, g.format.bit_depth);
  f.cube_root_of_bias = CubeRootOfOpsinBias();
  f.eotf_table = kSrgbEotfTable;

  FrameSums sums;
  sums.width = g.width;
  sums.height = g.height;
  sums.num_scales = ScaleCountOf(g.width, g.height);
  for (int image = 0; image < 2; ++image) {
    for (int y = 0; y < g.height; ++y) {
      for (int x = 0; x < g.width; ++x) {
        if (f.bit_depth > 8) {
          YuvToLinearAt<uint16_t>(f, p, x, y, image);
        } else {
          YuvToLinearAt<uint8_t>(f, p, x, y, image);
        }
      }
    }
  }
  // Scale s's terms (TermsChunkSumsKernel's body for the segment pipeline with binary32
  // advice, the default, writing the base planes) then its sums, each term TermFromBase
  // of its base plane (what the segment pipeline reads), added by the plain loop.
  const auto sum_scale = [&](int s, const ScalePlanes& view, size_t n) {
    for (int c = 0; c < kImageChannels; ++c) {
      for (size_t i = 0; i < n; ++i) {
        float advice[kSumsPerChannel];
        BasesAndAdviceAt(view, c, i, advice);
      }
      for (int k = 0; k < kSumsPerChannel; ++k) {
        const double* base = TermBasePlane(view, c, k);
        double sum = 0.0;
        for (size_t i = 0; i < n; ++i) sum += TermFromBase(k, base[i]);
        sums.sums[s][c][k] = sum;
      }
    }
  };
  // Launch order: scale s + 1's image work (the other parity's planes) comes before
  // scale s's sums have run, as on the device, where they overlap.
  int w = g.width;
  int h = g.height;
  size_t previous_n = 0;
  for (int s = 0; s < sums.num_scales; ++s) {
    const int cur = s % 2;
    if (s > 0) {
      for (int image = 0; image < 2; ++image) {
        for (int oy = 0; oy < HalfSide(h) + 3; ++oy) {  // + 3: out-of-range threads
          for (int ox = 0; ox < HalfSide(w) + 5; ++ox) DownsampleAt(p, cur, w, h, ox, oy, image, f.cube_root_of_bias);
        }
      }
      w = HalfSide(w);
      h = HalfSide(h);
    }
    const ScalePlanes view = ScaleView(p, s);
    EmulateTiledRows(view, w, h);  // what the device runs (BlurRowsTiledKernel)
    for (int64_t t = 0; t < int64_t{w} * kBlurLines + 7; ++t) BlurColumnAt(view, w, h, t);
    if (s > 0) sum_scale(s - 1, ScaleView(p, s - 1), previous_n);
    previous_n = static_cast<size_t>(w) * h;
  }
  if (sums.num_scales > 0) sum_scale(sums.num_scales - 1, ScaleView(p, sums.num_scales - 1), previous_n);
  return sums;
}

void ExpectSameBits(const Frame& ref, const Frame& dis, YuvMatrix matrix, const std::string& what) {
  absl::StatusOr<FrameSums> cpu = ReferenceSums(ref, dis, matrix);
  ASSERT_TRUE(cpu.ok()) << what << ": " << cpu.status();
  const FrameSums emulated = Emulate(ref, dis, matrix);
  EXPECT_EQ(emulated.num_scales, cpu->num_scales) << what;
  int differ = 0;
  for (int s = 0; s < kMaxScales; ++s) {
    for (int c = 0; c < kImageChannels; ++c) {
      for (int k = 0; k < kSumsPerChannel; ++k) {
        uint64_t a, b;
        std::memcpy(&a, &emulated.sums[s][c][k], 8);
        std::memcpy(&b, &cpu->sums[s][c][k], 8);
        if (a != b && ++differ <= 3) {
          ADD_FAILURE() << what << ": [" << s << "][" << c << "][" << k << "] emulated "
                        << absl::StrFormat("%a", emulated.sums[s][c][k]) << " cpu "
                        << absl::StrFormat("%a", cpu->sums[s][c][k]);
        }
      }
    }
  }
  EXPECT_EQ(differ, 0) << what;
}

TEST(Ssimulacra2CudaEmulationTest, KernelBodiesGiveTheReferenceBits) {
  const int sizes[][2] = {{8, 8}, {9, 17}, {33, 31}, {131, 67}, {577, 323}};
  const ChromaLayout layouts[] = {ChromaLayout::k420, ChromaLayout::k422, ChromaLayout::k444};
  const int depths[] = {8, 10, 12, 16};
  uint32_t seed = 1;
  for (const auto& size : sizes) {
    for (ChromaLayout layout : layouts) {
      for (int depth : depths) {
        const FrameGeometry g{size[0], size[1], {layout, depth}};
        const YuvMatrix matrix = static_cast<YuvMatrix>(seed % 4);
        const std::string what = absl::StrFormat("%dx%d layout %d depth %d matrix %d", size[0], size[1],
                                                 static_cast<int>(layout), depth, static_cast<int>(matrix));
        ExpectSameBits(MakeTestFrame(g, seed), MakeTestFrame(g, seed, Noise{12, 0}), matrix, what);
        if (size[0] * size[1] < 100000 || depth == 10) {
          ExpectSameBits(MakeTestFrame(g, seed), MakeTestFrame(g, seed, Noise{12, 2 * size[1] / 3}), matrix,
                         what + " lower third");
        }
        ++seed;
      }
    }
  }
}

// The tiled horizontal pass writes exactly what the plain one (one thread per row) does,
// bit for bit, on every row of every line; widths around the tile size and the lead.
TEST(Ssimulacra2CudaEmulationTest, TiledRowBlurEqualsThePlainRowBlur) {
  const int widths[] = {1, 5, 6, 10, 27, 28, 29, 31, 32, 33, 36, 60, 63, 64, 65, 100, 577};
  const int heights[] = {1, 8, 31, 32, 33, 70};
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> any(-0.2f, 1.3f);
  for (int w : widths) {
    for (int h : heights) {
      std::vector<uint64_t> scratch((CarvePlanes(nullptr, w, h).bytes + 7) / 8);
      const Planes p = CarvePlanes(scratch.data(), w, h);
      for (int image = 0; image < 2; ++image) {
        for (size_t i = 0; i < kImageChannels * p.plane; ++i) p.xyb[0][image][i] = any(rng);
      }
      const ScalePlanes view = ScaleView(p, 0);
      for (int64_t t = 0; t < int64_t{h} * kBlurLines; ++t) BlurRowAt(view, w, h, t);
      const std::vector<float> plain(p.rows, p.rows + kBlurLines * p.plane);
      std::fill(p.rows, p.rows + kBlurLines * p.plane, -1.0f);
      EmulateTiledRows(view, w, h);
      int differ = 0;
      for (size_t i = 0; i < plain.size(); ++i) {
        uint32_t a, b;
        std::memcpy(&a, &plain[i], 4);
        std::memcpy(&b, &p.rows[i], 4);
        if (a != b && ++differ <= 3) {
          ADD_FAILURE() << w << "x" << h << ": line " << i / p.plane << " row " << (i % p.plane) / w << " column "
                        << (i % p.plane) % w << ": plain " << plain[i] << ", tiled " << p.rows[i];
        }
      }
      EXPECT_EQ(differ, 0) << w << "x" << h;
    }
  }
}

// B.8's terms, kind by kind, from the shared math (SplitEdgeDifference, Quartic), as the
// reference's ChannelSums forms them.
double SpecB8Term(int k, double base) {
  if (k == kSumSsim) return base;
  if (k == kSumSsim4) return Quartic(base);
  double artifact, detail;
  SplitEdgeDifference<ScalarLanes>(base, artifact, detail);
  switch (k) {
    case kSumArtifact:
      return artifact;
    case kSumArtifact4:
      return Quartic(artifact);
    case kSumDetail:
      return detail;
    default:
      return Quartic(detail);
  }
}

// TermFromBase (branch-free, what the device runs per term) equals B.8 on every kind of
// double: both zeros, subnormals, the binade edges, huge values, infinities, NaNs with
// payloads, and random bit patterns across every exponent.
TEST(Ssimulacra2CudaEmulationTest, TermFromBaseIsTheSpecB8Term) {
  std::vector<double> values = {0.0,
                                -0.0,
                                std::numeric_limits<double>::denorm_min(),
                                -std::numeric_limits<double>::denorm_min(),
                                std::numeric_limits<double>::min(),
                                -std::numeric_limits<double>::min(),
                                1e-300,
                                -1e-300,
                                0.5,
                                -0.5,
                                1.0,
                                -1.0,
                                3.7,
                                -3.7,
                                1e300,
                                -1e300,
                                std::numeric_limits<double>::max(),
                                -std::numeric_limits<double>::max(),
                                std::numeric_limits<double>::infinity(),
                                -std::numeric_limits<double>::infinity(),
                                std::numeric_limits<double>::quiet_NaN(),
                                -std::numeric_limits<double>::quiet_NaN()};
  uint64_t payload_nan_bits = 0x7ff8000000012345ull;
  double payload_nan;
  std::memcpy(&payload_nan, &payload_nan_bits, sizeof payload_nan);
  values.push_back(payload_nan);
  std::mt19937_64 rng(20261201);
  for (int i = 0; i < 200000; ++i) {
    const uint64_t bits = rng();
    double x;
    std::memcpy(&x, &bits, sizeof x);
    values.push_back(x);
  }
  const auto bits_of = [](double x) {
    uint64_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
  };
  int nans = 0;
  for (int k = 0; k < kSumsPerChannel; ++k) {
    const TermOfBase map{k};
    for (double x : values) {
      const double want = SpecB8Term(k, x);
      if (want != want) ++nans;
      ASSERT_EQ(bits_of(TermFromBase(k, x)), bits_of(want)) << "k=" << k << " base bits " << std::hex << bits_of(x);
      ASSERT_EQ(bits_of(map(x)), bits_of(want)) << "k=" << k << " base bits " << std::hex << bits_of(x);
      // TermOfKind's promise to the strided form (kNonNegativeTerms): finite terms >= 0.
      if (k != kSumSsim && std::isfinite(want)) {
        ASSERT_GE(want, 0.0) << "k=" << k << " base bits " << std::hex << bits_of(x);
      }
    }
  }
  static_assert(!TermOfKind<kSumSsim>::kNonNegativeTerms && TermOfKind<kSumSsim4>::kNonNegativeTerms &&
                    TermOfKind<kSumArtifact>::kNonNegativeTerms && TermOfKind<kSumArtifact4>::kNonNegativeTerms &&
                    TermOfKind<kSumDetail>::kNonNegativeTerms && TermOfKind<kSumDetail4>::kNonNegativeTerms,
                "the kinds checked above are the ones that promise");
  EXPECT_GT(nans, 0) << "the values include NaNs";
}

// The segment pipeline's advice terms (AdviceTermFromBase) against the exact terms: equal
// where the term is 0, and otherwise within 7 roundings to float (the base's, and up to
// three per product: (1 + 2^-24)^7 - 1 relative) for bases whose fourth powers stay in
// float's normal range. The advice only places checks (PredictCrossing's margin is 2^-20
// relative), so this bound is what keeps it useful; its bits never reach a sum.
TEST(Ssimulacra2CudaEmulationTest, AdviceTermIsWithinSevenFloatRoundingsOfTheTerm) {
  std::mt19937_64 rng(20261202);
  std::uniform_real_distribution<double> exponent(-28.0, 28.0);
  const long double bound = std::pow(1.0L + 0x1p-24L, 7) - 1.0L;
  long double worst = 0.0L;
  int zeros = 0;
  for (int i = 0; i < 200000; ++i) {
    const double base = (i % 2 ? -1.0 : 1.0) * std::exp2(exponent(rng));
    for (int k = 0; k < kSumsPerChannel; ++k) {
      const double exact = TermFromBase(k, base);
      const float advice = AdviceTermFromBase(k, static_cast<float>(base));
      if (exact == 0.0) {
        ++zeros;
        ASSERT_EQ(advice, 0.0f) << "k=" << k << " base " << base;
        continue;
      }
      const long double relative =
          std::fabs((static_cast<long double>(advice) - exact) / static_cast<long double>(exact));
      worst = std::max(worst, relative);
      ASSERT_LE(relative, bound) << "k=" << k << " base " << base;
    }
  }
  EXPECT_GT(zeros, 0) << "the edge parts of bases of the other sign are 0";
  std::printf("advice terms: worst relative distance %.3Lg (bound %.3Lg)\n", worst, bound);
}

}  // namespace
}  // namespace gpu
}  // namespace ssimulacra2
}  // namespace exactq
