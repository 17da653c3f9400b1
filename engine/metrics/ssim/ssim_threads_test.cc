// The threaded path against the reference: == on the bits of both sums, for 1, 2, 3, 4
// and 7 threads, both vector widths and both ways of forming the frame total, on random
// geometries, depths and content. A failure prints the case so it can be replayed.
// (The corpus frames are compared in ssim_corpus_test.cc.)

#include "engine/metrics/ssim/ssim_threads.h"

#include <cstdint>
#include <cstring>
#include <random>
#include <string>

#include "absl/strings/str_format.h"
#include "engine/metrics/ssim/ssim_reference.h"
#include "engine/metrics/ssim/ssim_test_frames.h"
#include "gtest/gtest.h"

namespace exactq {
namespace ssim {
namespace {

using testing_frames::Geometry;
using testing_frames::Kind;
using testing_frames::MakeFrame;

uint64_t Bits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

constexpr int kThreadCounts[] = {1, 2, 3, 4, 7};
constexpr SsimIsa kIsas[] = {SsimIsa::kSse2, SsimIsa::kAvx};
constexpr SsimFrameSum kFrameSums[] = {SsimFrameSum::kOrderedSum, SsimFrameSum::kRasterLoop};

// Every variant on one pair; returns the number of comparisons made.
int ExpectAllVariantsEqualReference(const Frame& ref, const Frame& dis, const std::string& what) {
  absl::StatusOr<SsimSums> want = ReferenceSums(ref, dis);
  EXPECT_TRUE(want.ok()) << want.status();
  if (!want.ok()) return 0;
  int compared = 0;
  for (int threads : kThreadCounts) {
    for (SsimIsa isa : kIsas) {
      for (SsimFrameSum frame_sum : kFrameSums) {
        SsimThreads fast(threads, frame_sum, isa);
        // Twice: scratch and the terms plane are reused between frames.
        for (int round = 0; round < 2; ++round) {
          absl::StatusOr<SsimSums> got = fast.Sums(ref, dis);
          EXPECT_TRUE(got.ok()) << got.status();
          if (!got.ok()) return compared;
          const std::string variant = absl::StrFormat("%s; %d threads, %s, %s, round %d", what, threads,
                                                      SsimIsaName(fast.isa()), SsimFrameSumName(frame_sum), round);
          EXPECT_EQ(Bits(got->term_sum), Bits(want->term_sum))
              << absl::StrFormat("%s: term sum %a, reference %a", variant, got->term_sum, want->term_sum);
          EXPECT_EQ(Bits(got->weight_sum), Bits(want->weight_sum)) << variant;
          ++compared;
        }
      }
    }
  }
  return compared;
}

TEST(SsimThreadsTest, EqualsReferenceOnRandomGeometriesDepthsAndContent) {
  std::mt19937 rng(20240611);
  const Kind kinds[] = {Kind::kNoisy, Kind::kInverted, Kind::kRandom, Kind::kRamp};
  const ChromaLayout layouts[] = {ChromaLayout::k400, ChromaLayout::k420, ChromaLayout::k422, ChromaLayout::k444};
  int compared = 0;
  for (int trial = 0; trial < 40; ++trial) {
    // Mostly small (every border case), a few wider than the vector width many times.
    const int width = trial < 30 ? 1 + static_cast<int>(rng() % 40) : 1 + static_cast<int>(rng() % 300);
    const int height = trial < 30 ? 1 + static_cast<int>(rng() % 40) : 1 + static_cast<int>(rng() % 200);
    const int depth = 8 + static_cast<int>(rng() % 9);
    const ChromaLayout layout = layouts[rng() % 4];
    const Kind ref_kind = kinds[rng() % 4];
    const Kind dis_kind = kinds[rng() % 4];
    const uint32_t seed = rng();
    const FrameGeometry g = Geometry(width, height, depth, layout);
    const Frame ref = MakeFrame(g, ref_kind, seed);
    const Frame dis = MakeFrame(g, dis_kind, seed + 1);
    compared += ExpectAllVariantsEqualReference(
        ref, dis,
        absl::StrFormat("trial %d: %s, kinds %d/%d, seed %u", trial, GeometryDescription(g), static_cast<int>(ref_kind),
                        static_cast<int>(dis_kind), seed));
  }
  std::printf("compared %d threaded results with the reference\n", compared);
}

// Fewer rows than threads, a single row, a single column.
TEST(SsimThreadsTest, EqualsReferenceOnDegenerateShapes) {
  for (const auto& [w, h] :
       {std::pair{1, 1}, std::pair{1, 3}, std::pair{5, 2}, std::pair{300, 1}, std::pair{1, 300}, std::pair{7, 5}}) {
    for (int depth : {8, 16}) {
      const FrameGeometry g = Geometry(w, h, depth);
      ExpectAllVariantsEqualReference(MakeFrame(g, Kind::kRamp), MakeFrame(g, Kind::kNoisy), GeometryDescription(g));
    }
  }
}

// A frame large enough for many ordered-sum chunks, whose running sum starts negative
// (inverted content) or climbs through many binades: the signed ordered sum's hard
// cases on real terms.
TEST(SsimThreadsTest, EqualsReferenceOnLargerFramesWithSignedSums) {
  for (Kind dis_kind : {Kind::kInverted, Kind::kNoisy, Kind::kRandom}) {
    const FrameGeometry g = Geometry(720, 405, 10);
    const Frame ref = MakeFrame(g, Kind::kRamp);
    const Frame dis = MakeFrame(g, dis_kind, 5);
    ExpectAllVariantsEqualReference(ref, dis, GeometryDescription(g));
    SsimThreads fast(3, SsimFrameSum::kOrderedSum);
    ASSERT_TRUE(fast.Sums(ref, dis).ok());
    // The ordered sum really ran, over every term.
    EXPECT_EQ(fast.last_sum_stats().terms, int64_t{720} * 405);
  }
  // Half inverted, half equal: the running sum falls below zero and climbs back.
  const FrameGeometry g = Geometry(640, 360, 8);
  const Frame ref = MakeFrame(g, Kind::kRamp);
  Frame dis = MakeFrame(g, Kind::kInverted);
  for (int y = 120; y < 360; ++y) {
    for (int x = 0; x < 640; ++x) dis.set_sample(0, x, y, ref.sample(0, x, y));
  }
  absl::StatusOr<SsimSums> want = ReferenceSums(ref, dis);
  ASSERT_TRUE(want.ok());
  EXPECT_GT(want->term_sum, 0.0);  // it crossed zero on the way
  ExpectAllVariantsEqualReference(ref, dis, "640x360 half inverted");
}

TEST(SsimThreadsTest, ScoreAddsTheSameOutputsAsTheReference) {
  const FrameGeometry g = Geometry(33, 17, 12);
  const Frame ref = MakeFrame(g, Kind::kRamp);
  const Frame dis = MakeFrame(g, Kind::kNoisy);
  const SsimOptions options{true, true};
  absl::StatusOr<FrameScores> want = ScoreReference(ref, dis, options);
  ASSERT_TRUE(want.ok());
  SsimThreads fast(2);
  absl::StatusOr<FrameScores> got = fast.Score(ref, dis, options);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < got->size(); ++i) {
    EXPECT_EQ((*got)[i].name, (*want)[i].name);
    EXPECT_EQ(Bits((*got)[i].value), Bits((*want)[i].value)) << (*got)[i].name;
  }
}

TEST(SsimThreadsTest, RejectsMismatchedGeometries) {
  SsimThreads fast(2);
  const Frame a = MakeFrame(Geometry(8, 8, 8), Kind::kRamp);
  const Frame b = MakeFrame(Geometry(9, 8, 8), Kind::kRamp);
  EXPECT_EQ(fast.Sums(a, b).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ssim
}  // namespace exactq
