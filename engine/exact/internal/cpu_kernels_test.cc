// The host kernels of OrderedSumThreads (cpu_kernels.h), both tables, against
// the scalar code they replace: approximate chunk sums bit for bit, and chunk summaries
// value for value with the same hand-over decisions as SummarizeTermsBinary64, on ties,
// near-ties, paths at the 2^53 bound, subnormals, huge terms, zeros, infinities and NaN,
// under every kind of frame (split scales below -970 included).
#include "engine/exact/internal/cpu_kernels.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <vector>

#include "engine/exact/internal/binary64_summaries.h"
#include "engine/exact/ordered_sum.h"
#include "engine/exact/ordered_sum_algebra.h"
#include "engine/exact/testing/ordered_sum_fixtures.h"
#include "engine/exact/testing/ordered_sum_test_rng.h"
#include "gtest/gtest.h"

namespace exactq {
namespace exact {
namespace {

std::vector<const internal::ChunkKernels*> Tables() {
  std::vector<const internal::ChunkKernels*> tables = {&internal::GenericChunkKernels()};
  if (internal::Avx2Supported()) {
    tables.push_back(&internal::Avx2ChunkKernels());
  } else {
    std::printf("no AVX2 on this CPU: only the generic kernels are tested\n");
  }
  return tables;
}

// A term chosen relative to `frame` (u = 2^(frame-52)).
double TermFor(TestRng& rng, int frame, int mode) {
  const int unit_exp = frame - 52;
  const double sign = (rng.Next() & 1) ? -1.0 : 1.0;
  switch (mode) {
    case 0: {  // ordinary: full mantissas, 2^-2..2^30 units below
      const int k = static_cast<int>(rng.Range(-2, 30));
      const double m = static_cast<double>((rng.Next() >> 11) | (uint64_t{1} << 52));
      return sign * std::ldexp(m, unit_exp - 52 - k);
    }
    case 1: {  // near the 2^53 bound: steps of about 2^(48..53) units, mostly positive
      const double m = static_cast<double>((rng.Next() >> 11) | (uint64_t{1} << 52));
      const int e = static_cast<int>(rng.Range(48, 53));
      return (rng.Next() % 5 == 0 ? -1.0 : 1.0) * std::ldexp(m, unit_exp + e - 52 - static_cast<int>(rng.Range(0, 3)));
    }
    default:
      break;
  }
  switch (rng.Range(0, 11)) {
    case 0: {  // (k + 1/2) u: a tie
      const double k = static_cast<double>(rng.Range(0, (int64_t{1} << rng.Range(0, 52)) - 1));
      return sign * std::ldexp(2 * k + 1, unit_exp - 1);
    }
    case 1: {  // near-ties: (k + 1/2) u +- one ulp of the term
      const double t = std::ldexp(2 * static_cast<double>(rng.Range(0, 1 << 20)) + 1, unit_exp - 1);
      return sign * ((rng.Next() & 1) ? std::nextafter(t, 0.0) : std::nextafter(t, 1e308));
    }
    case 2:  // zeros of either sign
      return sign * 0.0;
    case 3:  // subnormal
      return sign * std::ldexp(static_cast<double>(rng.Range(1, (int64_t{1} << 52) - 1)), -1074);
    case 4:
      return sign * std::numeric_limits<double>::infinity();
    case 5:
      return std::numeric_limits<double>::quiet_NaN();
    case 6: {  // near 2^54 u (the unfit limit)
      const double m = std::ldexp(1.0, 54) + static_cast<double>(rng.Range(-8, 8)) * 4.0;
      return sign * std::ldexp(m, unit_exp);
    }
    case 7: {  // any finite double
      uint64_t b;
      do {
        b = rng.Next();
      } while (((b >> 52) & 0x7ff) == 0x7ff);
      return DoubleOf(b);
    }
    case 8:  // the largest finite
      return sign * 1.7976931348623157e308;
    case 9:  // exact quarter units: ties at 1/2
      return sign * std::ldexp(static_cast<double>(rng.Range(0, 4096)), unit_exp - 2);
    default: {  // a full-mantissa term -3..60 binades below the unit
      const double m = static_cast<double>((rng.Next() >> 11) | (uint64_t{1} << 52));
      return sign * std::ldexp(m, unit_exp - 52 - static_cast<int>(rng.Range(-3, 60)));
    }
  }
}

int FrameFor(TestRng& rng) {
  switch (rng.Range(0, 5)) {
    case 0:
      return kTinyFrame;
    case 1:
      return static_cast<int>(rng.Range(-1022, -960));  // split scales below -970
    case 2:
      return static_cast<int>(rng.Range(1000, 1023));
    case 3:
      return static_cast<int>(rng.Range(-60, 60));
    default:
      return static_cast<int>(rng.Range(-1022, 1023));
  }
}

TEST(OrderedSumCpuKernels, SummariesEqualTheScalarFoldLaneByLane) {
  for (const internal::ChunkKernels* k : Tables()) {
    TestRng rng{17};
    int64_t own = 0;
    int64_t handed = 0;
    int64_t parity_free_nonzero = 0;
    for (int iter = 0; iter < 60000; ++iter) {
      const int64_t chunk = 4 * rng.Range(1, iter % 10 == 0 ? 64 : 8);
      int frames[4];
      frames[0] = FrameFor(rng);
      for (int j = 1; j < 4; ++j) frames[j] = rng.Next() % 2 ? frames[0] : FrameFor(rng);
      std::vector<double> x(static_cast<size_t>(4 * chunk));
      for (int j = 0; j < 4; ++j) {
        const int mode = static_cast<int>(rng.Range(0, 3));  // 0 ordinary, 1 bound, 2+ mixed kinds
        for (int64_t i = 0; i < chunk; ++i) {
          double v = TermFor(rng, frames[j], mode);
          // Specials in few chunks only, so that most chunks can be decided by the fold.
          if (!std::isfinite(v) && rng.Next() % 8 != 0) v = 0.5;
          x[static_cast<size_t>(j * chunk + i)] = v;
        }
      }
      RunSummary out[4];
      for (RunSummary& r : out) {
        r = IdentityRun();
        r.flags = 0xdead;  // must stay when a lane is handed over
      }
      // The prefetch hint (any readable span) must change nothing.
      const int mask = k->summarize4(x.data(), chunk, frames, out, iter % 2 ? x.data() : nullptr);
      for (int j = 0; j < 4; ++j) {
        const double* lane = x.data() + j * chunk;
        bool scalar_handed = true;
        const RunSummary scalar = SummarizeTermsBinary64(lane, static_cast<int>(chunk), frames[j], &scalar_handed);
        ASSERT_EQ((mask >> j) & 1, scalar_handed ? 1 : 0)
            << k->isa << " iter " << iter << " lane " << j << " frame " << frames[j] << " chunk " << chunk;
        if (scalar_handed) {
          ASSERT_EQ(out[j].flags, 0xdeadu) << k->isa << " iter " << iter;
          ++handed;
          continue;
        }
        ++own;
        const RunSummary fold = SummarizeTerms(lane, static_cast<size_t>(chunk), frames[j]);
        ASSERT_TRUE(SameRun(out[j], scalar)) << k->isa << " iter " << iter << " lane " << j << " frame " << frames[j];
        ASSERT_TRUE(SameRun(out[j], fold)) << k->isa << " iter " << iter << " lane " << j << " frame " << frames[j];
        parity_free_nonzero += (out[j].flags & kNonZero) != 0;
      }
    }
    std::printf("%s: %lld lanes decided by the kernel (%lld non-zero), %lld handed over\n", k->isa,
                static_cast<long long>(own), static_cast<long long>(parity_free_nonzero),
                static_cast<long long>(handed));
    EXPECT_GT(own, 40000);
    EXPECT_GT(parity_free_nonzero, 30000);
    EXPECT_GT(handed, 40000);
  }
}

// Prefixes that end at 2^53 - 1, 2^53 and 2^53 + 1 units exactly, of both signs: the
// kernel must hand over exactly when the scalar fold does (its bound is strict).
TEST(OrderedSumCpuKernels, HandOverExactlyAtTheBound) {
  for (const internal::ChunkKernels* k : Tables()) {
    int own = 0;
    int handed = 0;
    for (int frame : {-1000, -3, 0, 40, 1023}) {
      const double u = std::ldexp(1.0, frame - 52);
      for (int64_t end : {-1, 0, 1}) {
        for (double sign : {1.0, -1.0}) {
          // 4 terms: 2^52 u, (2^52 - 8) u, 7 u, (1 + end) u: the last prefix is 2^53 + end.
          const double lane[4] = {sign * 0x1p52 * u, sign * (0x1p52 - 8) * u, sign * 7 * u, sign * (1 + end) * u};
          double x[16];
          int frames[4];
          for (int j = 0; j < 4; ++j) {
            for (int i = 0; i < 4; ++i) x[4 * j + i] = lane[i];
            frames[j] = frame;
          }
          RunSummary out[4];
          const int mask = k->summarize4(x, 4, frames, out, nullptr);
          bool scalar_handed = true;
          const RunSummary scalar = SummarizeTermsBinary64(lane, 4, frame, &scalar_handed);
          EXPECT_EQ(mask, scalar_handed ? 0xf : 0) << k->isa << " frame " << frame << " end " << end;
          EXPECT_EQ(scalar_handed, end >= 0) << "frame " << frame << " end " << end;
          if (mask == 0) {
            for (int j = 0; j < 4; ++j) EXPECT_TRUE(SameRun(out[j], scalar));
            ++own;
          } else {
            ++handed;
          }
        }
      }
    }
    EXPECT_GT(own, 0);
    EXPECT_GT(handed, 0);
  }
}

TEST(OrderedSumCpuKernels, ApproximateSumsEqualTheScalarOrder) {
  for (const internal::ChunkKernels* k : Tables()) {
    TestRng rng{5};
    for (int iter = 0; iter < 20000; ++iter) {
      const int64_t chunk = 4 * rng.Range(1, 40);
      const int frame = static_cast<int>(rng.Range(-40, 40));
      const int mode = static_cast<int>(rng.Range(0, 2));
      std::vector<double> x(static_cast<size_t>(4 * chunk));
      for (double& v : x) v = TermFor(rng, frame, mode);
      double sums[4];
      k->approximate_sums4(x.data(), chunk, sums);
      for (int j = 0; j < 4; ++j) {
        const double want = internal::ApproximateChunkSum(x.data() + j * chunk, static_cast<size_t>(chunk));
        ASSERT_TRUE(SameBitsOrBothNaN(sums[j], want)) << k->isa << " iter " << iter << " chunk " << j;
      }
    }
  }
}

// Every fixture, chunk by chunk under the plan OrderedSumThreads would form: the kernel's
// summaries (or the integer fold where it hands over) equal the scalar path's.
TEST(OrderedSumCpuKernels, FixtureChunksUnderTheirPlans) {
  for (const internal::ChunkKernels* k : Tables()) {
    for (FixtureKind kind : AllFixtureKinds()) {
      const std::vector<double> t = MakeFixture(kind, 64 * 1024, 9);
      for (int64_t chunk : {4, 32, 1024}) {
        const int64_t num_chunks = static_cast<int64_t>(t.size()) / chunk;
        double prefix = 0.0;
        std::vector<int> plan(static_cast<size_t>(num_chunks));
        for (int64_t c = 0; c < num_chunks; ++c) {
          plan[c] = FrameOfBits(BitsOf(prefix));
          prefix = prefix + internal::ApproximateChunkSum(t.data() + c * chunk, static_cast<size_t>(chunk));
        }
        for (int64_t c = 0; c + 4 <= num_chunks; c += 4) {
          if (!FastFrame(plan[c]) || !FastFrame(plan[c + 1]) || !FastFrame(plan[c + 2]) || !FastFrame(plan[c + 3]))
            continue;
          RunSummary out[4];
          const int mask = k->summarize4(t.data() + c * chunk, chunk, &plan[c], out, t.data());
          for (int j = 0; j < 4; ++j) {
            const double* lane = t.data() + (c + j) * chunk;
            const RunSummary want = SummarizeTerms(lane, static_cast<size_t>(chunk), plan[c + j]);
            const RunSummary got =
                (mask >> j) & 1 ? SummarizeTermsFast(lane, static_cast<int>(chunk), plan[c + j]) : out[j];
            ASSERT_TRUE(SameRun(got, want)) << k->isa << " " << FixtureName(kind) << " chunk " << c + j;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace exact
}  // namespace exactq
