// Parity of OrderedSumCuda with the loop, bit for bit, on the host tests' fixtures, at the
// host tests' lengths, at 4K- and 8K-frame sizes, past the segment pipeline's 2^30 terms
// and through overflow, under good and wrong plans. Skips (with the reason) where no CUDA device can be used.
#include "engine/exact/ordered_sum_cuda.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "engine/exact/internal/binary64_summaries.h"
#include "engine/exact/ordered_sum.h"
#include "engine/exact/testing/ordered_sum_cuda_testing.h"
#include "engine/exact/testing/ordered_sum_device_model.h"
#include "engine/exact/testing/ordered_sum_fixtures.h"
#include "engine/exact/testing/ordered_sum_test_rng.h"
#include "gtest/gtest.h"

namespace exactq {
namespace exact {
namespace {

constexpr size_t k4kTerms = 3840 * 2160;

std::string Hex(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", x);
  return buf;
}

// Terms copied to device memory once; freed at scope exit.
class DeviceTerms {
 public:
  explicit DeviceTerms(const std::vector<double>& terms) : n_(terms.size()) {
    if (n_ == 0) return;
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&data_), n_ * sizeof(double)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(data_, terms.data(), n_ * sizeof(double), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceTerms() {
    if (data_ != nullptr) cudaFree(data_);
  }
  DeviceTerms(const DeviceTerms&) = delete;
  DeviceTerms& operator=(const DeviceTerms&) = delete;
  const double* data() const { return data_; }

 private:
  size_t n_;
  double* data_ = nullptr;
};

// Two runs that must have walked the same steps: the same acceptance, steps, crossing
// lanes, tile chunks and fallback counts.
void ExpectSameWalk(const OrderedSumStats& a, const OrderedSumStats& b, const std::string& what) {
  EXPECT_EQ(a.segment_accepted, b.segment_accepted) << what;
  EXPECT_EQ(a.segment_steps, b.segment_steps) << what;
  EXPECT_EQ(a.segment_crossing_lanes, b.segment_crossing_lanes) << what;
  EXPECT_EQ(a.segment_tile_chunks, b.segment_tile_chunks) << what;
  EXPECT_EQ(a.chunks_rejected, b.chunks_rejected) << what;
  EXPECT_EQ(a.terms_one_by_one, b.terms_one_by_one) << what;
}

class OrderedSumCudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string reason;
    if (!CudaDeviceAvailable(&reason)) GTEST_SKIP() << "no GPU, skipping the CUDA parity test: " << reason;
  }
};

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
    {"all_term_by_term", PlanMode::kAllTermByTerm, 0},
    {"random", PlanMode::kRandom, 0},
};

using Pipeline = OrderedSumOptions::DevicePipeline;

// Sums on the device and compares with the loop; returns the stats. Under kSegmentsOnly a
// refusal (FAILED_PRECONDITION) is allowed unless `must_accept`; wrong bits never are.
OrderedSumStats ExpectParity(const std::vector<double>& terms, const PlanCase& plan, const std::string& what,
                             Pipeline pipeline = Pipeline::kSegmentsThenEventWalk, bool must_accept = false,
                             bool strided_chunks = true) {
  OrderedSumOptions options;
  options.plan_mode = plan.mode;
  options.fixed_frame = plan.fixed_frame;
  options.device_pipeline = pipeline;
  options.strided_chunks = strided_chunks;
  OrderedSumCuda sum(nullptr, options);
  DeviceTerms device(terms);
  OrderedSumStats stats;
  absl::StatusOr<double> got = sum.Sum(device.data(), terms.size(), &stats);
  const double want = OrderedSumReference::Loop(terms.data(), terms.size());
  const bool refusal_allowed = pipeline == Pipeline::kSegmentsOnly && !must_accept;
  if (!got.ok() && refusal_allowed) {
    EXPECT_EQ(got.status().code(), absl::StatusCode::kFailedPrecondition) << what << ": " << got.status();
    EXPECT_EQ(stats.segment_accepted, 0) << what;
  } else {
    EXPECT_TRUE(got.ok()) << what << " plan=" << plan.name << ": " << got.status();
  }
  if (got.ok()) {
    EXPECT_TRUE(SameBitsOrBothNaN(*got, want))
        << what << " plan=" << plan.name << ": cuda " << Hex(*got) << " loop " << Hex(want);
  }
  EXPECT_EQ(stats.terms, static_cast<int64_t>(terms.size()));
  EXPECT_LE(stats.terms_one_by_one, static_cast<int64_t>(terms.size()));
  EXPECT_LE(stats.segment_crossing_lanes * 32, static_cast<int64_t>(terms.size()) + 31);
  if (stats.segment_accepted == 1) {
    EXPECT_LE(stats.segment_tile_chunks, stats.chunks) << what;
    if (!strided_chunks) {
      EXPECT_EQ(stats.segment_tile_chunks, stats.chunks) << what;
    }
  }
  return stats;
}

TEST_F(OrderedSumCudaTest, EqualsTheLoopForEveryFixtureLengthAndPlan) {
  const size_t lengths[] = {0, 1, 7, 1023, 1024, 1025, 5 * 1024 + 333, 300000};
  for (FixtureKind kind : AllFixtureKinds()) {
    for (size_t n : lengths) {
      const std::vector<double> terms = MakeFixture(kind, n, 7);
      const std::string what = std::string(FixtureName(kind)) + " n=" + std::to_string(n);
      for (const PlanCase& plan : kPlans) {
        ExpectParity(terms, plan, what);
        ExpectParity(terms, plan, what + " segments only", Pipeline::kSegmentsOnly);
        ExpectParity(terms, plan, what + " event walk only", Pipeline::kEventWalkOnly);
        if (HasFailure()) return;  // one failure says enough; the rest would repeat it
      }
    }
  }
}

TEST_F(OrderedSumCudaTest, EqualsTheLoopOn4kFrames) {
  for (FixtureKind kind : AllFixtureKinds()) {
    const std::vector<double> terms = MakeFixture(kind, k4kTerms, 2);
    const OrderedSumStats stats = ExpectParity(terms, kPlans[0], std::string(FixtureName(kind)) + " 4K");
    const OrderedSumStats walk =
        ExpectParity(terms, kPlans[0], std::string(FixtureName(kind)) + " 4K event walk", Pipeline::kEventWalkOnly);
    std::printf(
        "%-24s 4K: segments %s steps %lld crossing lanes %lld | event walk: refused %lld sub-chunks %lld "
        "one-by-one %lld windows %lld\n",
        FixtureName(kind), stats.segment_accepted ? "accepted" : "refused", static_cast<long long>(stats.segment_steps),
        static_cast<long long>(stats.segment_crossing_lanes), static_cast<long long>(walk.chunks_rejected),
        static_cast<long long>(walk.subchunks_rejected), static_cast<long long>(walk.terms_one_by_one),
        static_cast<long long>(walk.walk_windows));
  }
}

TEST_F(OrderedSumCudaTest, WrongPlansOn4kFramesOnlyCostTime) {
  for (FixtureKind kind : {FixtureKind::kSsimLikeCrossingZero, FixtureKind::kTieHeavy, FixtureKind::kUniform}) {
    const std::vector<double> terms = MakeFixture(kind, k4kTerms, 3);
    for (const PlanCase& plan : kPlans) ExpectParity(terms, plan, std::string(FixtureName(kind)) + " 4K");
  }
}

TEST_F(OrderedSumCudaTest, FallbackStaysRareOnA4kSsimLikeFrame) {
  const std::vector<double> terms = MakeFixture(FixtureKind::kSsimLikeCrossingZero, k4kTerms, 4);
  const OrderedSumStats stats = ExpectParity(terms, kPlans[0], "ssim-like 4K", Pipeline::kEventWalkOnly);
  // About one refused chunk per binade crossed (up to ~2^40 and back through zero).
  EXPECT_LE(stats.chunks_rejected, 200);
  EXPECT_LE(stats.terms_one_by_one, 200 * 32);
}

// The fast path must be the path on frames like real ones, or its speed is not ours: the
// segment pipeline alone gives the loop's bits, in about one crossing lane per binade the
// sum crosses (tens, out of 259,200 lanes).
TEST_F(OrderedSumCudaTest, SegmentPipelineAloneSumsRealisticFrames) {
  for (FixtureKind kind :
       {FixtureKind::kUniform, FixtureKind::kTieHeavy, FixtureKind::kFourthPowers, FixtureKind::kSsimLikeCrossingZero,
        FixtureKind::kZeroCrossings, FixtureKind::kZeros, FixtureKind::kSubnormals}) {
    for (uint64_t seed : {11u, 12u}) {
      const std::vector<double> terms = MakeFixture(kind, k4kTerms, seed);
      const OrderedSumStats stats = ExpectParity(terms, kPlans[0], std::string(FixtureName(kind)) + " 4K segments",
                                                 Pipeline::kSegmentsOnly, /*must_accept=*/true);
      EXPECT_EQ(stats.segment_accepted, 1) << FixtureName(kind);
      EXPECT_LE(stats.segment_crossing_lanes, 400) << FixtureName(kind);
    }
  }
}

// The chunk stage's strided form (one run per chunk from coalesced reads) must be the
// path on real-like frames, and give the tile path's bits: with it and without it, the
// segment pipeline alone gives the loop's bits, and with it only the chunks near a binade
// edge (about one per binade crossed, like the crossing lanes), or with ties, go through
// the tile. The tie-heavy frame is all ties: every chunk takes the tile there.
TEST_F(OrderedSumCudaTest, StridedChunksAreThePathAndGiveTheTilesBits) {
  for (FixtureKind kind : {FixtureKind::kUniform, FixtureKind::kFourthPowers, FixtureKind::kSsimLikeCrossingZero,
                           FixtureKind::kZeroCrossings, FixtureKind::kTieHeavy}) {
    const std::vector<double> terms = MakeFixture(kind, k4kTerms, 31);
    const std::string what = std::string(FixtureName(kind)) + " 4K";
    const OrderedSumStats strided =
        ExpectParity(terms, kPlans[0], what + " strided", Pipeline::kSegmentsOnly, /*must_accept=*/true);
    const OrderedSumStats tile = ExpectParity(terms, kPlans[0], what + " tile", Pipeline::kSegmentsOnly,
                                              /*must_accept=*/true, /*strided_chunks=*/false);
    std::printf(
        "%-26s chunks %lld: through the tile %lld with strided chunks, %lld without; crossing lanes %lld / %lld\n",
        FixtureName(kind), static_cast<long long>(strided.chunks), static_cast<long long>(strided.segment_tile_chunks),
        static_cast<long long>(tile.segment_tile_chunks), static_cast<long long>(strided.segment_crossing_lanes),
        static_cast<long long>(tile.segment_crossing_lanes));
    if (kind != FixtureKind::kTieHeavy) {
      EXPECT_LE(strided.segment_tile_chunks, 400) << what;
    }
  }
}

// The chunk stage takes the runs near a crossing first (crossings_first, the default) or
// in index order: the same records in another order, so the same bits, steps, crossing
// lanes and tile chunks, on fixtures with few and with many crossings and a short last run.
TEST_F(OrderedSumCudaTest, CrossingsFirstChangesOnlyTheOrder) {
  for (FixtureKind kind : {FixtureKind::kSsimLikeCrossingZero, FixtureKind::kZeroCrossings, FixtureKind::kMixedWalk,
                           FixtureKind::kSignedSubnormals, FixtureKind::kNaN}) {
    for (size_t n : {size_t{5 * 1024 + 333}, size_t{300000}, k4kTerms}) {
      const std::vector<double> terms = MakeFixture(kind, n, 47);
      const std::string what = std::string(FixtureName(kind)) + " n=" + std::to_string(n);
      DeviceTerms device(terms);
      OrderedSumOptions index_order;
      index_order.crossings_first = false;
      OrderedSumCuda first_sum;
      OrderedSumCuda index_sum(nullptr, index_order);
      OrderedSumStats first, index;
      absl::StatusOr<double> a = first_sum.Sum(device.data(), n, &first);
      absl::StatusOr<double> b = index_sum.Sum(device.data(), n, &index);
      ASSERT_TRUE(a.ok() && b.ok()) << what;
      EXPECT_TRUE(SameBitsOrBothNaN(*a, OrderedSumReference::Loop(terms.data(), n))) << what << ": " << Hex(*a);
      EXPECT_TRUE(SameBitsOrBothNaN(*a, *b)) << what;
      ExpectSameWalk(first, index, what);
    }
  }
}

// Terms of float precision (24 significant bits, like ssimulacra2's edge differences):
// a term whose lowest bit sits at half the running sum's unit is a tie, so many chunks
// have a few. The strided form takes them (its second pass, the ties in order) and must
// give the loop's bits; the tile sees only the chunks near a binade edge.
TEST_F(OrderedSumCudaTest, StridedChunksWithTiesGiveTheLoopsBits) {
  std::vector<double> terms(k4kTerms);
  TestRng rng{12345};
  for (double& t : terms) t = static_cast<double>(static_cast<float>(static_cast<double>(rng.Next() >> 11) * 0x1p-53));
  // Chunks with a tie under the loop's own running sum (its exact frames), by the
  // increment rule every path shares (FastIncrementOfTerm).
  int64_t chunks_with_ties = 0;
  double s = 0.0;
  for (size_t c = 0; c < k4kTerms; c += 1024) {
    bool tie = false;
    for (size_t i = c; i < c + 1024 && i < k4kTerms; ++i) {
      const int frame = FrameOfBits(BitsOf(s));
      tie = tie || (FastFrame(frame) && FastIncrementOfTerm(terms[i], ScaleOfFrame(frame)).tie);
      s += terms[i];
    }
    chunks_with_ties += tie ? 1 : 0;
  }
  const OrderedSumStats stats =
      ExpectParity(terms, kPlans[0], "float-precision 4K", Pipeline::kSegmentsOnly, /*must_accept=*/true);
  std::printf("float-precision terms: %lld of %lld chunks have a tie; %lld went through the tile\n",
              static_cast<long long>(chunks_with_ties), static_cast<long long>(stats.chunks),
              static_cast<long long>(stats.segment_tile_chunks));
  EXPECT_GT(chunks_with_ties, 1000);
  EXPECT_LE(stats.segment_tile_chunks, 400);
}

// Small enough for compute-sanitizer's racecheck and memcheck: every kernel of both
// pipelines, several groups (33 * 1024 + 5 terms: 34 chunks; 600,000: 586 chunks in two
// groups of the segment pipeline), mixed chunks, overflowing pools avoided.
TEST_F(OrderedSumCudaTest, BothPipelinesOnSmallFrames) {
  for (FixtureKind kind : {FixtureKind::kUniform, FixtureKind::kSsimLikeCrossingZero, FixtureKind::kZeroCrossings,
                           FixtureKind::kSignedTies, FixtureKind::kNaN}) {
    for (size_t n : {size_t{1}, size_t{1025}, size_t{33 * 1024 + 5}, size_t{600000}}) {
      const std::vector<double> terms = MakeFixture(kind, n, 21);
      const std::string what = std::string(FixtureName(kind)) + " n=" + std::to_string(n);
      ExpectParity(terms, kPlans[0], what);
      ExpectParity(terms, kPlans[0], what + " segments only", Pipeline::kSegmentsOnly);
      ExpectParity(terms, kPlans[0], what + " segments only, tile chunks", Pipeline::kSegmentsOnly,
                   /*must_accept=*/false, /*strided_chunks=*/false);
    }
  }
}

// A frame that is not the exact sum's must be refused, never applied: under plans one
// binade off or fixed far away, the segment pipeline alone refuses (every step is
// summarised under a wrong frame) and the default pipeline still gives the loop's bits.
TEST_F(OrderedSumCudaTest, SegmentPipelineRefusesWrongFrames) {
  const std::vector<double> terms = MakeFixture(FixtureKind::kUniform, 300000, 13);
  for (const PlanCase& plan : {kPlans[1], PlanCase{"fixed_16", PlanMode::kFixedFrame, 16}}) {
    OrderedSumOptions options;
    options.plan_mode = plan.mode;
    options.fixed_frame = plan.fixed_frame;
    options.device_pipeline = Pipeline::kSegmentsOnly;
    OrderedSumCuda sum(nullptr, options);
    DeviceTerms device(terms);
    OrderedSumStats stats;
    absl::StatusOr<double> got = sum.Sum(device.data(), terms.size(), &stats);
    EXPECT_EQ(got.status().code(), absl::StatusCode::kFailedPrecondition) << plan.name;
    const OrderedSumStats fallback = ExpectParity(terms, plan, std::string("uniform ") + plan.name);
    EXPECT_EQ(fallback.segment_accepted, 0) << plan.name;
  }
}

// Under plans that ignore the approximate sums, the device plan is known exactly, so the
// device walk must make the same decisions as its host model: same counts, not just the
// same bits. A kernel bug that happens to keep the bits (a lost window, a sub-chunk
// re-added) shows here.
TEST_F(OrderedSumCudaTest, FallbackCountsMatchTheHostModelOfTheWalk) {
  const PlanCase fixed_plans[] = {
      {"all_zero", PlanMode::kAllZero, 0},
      {"fixed_minus_3", PlanMode::kFixedFrame, -3},
      {"fixed_16", PlanMode::kFixedFrame, 16},
      {"all_term_by_term", PlanMode::kAllTermByTerm, 0},
  };
  for (FixtureKind kind : AllFixtureKinds()) {
    for (size_t n : {size_t{1025}, size_t{5 * 1024 + 333}, size_t{300000}}) {
      const std::vector<double> terms = MakeFixture(kind, n, 8);
      for (const PlanCase& plan : fixed_plans) {
        OrderedSumStats model;
        ModelDeviceWalk(terms.data(), n, ModelPlan(n, plan.mode, plan.fixed_frame), &model);
        const OrderedSumStats device = ExpectParity(
            terms, plan, std::string(FixtureName(kind)) + " n=" + std::to_string(n), Pipeline::kEventWalkOnly);
        const std::string what = std::string(FixtureName(kind)) + " n=" + std::to_string(n) + " plan=" + plan.name;
        EXPECT_EQ(device.chunks_rejected, model.chunks_rejected) << what;
        EXPECT_EQ(device.subchunks_rejected, model.subchunks_rejected) << what;
        EXPECT_EQ(device.terms_one_by_one, model.terms_one_by_one) << what;
        EXPECT_EQ(device.walk_windows, model.walk_windows) << what;
        if (HasFailure()) return;
      }
    }
  }
}

TEST_F(OrderedSumCudaTest, RepeatsBitsAndStatsAndReusesItsWorkspace) {
  OrderedSumCuda sum;
  // Growing and shrinking sizes through one instance (the workspace is reused and grown).
  for (size_t n : {size_t{1025}, k4kTerms, size_t{300000}, k4kTerms}) {
    const std::vector<double> terms = MakeFixture(FixtureKind::kSsimLikeCrossingZero, n, 5);
    DeviceTerms device(terms);
    OrderedSumStats first, second;
    absl::StatusOr<double> a = sum.Sum(device.data(), n, &first);
    absl::StatusOr<double> b = sum.Sum(device.data(), n, &second);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(BitsOf(*a), BitsOf(*b));
    EXPECT_EQ(BitsOf(*a), BitsOf(OrderedSumReference::Loop(terms.data(), n)));
    EXPECT_EQ(first.chunks_rejected, second.chunks_rejected);
    EXPECT_EQ(first.terms_one_by_one, second.terms_one_by_one);
  }
}

// A stream of frames through one instance that reuses its plan, against a fresh plan for
// every frame: the loop's bits, and the fresh pipeline's steps, crossing lanes, tile chunks
// and fallbacks (the kept records are the fresh ones, bit for bit). Returns the stats of
// the reusing instance, one per frame.
struct StreamFrame {
  std::string name;
  std::vector<double> terms;
};
std::vector<OrderedSumStats> ExpectReusedPlansGiveTheFreshPipeline(const std::vector<StreamFrame>& frames) {
  OrderedSumOptions reusing_options;
  reusing_options.reuse_plan = true;
  OrderedSumCuda reusing(nullptr, reusing_options);
  OrderedSumOptions fresh_options;
  fresh_options.reuse_plan = false;
  OrderedSumCuda fresh(nullptr, fresh_options);
  std::vector<OrderedSumStats> all;
  size_t previous_n = 0;
  for (const StreamFrame& frame : frames) {
    const size_t n = frame.terms.size();
    const std::string what = frame.name + " n=" + std::to_string(n);
    DeviceTerms device(frame.terms);
    OrderedSumStats got_stats, want_stats;
    absl::StatusOr<double> got = reusing.Sum(device.data(), n, &got_stats);
    absl::StatusOr<double> want = fresh.Sum(device.data(), n, &want_stats);
    EXPECT_TRUE(got.ok() && want.ok()) << what;
    if (!got.ok() || !want.ok()) return all;
    EXPECT_TRUE(SameBitsOrBothNaN(*got, OrderedSumReference::Loop(frame.terms.data(), n)))
        << what << ": reused plan " << Hex(*got);
    EXPECT_TRUE(SameBitsOrBothNaN(*got, *want)) << what;
    EXPECT_EQ(got_stats.segment_plan_reused, n == previous_n && n > 0 ? 1 : 0) << what;
    EXPECT_EQ(want_stats.segment_plan_reused, 0) << what;
    ExpectSameWalk(got_stats, want_stats, what);
    if (got_stats.segment_plan_reused == 1) {
      // The chunk stage under the old plan never goes lane by lane: every tile chunk was
      // summarised again, and nothing else can be more than every chunk.
      EXPECT_GE(got_stats.segment_replanned_chunks, got_stats.segment_tile_chunks) << what;
      EXPECT_LE(got_stats.segment_replanned_chunks, got_stats.chunks) << what;
    } else {
      EXPECT_EQ(got_stats.segment_replanned_chunks, 0) << what;
    }
    std::printf("  %-40s reused %lld, replanned %lld of %lld chunks, tile %lld, steps %lld\n", what.c_str(),
                static_cast<long long>(got_stats.segment_plan_reused),
                static_cast<long long>(got_stats.segment_replanned_chunks), static_cast<long long>(got_stats.chunks),
                static_cast<long long>(got_stats.segment_tile_chunks), static_cast<long long>(got_stats.segment_steps));
    all.push_back(got_stats);
    previous_n = n;
  }
  return all;
}

std::vector<double> Scaled(std::vector<double> terms, double factor) {
  for (double& x : terms) x *= factor;
  return terms;
}

TEST_F(OrderedSumCudaTest, ReusedPlansGiveTheFreshPipelineOnA4kStream) {
  const std::vector<double> base = MakeFixture(FixtureKind::kSsimLikeCrossingZero, k4kTerms, 21);
  std::vector<StreamFrame> frames;
  frames.push_back({"ssim_like seed 21", base});
  frames.push_back({"the same frame again", base});
  frames.push_back(
      {"ssim_like seed 22 (a similar frame)", MakeFixture(FixtureKind::kSsimLikeCrossingZero, k4kTerms, 22)});
  frames.push_back({"seed 21 x 1.01 (a 1% drift)", Scaled(base, 1.01)});
  frames.push_back({"seed 21 x 0.9", Scaled(base, 0.9)});
  frames.push_back({"uniform (a scene cut)", MakeFixture(FixtureKind::kUniform, k4kTerms, 23)});
  frames.push_back(
      {"uniform x 2^-40 (every frame moves)", Scaled(MakeFixture(FixtureKind::kUniform, k4kTerms, 23), 0x1p-40)});
  frames.push_back({"ssim_like seed 24", MakeFixture(FixtureKind::kSsimLikeCrossingZero, k4kTerms, 24)});
  const std::vector<OrderedSumStats> stats = ExpectReusedPlansGiveTheFreshPipeline(frames);
  ASSERT_EQ(stats.size(), frames.size());
  // The same frame again: the old plan is this frame's, so exactly the chunks the strided
  // form refuses (the tile chunks, the fresh pipeline's count) are summarised again.
  EXPECT_EQ(stats[1].segment_replanned_chunks, stats[1].segment_tile_chunks);
  // Scaling every term by 2^-40 moves every chunk's frame: every chunk is replanned.
  EXPECT_EQ(stats[6].segment_replanned_chunks, stats[6].chunks);
  // How much of the plan a similar frame keeps is printed above, and its time is in
  // ordered_sum_bench (stream_*); here only the bits and the steps are the contract.
}

TEST_F(OrderedSumCudaTest, ReusedPlansGiveTheFreshPipelineForEveryFixtureInTurn) {
  // Every fixture after every other (specials, subnormals, zero runs, near-max terms under
  // a plan made for something else), at a length with a short last chunk, then repeated.
  std::vector<StreamFrame> frames;
  for (int round = 0; round < 2; ++round) {
    for (FixtureKind kind : AllFixtureKinds()) {
      frames.push_back(
          {std::string(FixtureName(kind)) + (round ? " again" : ""), MakeFixture(kind, 5 * 1024 + 333, 31 + round)});
    }
  }
  frames.push_back({"a new length: no plan", MakeFixture(FixtureKind::kUniform, 300000, 33)});
  frames.push_back({"300000 again", MakeFixture(FixtureKind::kUniform, 300000, 34)});
  ExpectReusedPlansGiveTheFreshPipeline(frames);
}

TEST_F(OrderedSumCudaTest, RunsOnAnyStream) {
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  {
    OrderedSumCuda sum(stream);
    const std::vector<double> terms = MakeFixture(FixtureKind::kMixedWalk, 300000, 6);
    DeviceTerms device(terms);
    absl::StatusOr<double> got = sum.Sum(device.data(), terms.size(), nullptr);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(BitsOf(*got), BitsOf(OrderedSumReference::Loop(terms.data(), terms.size())));
  }
  {
    // One instance on a stream of its own, terms and lengths changing and repeating (the
    // workspace grows once, then is reused): every result from the segment pipeline.
    OrderedSumCuda sum(stream);
    const std::vector<double> a = MakeFixture(FixtureKind::kSsimLikeCrossingZero, k4kTerms, 9);
    const std::vector<double> b = MakeFixture(FixtureKind::kUniform, 300000, 10);
    DeviceTerms da(a);
    DeviceTerms db(b);
    const struct {
      const DeviceTerms* terms;
      const std::vector<double>* host;
      size_t n;
    } calls[] = {{&db, &b, b.size()}, {&db, &b, b.size()}, {&db, &b, 1025}, {&da, &a, a.size()},
                 {&da, &a, a.size()}, {&db, &b, b.size()}, {&da, &a, 77777}};
    for (const auto& call : calls) {
      OrderedSumStats stats;
      absl::StatusOr<double> got = sum.Sum(call.terms->data(), call.n, &stats);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(BitsOf(*got), BitsOf(OrderedSumReference::Loop(call.host->data(), call.n))) << "n=" << call.n;
      EXPECT_EQ(stats.segment_accepted, 1) << "n=" << call.n;
    }
  }
  cudaStreamDestroy(stream);
}

// The fused path: a TermSource computes each term from its index inside the kernels, so
// the terms are never stored; the host computes the same doubles for the loop.
TEST_F(OrderedSumCudaTest, SumsGeneratedTermsWithoutStoringThem) {
  for (size_t n : {size_t{1}, size_t{1025}, size_t{300000}, k4kTerms}) {
    std::vector<double> terms(n);
    for (size_t i = 0; i < n; ++i) terms[i] = GeneratedTerm(i, n);
    OrderedSumStats stats;
    absl::StatusOr<double> got = SumGeneratedTermsOnDevice(n, &stats);
    ASSERT_TRUE(got.ok()) << got.status();
    const double want = OrderedSumReference::Loop(terms.data(), n);
    EXPECT_EQ(BitsOf(*got), BitsOf(want)) << "n=" << n << ": cuda " << Hex(*got) << " loop " << Hex(want);
  }
}

// A batch of K sums on the device against the loop over term_of(i, n, k), sum by sum.
// These terms never come near a binade edge unforeseen, so every sum must be accepted.
template <int K, class SumOnDevice, class TermOf>
void ExpectBatchEqualsTheLoop(std::initializer_list<size_t> lengths, SumOnDevice sum_on_device, TermOf term_of) {
  for (size_t n : lengths) {
    absl::StatusOr<BatchSumsOnDevice<K>> got = sum_on_device(n);
    ASSERT_TRUE(got.ok()) << got.status();
    std::vector<double> terms(n);
    for (int k = 0; k < K; ++k) {
      for (size_t i = 0; i < n; ++i) terms[i] = term_of(i, n, k);
      const double want = OrderedSumReference::Loop(terms.data(), n);
      EXPECT_EQ(got->status[k], 0) << "n=" << n << " sum " << k << " refused";
      EXPECT_EQ(BitsOf(got->sums[k]), BitsOf(want))
          << "n=" << n << " sum " << k << ": cuda " << Hex(got->sums[k]) << " loop " << Hex(want);
    }
  }
}

// The batched segment pipeline: three sums of different signs and ranges in the same
// four launches, each from chunk sums a separate kernel wrote, each the loop's bits.
void ExpectBatchedSumsEqualTheLoop(std::initializer_list<size_t> lengths) {
  ExpectBatchEqualsTheLoop<kGeneratedBatch>(lengths, SumGeneratedBatchOnDevice, GeneratedBatchTerm);
}

// Small lengths (around a chunk; quick enough for compute-sanitizer's racecheck) and a
// 4K plane.
TEST_F(OrderedSumCudaTest, BatchedSegmentSumsGiveTheLoopsBitsOnSmallPlanes) {
  ExpectBatchedSumsEqualTheLoop({size_t{1}, size_t{1023}, size_t{1025}, size_t{40001}});
}
TEST_F(OrderedSumCudaTest, BatchedSegmentSumsGiveTheLoopsBitsOn4kPlanes) { ExpectBatchedSumsEqualTheLoop({k4kTerms}); }

// MappedArrayTerms in a batch: the chunk stage maps the stored values as it reads them.
void ExpectStoredBatchEqualsTheLoop(std::initializer_list<size_t> lengths) {
  ExpectBatchEqualsTheLoop<kStoredBatch>(
      lengths, [](size_t n) { return SumStoredBatchOnDevice(n); }, StoredBatchTerm);
}

TEST_F(OrderedSumCudaTest, StoredArrayBatchGivesTheLoopsBitsOnSmallPlanes) {
  ExpectStoredBatchEqualsTheLoop({size_t{1}, size_t{1023}, size_t{1025}, size_t{40001}});
}
TEST_F(OrderedSumCudaTest, StoredArrayBatchGivesTheLoopsBitsOn4kPlanes) { ExpectStoredBatchEqualsTheLoop({k4kTerms}); }

// The chunk stage in slabs (EnqueueSegmentedSumsChunkStage slab after slab, then
// EnqueueSegmentedSumsFinish): the loop's bits too, with slabs of one run of 32 chunks
// (a short last slab at 40,001 terms: 40 chunks) and of 128 chunks on a 4K plane.
TEST_F(OrderedSumCudaTest, StoredArrayBatchInSlabsGivesTheLoopsBits) {
  // Slabs of 32 chunks: one term past the first slab (a second slab of one chunk of one
  // term), and 40,001 terms (two slabs, the last short).
  ExpectBatchEqualsTheLoop<kStoredBatch>(
      {size_t{32 * 1024 + 1}, size_t{40001}}, [](size_t n) { return SumStoredBatchOnDevice(n, 32); }, StoredBatchTerm);
  ExpectBatchEqualsTheLoop<kStoredBatch>(
      {k4kTerms}, [](size_t n) { return SumStoredBatchOnDevice(n, 128); }, StoredBatchTerm);
}

// A slab left out: its chunks' records are still those of the run before (the same terms
// here, so a walk over them would even give the right bits: only the count can tell). The
// walk must refuse every sum of the batch, whichever slab is missing: the first (the
// others then start out of order), one in the middle, the last.
TEST_F(OrderedSumCudaTest, BatchInSlabsRefusesAMissedSlab) {
  const size_t n = 97 * 1024 + 5;  // 98 chunks: slabs of 32 chunks 0, 1, 2 and a short 3
  for (int64_t skipped : {0, 1, 3}) {
    absl::StatusOr<StoredBatchSums> got = SumStoredBatchOnDevice(n, 32, skipped);
    ASSERT_TRUE(got.ok()) << got.status();
    for (int k = 0; k < kStoredBatch; ++k) {
      EXPECT_EQ(got->status[k], kBatchUnstaged) << "slab " << skipped << " left out, sum " << k;
    }
  }
  // Two runs with every slab (slab 99 is past the last): the loop's bits, the first run
  // leaving the second nothing to trip on.
  ExpectBatchEqualsTheLoop<kStoredBatch>(
      {n}, [](size_t m) { return SumStoredBatchOnDevice(m, 32, /*skipped_slab=*/99); }, StoredBatchTerm);
}

// Refusals and pool overflow through the batch path, one and in slabs: the sums the
// pipeline cannot take say so (for the event walk to take them), and the benign sum
// beside them in the same launches is unaffected.
TEST_F(OrderedSumCudaTest, BatchReportsRefusalsAndOverflowSumBySum) {
  const size_t n = 200 * 1024;  // 6,400 crossing lanes in the oscillating sum: over the pools' 2,048
  std::vector<double> terms(n);
  for (size_t i = 0; i < n; ++i) terms[i] = AdversarialBatchTerm(i, n, kAdversarialBenign);
  const double want = OrderedSumReference::Loop(terms.data(), n);
  for (int64_t slab_chunks : {0, 32}) {
    absl::StatusOr<AdversarialBatchSums> got = SumAdversarialBatchOnDevice(n, slab_chunks);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->status[kAdversarialBenign], kBatchAccepted) << "slabs of " << slab_chunks;
    EXPECT_EQ(BitsOf(got->sums[kAdversarialBenign]), BitsOf(want))
        << "slabs of " << slab_chunks << ": cuda " << Hex(got->sums[kAdversarialBenign]) << " loop " << Hex(want);
    EXPECT_EQ(got->status[kAdversarialOscillating], kBatchOverflow) << "slabs of " << slab_chunks;
    EXPECT_EQ(got->status[kAdversarialWrongAdvice], kBatchRefused) << "slabs of " << slab_chunks;
  }
}

// 8K planes (7680 x 4320 = 33,177,600 terms) of 16-bit samples: PSNR's squared
// differences (integers up to 2^32, a sum past 2^53 that rounds) and signed products of
// centred samples (SSIM-like, crossing zero), and the host fixtures at that length, through
// both pipelines together and the event walk alone. The unsigned plane must be the
// segment pipeline's.
TEST_F(OrderedSumCudaTest, EqualsTheLoopOn8k16BitPlanes) {
  constexpr size_t k8kTerms = size_t{7680} * 4320;
  TestRng rng{81};
  std::vector<double> squared(k8kTerms), products(k8kTerms);
  for (size_t i = 0; i < k8kTerms; ++i) {
    const int64_t a = rng.Range(0, 65535);
    const int64_t b = i % 3 == 0 ? rng.Range(0, 65535) : std::min<int64_t>(65535, a + rng.Range(0, 1024));
    squared[i] = static_cast<double>((a - b) * (a - b));
    products[i] = (static_cast<double>(a) - 32767.5) / 65535.0 * ((static_cast<double>(b) - 30000.25) / 65535.0);
  }
  const OrderedSumStats unsigned_stats =
      ExpectParity(squared, kPlans[0], "8K 16-bit squared differences", Pipeline::kSegmentsOnly, /*must_accept=*/true);
  EXPECT_EQ(unsigned_stats.segment_accepted, 1);
  ExpectParity(squared, kPlans[0], "8K 16-bit squared differences, event walk", Pipeline::kEventWalkOnly);
  ExpectParity(products, kPlans[0], "8K 16-bit centred products");
  ExpectParity(products, kPlans[0], "8K 16-bit centred products, event walk", Pipeline::kEventWalkOnly);
  for (FixtureKind kind : {FixtureKind::kSsimLikeCrossingZero, FixtureKind::kFourthPowers, FixtureKind::kTieHeavy}) {
    const std::vector<double> terms = MakeFixture(kind, k8kTerms, 8);
    ExpectParity(terms, kPlans[0], std::string(FixtureName(kind)) + " 8K");
  }
}

// Finite terms whose loop overflows: to -inf through many large terms, to +inf in a later
// chunk with finite terms after it, to +inf by rounding alone (DBL_MAX + half an ulp, a
// tie to even), and not at all one ulp short of that. Every pipeline, every plan; the
// segment pipeline may refuse, never give other bits.
TEST_F(OrderedSumCudaTest, OverflowThroughFiniteTermsGivesTheLoopsInfinity) {
  const double max = std::numeric_limits<double>::max();
  const double half_ulp = std::ldexp(1.0, 970);  // half of DBL_MAX's ulp
  for (size_t n : {size_t{7}, size_t{1025}, size_t{40001}}) {
    struct Case {
      const char* name;
      std::vector<double> terms;
    };
    std::vector<Case> cases;
    std::vector<double> down(n, -max / 4);
    cases.push_back({"to -inf", down});
    std::vector<double> late(n, 0.375);
    late[n - n / 3 - 2] = max;
    late[n - n / 3 - 1] = max;
    for (size_t i = n - n / 3; i < n; ++i) late[i] = -1e300;
    cases.push_back({"to +inf in a later chunk", late});
    std::vector<double> tie(n, 0.0);
    tie[n / 2] = max;
    tie[n - 1] = half_ulp;
    cases.push_back({"to +inf by rounding", tie});
    std::vector<double> short_of(n, 0.0);
    short_of[n / 2] = max;
    short_of[n - 2] = std::nextafter(half_ulp, 0.0);
    short_of[n - 1] = -max;
    cases.push_back({"one ulp short, then back", short_of});
    for (const Case& c : cases) {
      const double want = OrderedSumReference::Loop(c.terms.data(), n);
      ASSERT_EQ(std::isinf(want), std::string(c.name).find("inf") != std::string::npos) << c.name << " n=" << n;
      for (const PlanCase& plan : kPlans) {
        const std::string what = std::string(c.name) + " n=" + std::to_string(n);
        ExpectParity(c.terms, plan, what);
        ExpectParity(c.terms, plan, what + " segments only", Pipeline::kSegmentsOnly);
        ExpectParity(c.terms, plan, what + " event walk only", Pipeline::kEventWalkOnly);
      }
    }
  }
}

// Past the segment pipeline's 2^30 terms the event walk takes the sum (stored terms), and
// the segment pipeline alone refuses with INVALID_ARGUMENT; past 2^31 terms (indices
// beyond int32) the walk still gives the loop's bits on generated terms. 8 GiB of terms
// on the device and the host.
TEST_F(OrderedSumCudaTest, PastTheSegmentPipelinesLimitTheEventWalkGivesTheLoopsBits) {
  const size_t n = (size_t{1} << 30) + 1025;
  std::vector<double> terms(n);
  for (size_t i = 0; i < n; ++i) terms[i] = GeneratedTerm(i, n);
  DeviceTerms device(terms);
  OrderedSumCuda sum;
  OrderedSumStats stats;
  absl::StatusOr<double> got = sum.Sum(device.data(), n, &stats);
  ASSERT_TRUE(got.ok()) << got.status();
  const double want = OrderedSumReference::Loop(terms.data(), n);
  EXPECT_EQ(BitsOf(*got), BitsOf(want)) << "cuda " << Hex(*got) << " loop " << Hex(want);
  EXPECT_EQ(stats.segment_accepted, 0);
  OrderedSumOptions segments_only;
  segments_only.device_pipeline = Pipeline::kSegmentsOnly;
  OrderedSumCuda refusing(nullptr, segments_only);
  EXPECT_EQ(refusing.Sum(device.data(), n, nullptr).status().code(), absl::StatusCode::kInvalidArgument);

  const size_t past_int32 = (size_t{1} << 31) + 7;
  double loop = 0.0;
  for (size_t i = 0; i < past_int32; ++i) loop = loop + GeneratedTerm(i, past_int32);
  absl::StatusOr<double> generated = SumGeneratedTermsOnDevice(past_int32, nullptr);
  ASSERT_TRUE(generated.ok()) << generated.status();
  EXPECT_EQ(BitsOf(*generated), BitsOf(loop)) << "cuda " << Hex(*generated) << " loop " << Hex(loop);
}

TEST_F(OrderedSumCudaTest, RejectsOtherChunkSizes) {
  OrderedSumOptions options;
  options.chunk_terms = 512;
  OrderedSumCuda sum(nullptr, options);
  const std::vector<double> terms(10, 1.0);
  DeviceTerms device(terms);
  EXPECT_FALSE(sum.Sum(device.data(), terms.size(), nullptr).ok());
}

}  // namespace
}  // namespace exact
}  // namespace exactq
