// The host ordered sums against the loop, bit for bit, on every fixture, length, plan mode
// and thread count; and the fallback counts they report.
#include "engine/exact/ordered_sum.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "engine/exact/testing/ordered_sum_device_model.h"
#include "engine/exact/testing/ordered_sum_fixtures.h"
#include "gtest/gtest.h"

namespace exactq {
namespace exact {
namespace {

const size_t kLengths[] = {0, 1, 7, 1023, 1024, 1025, 5 * 1024 + 333, 300000};
const int kThreadCounts[] = {1, 2, 3, 4, 7, 16};

struct PlanCase {
  const char* name;
  PlanMode mode;
  int fixed_frame;
};
const PlanCase kPlans[] = {
    {"correct", PlanMode::kApproximatePrefix, 0},
    {"one_binade_high", PlanMode::kOneBinadeHigh, 0},
    {"all_zero", PlanMode::kAllZero, 0},
    {"fixed_minus_3", PlanMode::kFixedFrame, -3},
    {"fixed_16", PlanMode::kFixedFrame, 16},
    {"all_term_by_term", PlanMode::kAllTermByTerm, 0},
    {"random", PlanMode::kRandom, 0},
};

std::string Hex(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", x);
  return buf;
}

double SumWith(OrderedSum& sum, const std::vector<double>& terms, OrderedSumStats* stats) {
  absl::StatusOr<double> got = sum.Sum(terms.data(), terms.size(), stats);
  EXPECT_TRUE(got.ok()) << got.status();
  return got.ok() ? *got : 0.0;
}

TEST(OrderedSumReference, IsThePlainLoop) {
  const std::vector<double> t = {1.0, 0x1p-53, 0x1p-53};
  OrderedSumReference ref;
  EXPECT_EQ(BitsOf(*ref.Sum(t.data(), t.size(), nullptr)), BitsOf((0.0 + 1.0 + 0x1p-53) + 0x1p-53));
  // Signed zeros: the loop starts at +0, so even -0 + -0 ... gives +0.
  const std::vector<double> z = {-0.0, -0.0};
  EXPECT_EQ(BitsOf(OrderedSumReference::Loop(z.data(), z.size())), BitsOf(0.0));
  EXPECT_EQ(BitsOf(OrderedSumReference::Loop(nullptr, 0)), BitsOf(0.0));
}

// Every fixture is order-sensitive where it can be: a pairwise tree gives other bits, so a
// test that passes is not passing because any order would do.
TEST(OrderedSumFixtures, AreOrderSensitive) {
  for (FixtureKind kind : AllFixtureKinds()) {
    const std::vector<double> t = MakeFixture(kind, 300000, 1);
    const double loop = OrderedSumReference::Loop(t.data(), t.size());
    const double tree = PairwiseTreeSum(t.data(), t.size());
    if (ExpectOrderSensitive(kind)) {
      EXPECT_FALSE(SameBitsOrBothNaN(loop, tree))
          << FixtureName(kind) << ": loop " << Hex(loop) << " tree " << Hex(tree);
    }
    std::printf("%-24s loop %-26s tree %s\n", FixtureName(kind), Hex(loop).c_str(), Hex(tree).c_str());
  }
}

TEST(OrderedSumFixtures, ReachTheirIntendedRegimes) {
  const size_t n = 300000;
  const auto loop = [](const std::vector<double>& t) { return OrderedSumReference::Loop(t.data(), t.size()); };
  // SSIM-like: climbs, crosses zero once, ends negative.
  const std::vector<double> ssim = MakeFixture(FixtureKind::kSsimLikeCrossingZero, n, 1);
  double s = 0, peak = 0;
  int sign_changes = 0;
  for (double x : ssim) {
    const double next = s + x;
    if ((s > 0 && next < 0) || (s < 0 && next > 0)) ++sign_changes;
    s = next;
    peak = std::max(peak, s);
  }
  EXPECT_LT(s, 0.0);
  EXPECT_GT(peak, 1e9);
  EXPECT_GE(sign_changes, 1);
  // Special values.
  EXPECT_TRUE(std::isinf(loop(MakeFixture(FixtureKind::kPosInf, n, 1))));
  EXPECT_TRUE(std::isnan(loop(MakeFixture(FixtureKind::kPosInfThenNegInf, n, 1))));
  EXPECT_TRUE(std::isnan(loop(MakeFixture(FixtureKind::kNaN, n, 1))));
  EXPECT_EQ(loop(MakeFixture(FixtureKind::kNearMaxOverflow, n, 1)), INFINITY);
  EXPECT_TRUE(std::isfinite(loop(MakeFixture(FixtureKind::kNearMax, n, 1))));
  EXPECT_GT(loop(MakeFixture(FixtureKind::kNearMax, n, 1)), 0x1p1023);
  EXPECT_EQ(BitsOf(loop(MakeFixture(FixtureKind::kZeros, n, 1))), BitsOf(0.0));
  // Tie-heavy: many chunks whose summary depends on the parity of the running sum.
  const std::vector<double> ties = MakeFixture(FixtureKind::kTieHeavy, n, 1);
  int parity_dependent = 0;
  for (size_t c = 0; c * 1024 < n; ++c) {
    const RunSummary r = SummarizeTerms(ties.data() + c * 1024, std::min<size_t>(1024, n - c * 1024), 0);
    parity_dependent += r.d[0] != r.d[1];
  }
  EXPECT_GT(parity_dependent, 100);
}

// The main parity test: every fixture x length x plan, against the loop, with == on bits.
TEST(OrderedSumThreads, EqualsTheLoopForEveryFixtureLengthAndPlan) {
  for (FixtureKind kind : AllFixtureKinds()) {
    for (size_t n : kLengths) {
      const std::vector<double> t = MakeFixture(kind, n, 7);
      const double want = OrderedSumReference::Loop(t.data(), t.size());
      for (const PlanCase& plan : kPlans) {
        OrderedSumOptions options;
        options.plan_mode = plan.mode;
        options.fixed_frame = plan.fixed_frame;
        OrderedSumThreads sum(2, options);
        OrderedSumStats stats;
        const double got = SumWith(sum, t, &stats);
        ASSERT_TRUE(SameBitsOrBothNaN(got, want)) << FixtureName(kind) << " n=" << n << " plan=" << plan.name
                                                  << ": got " << Hex(got) << " loop " << Hex(want);
        EXPECT_EQ(stats.terms, static_cast<int64_t>(n));
        EXPECT_EQ(stats.chunks, static_cast<int64_t>((n + 1023) / 1024));
        EXPECT_LE(stats.terms_one_by_one, static_cast<int64_t>(n));
      }
    }
  }
}

TEST(OrderedSumThreads, SameBitsAndStatsForEveryThreadCount) {
  for (FixtureKind kind : AllFixtureKinds()) {
    for (size_t n : {size_t{5 * 1024 + 333}, size_t{300000}}) {
      const std::vector<double> t = MakeFixture(kind, n, 3);
      const double want = OrderedSumReference::Loop(t.data(), t.size());
      OrderedSumStats first;
      for (int threads : kThreadCounts) {
        OrderedSumThreads sum(threads);
        OrderedSumStats stats;
        const double got = SumWith(sum, t, &stats);
        ASSERT_TRUE(SameBitsOrBothNaN(got, want)) << FixtureName(kind) << " n=" << n << " threads=" << threads;
        if (threads == 1) first = stats;
        EXPECT_EQ(stats.chunks_rejected, first.chunks_rejected) << FixtureName(kind) << " threads=" << threads;
        EXPECT_EQ(stats.terms_one_by_one, first.terms_one_by_one) << FixtureName(kind) << " threads=" << threads;
      }
    }
  }
}

TEST(OrderedSumThreads, TinyChunksAndSubchunks) {
  // Chunk and sub-chunk sizes that put chunk edges everywhere, on short signed fixtures.
  for (FixtureKind kind : AllFixtureKinds()) {
    const std::vector<double> t = MakeFixture(kind, 5 * 1024 + 333, 11);
    const double want = OrderedSumReference::Loop(t.data(), t.size());
    for (int64_t chunk : {1, 2, 3, 7, 64, 1000}) {
      for (int64_t sub : {1, 2, 5, 32}) {
        for (PlanMode mode : {PlanMode::kApproximatePrefix, PlanMode::kRandom}) {
          OrderedSumOptions options;
          options.chunk_terms = chunk;
          options.subchunk_terms = sub;
          options.plan_mode = mode;
          OrderedSumThreads sum(3, options);
          const double got = SumWith(sum, t, nullptr);
          ASSERT_TRUE(SameBitsOrBothNaN(got, want)) << FixtureName(kind) << " chunk=" << chunk << " sub=" << sub;
        }
      }
    }
  }
}

TEST(OrderedSumThreads, WalksThroughThePitfallsInOneChunk) {
  // The signed design's pitfall sequences, reached from +0 by a first chunk of their own
  // (chunk_terms = 2 puts [0, S0] in chunk 0 and the pitfall pair in chunk 1).
  const std::vector<std::vector<double>> cases = {
      {0.0, 1.0, -5 * 0x1p-53, 6 * 0x1p-53},
      {0.0, 1.0, -0x1p-53, 0.0},
      {0.0, 1.0, 1.25 * 0x1p-53, -0x1p-53},
      {0.0, 0x1p-1021, -6 * 0x1p-1074, 0.0},
      {0.0, -0x1p-1074, 0x1p-1074, 0.0},
      {0.0, 0.0, -0x1p-1074, 0x1p-1074},
      {0.0, 0x1.fffffffffffffp+1023, 0x1p970, -3 * 0x1p971},
      {-0.0, -0.0, -0.0, -0.0},
  };
  for (const std::vector<double>& t : cases) {
    const double want = OrderedSumReference::Loop(t.data(), t.size());
    for (int64_t chunk : {1, 2, 4}) {
      for (const PlanCase& plan : kPlans) {
        OrderedSumOptions options;
        options.chunk_terms = chunk;
        options.subchunk_terms = 2;
        options.plan_mode = plan.mode;
        options.fixed_frame = plan.fixed_frame;
        OrderedSumThreads sum(1, options);
        ASSERT_EQ(BitsOf(SumWith(sum, t, nullptr)), BitsOf(want)) << Hex(t[1]) << " plan " << plan.name;
      }
    }
  }
}

TEST(OrderedSumThreads, FallbackStaysRareUnderTheCorrectPlan) {
  // Under a good plan, a monotone sum refuses about one chunk per binade it crosses (plus
  // the first), and only the sub-chunks around each crossing go term by term.
  struct Cap {
    FixtureKind kind;
    int64_t max_chunks_rejected;
    int64_t max_terms_one_by_one;
  };
  const Cap caps[] = {
      {FixtureKind::kUniform, 25, 25 * 32}, {FixtureKind::kFourthPowers, 25, 25 * 32},
      {FixtureKind::kTieHeavy, 2, 64},      {FixtureKind::kSsimLikeCrossingZero, 80, 80 * 32},
      {FixtureKind::kZeros, 0, 0},          {FixtureKind::kSubnormals, 40, 40 * 32},
  };
  for (const Cap& cap : caps) {
    const std::vector<double> t = MakeFixture(cap.kind, 300000, 5);
    OrderedSumThreads sum(4);
    OrderedSumStats stats;
    SumWith(sum, t, &stats);
    std::printf("%-24s chunks %lld rejected %lld sub-chunks %lld one-by-one %lld\n", FixtureName(cap.kind),
                static_cast<long long>(stats.chunks), static_cast<long long>(stats.chunks_rejected),
                static_cast<long long>(stats.subchunks_rejected), static_cast<long long>(stats.terms_one_by_one));
    EXPECT_LE(stats.chunks_rejected, cap.max_chunks_rejected) << FixtureName(cap.kind);
    EXPECT_LE(stats.terms_one_by_one, cap.max_terms_one_by_one) << FixtureName(cap.kind);
  }
}

// The device walk's algorithm (windows of same-plan chunks, longest accepted prefix,
// sub-chunk rounds), run sequentially on the host against the loop.
TEST(OrderedSumDeviceModel, EqualsTheLoopForEveryFixtureLengthAndPlan) {
  for (FixtureKind kind : AllFixtureKinds()) {
    for (size_t n : kLengths) {
      const std::vector<double> t = MakeFixture(kind, n, 7);
      const double want = OrderedSumReference::Loop(t.data(), t.size());
      for (const PlanCase& plan : kPlans) {
        const std::vector<int> frames = HostPrefixPlan(t.data(), n, plan.mode, plan.fixed_frame);
        OrderedSumStats stats;
        const double got = ModelDeviceWalk(t.data(), n, frames, &stats);
        ASSERT_TRUE(SameBitsOrBothNaN(got, want)) << FixtureName(kind) << " n=" << n << " plan=" << plan.name
                                                  << ": got " << Hex(got) << " loop " << Hex(want);
      }
    }
  }
}

TEST(OrderedSumDeviceModel, ComposesWholeRunsOfChunksPerWindow) {
  // Under a good plan the walk needs about one window per binade, not one step per chunk.
  const std::vector<double> t = MakeFixture(FixtureKind::kUniform, 3840 * 2160 / 8, 1);
  OrderedSumStats stats;
  const double got =
      ModelDeviceWalk(t.data(), t.size(), HostPrefixPlan(t.data(), t.size(), PlanMode::kApproximatePrefix, 0), &stats);
  EXPECT_EQ(BitsOf(got), BitsOf(OrderedSumReference::Loop(t.data(), t.size())));
  std::printf("model walk: chunks %lld windows %lld refused %lld one-by-one %lld\n",
              static_cast<long long>(stats.chunks), static_cast<long long>(stats.walk_windows),
              static_cast<long long>(stats.chunks_rejected), static_cast<long long>(stats.terms_one_by_one));
  EXPECT_LT(stats.walk_windows, stats.chunks / 10);
}

// The host kernels (AVX2, generic, scalar) give the same chunk sums and summaries, hence
// the loop's bits and the same stats, on chunk sizes they take (multiples of 4) and one
// they do not, under good and wrong plans, on one thread and several.
TEST(OrderedSumThreads, EveryHostKernelGivesTheSameBitsAndStats) {
  using HostKernels = OrderedSumOptions::HostKernels;
  const PlanCase plans[] = {kPlans[0], kPlans[1], kPlans[5], kPlans[6]};
  for (FixtureKind kind : AllFixtureKinds()) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{1023}, size_t{1024}, size_t{1025}, size_t{4 * 1024 + 3},
                     size_t{5 * 1024 + 333}, size_t{70000}}) {
      const std::vector<double> t = MakeFixture(kind, n, 13);
      const double want = OrderedSumReference::Loop(t.data(), t.size());
      for (int64_t chunk : {4, 12, 1000, 1024}) {
        for (const PlanCase& plan : plans) {
          OrderedSumStats scalar;
          for (HostKernels kernels : {HostKernels::kScalar, HostKernels::kGeneric, HostKernels::kAuto}) {
            for (int threads : {1, 3}) {
              OrderedSumOptions options;
              options.chunk_terms = chunk;
              options.plan_mode = plan.mode;
              options.fixed_frame = plan.fixed_frame;
              options.host_kernels = kernels;
              OrderedSumThreads sum(threads, options);
              OrderedSumStats stats;
              const double got = SumWith(sum, t, &stats);
              const std::string where = std::string(FixtureName(kind)) + " n=" + std::to_string(n) +
                                        " chunk=" + std::to_string(chunk) + " plan=" + plan.name +
                                        " kernels=" + std::to_string(static_cast<int>(kernels)) +
                                        " threads=" + std::to_string(threads);
              ASSERT_TRUE(SameBitsOrBothNaN(got, want)) << where << ": got " << Hex(got) << " loop " << Hex(want);
              if (kernels == HostKernels::kScalar && threads == 1) {
                scalar = stats;
                continue;
              }
              EXPECT_EQ(stats.chunks, scalar.chunks) << where;
              EXPECT_EQ(stats.chunks_rejected, scalar.chunks_rejected) << where;
              EXPECT_EQ(stats.subchunks_rejected, scalar.subchunks_rejected) << where;
              EXPECT_EQ(stats.terms_one_by_one, scalar.terms_one_by_one) << where;
            }
          }
        }
      }
    }
  }
}

// Random signed sequences (drifts, zero crossings, ties, subnormals, huge steps, rare
// specials) of random lengths, with random chunk and sub-chunk sizes, thread counts and
// kernels: the loop's bits every time.
TEST(OrderedSumThreads, RandomTermsEqualTheLoop) {
  using HostKernels = OrderedSumOptions::HostKernels;
  uint64_t state = 99;
  const auto next = [&state] {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  const auto range = [&next](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
  };
  const int64_t chunks[] = {4, 8, 16, 20, 64, 256, 1024, 3};
  for (int iter = 0; iter < 1500; ++iter) {
    const size_t n = static_cast<size_t>(range(0, iter % 50 == 0 ? 200000 : 12000));
    std::vector<double> t(n);
    size_t i = 0;
    while (i < n) {
      const size_t run = std::min(n - i, static_cast<size_t>(range(1, 3000)));
      const int kind = static_cast<int>(range(0, 6));
      const int scale = static_cast<int>(range(-60, 60));
      const double bias = static_cast<double>(range(-3, 3)) / 4.0;  // drift of either sign
      for (size_t j = i; j < i + run; ++j) {
        const double uniform = static_cast<double>(next() >> 11) * 0x1p-53;
        switch (kind) {
          case 0:  // drifting walk
            t[j] = std::ldexp(uniform - 0.5 + bias, scale);
            break;
          case 1:  // ties near 1: multiples of 2^-53
            t[j] = (j == i ? 1.0 : static_cast<double>(range(-9, 9)) * 0x1p-53);
            break;
          case 2:  // magnitudes over many binades, random signs
            t[j] = ((next() & 1) ? -1.0 : 1.0) * std::ldexp(1.0 + uniform, static_cast<int>(range(-80, 80)));
            break;
          case 3:  // subnormals of either sign
            t[j] = ((next() & 3) ? 1.0 : -1.0) * std::ldexp(static_cast<double>(range(0, 1 << 20)), -1074);
            break;
          case 4:  // zeros of either sign, and x, -x pairs
            t[j] = (next() & 1) ? -0.0 : 0.0;
            if (j > i && (next() & 1)) t[j] = -t[j - 1];
            break;
          case 5:  // quarter units of a power of two: exact steps and ties
            t[j] = std::ldexp(static_cast<double>(range(-8, 8)), scale - 2);
            break;
          default:  // uniform, rarely a special value
            t[j] = uniform;
            if (next() % 20000 == 0) {
              const double specials[] = {std::numeric_limits<double>::infinity(),
                                         -std::numeric_limits<double>::infinity(),
                                         std::numeric_limits<double>::quiet_NaN(), 1.7976931348623157e308};
              t[j] = specials[next() % 4];
            }
            break;
        }
      }
      i += run;
    }
    OrderedSumOptions options;
    options.chunk_terms = chunks[next() % 8];
    options.subchunk_terms = (next() & 1) ? 32 : range(1, 40);
    options.host_kernels = static_cast<HostKernels>(range(0, 2));
    OrderedSumThreads sum(static_cast<int>(range(1, 4)), options);
    const double want = OrderedSumReference::Loop(t.data(), t.size());
    const double got = SumWith(sum, t, nullptr);
    ASSERT_TRUE(SameBitsOrBothNaN(got, want)) << "iter " << iter << " n=" << n << " chunk=" << options.chunk_terms
                                              << ": got " << Hex(got) << " loop " << Hex(want);
  }
}

TEST(OrderedSumThreads, RejectsBadOptions) {
  OrderedSumOptions options;
  options.chunk_terms = 0;
  OrderedSumThreads sum(1, options);
  const double x = 1.0;
  EXPECT_FALSE(sum.Sum(&x, 1, nullptr).ok());
}

}  // namespace
}  // namespace exact
}  // namespace exactq
