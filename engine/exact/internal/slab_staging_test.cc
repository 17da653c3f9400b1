// The slab bookkeeping of a batch's chunk stage: the walk may sum only when the slabs
// covered every chunk, in order, since the last slab at chunk 0.
#include "engine/exact/internal/slab_staging.h"

#include <cstdint>
#include <initializer_list>
#include <utility>

#include "gtest/gtest.h"

namespace exactq {
namespace exact {
namespace gpu {
namespace {

// The staging after the slabs in order, from the state a finished walk leaves ({0, 0}).
SlabStaging Stage(std::initializer_list<std::pair<int64_t, int64_t>> slabs, SlabStaging from = SlabStaging{0, 0}) {
  SlabStaging s = from;
  for (const auto& [first, end] : slabs) s = AfterSlab(s, first, end);
  return s;
}

TEST(SlabStaging, EverySlabInOrderStagesTheSum) {
  EXPECT_TRUE(EveryChunkStaged(Stage({{0, 40}}), 40));
  EXPECT_TRUE(EveryChunkStaged(Stage({{0, 32}, {32, 40}}), 40));
  EXPECT_TRUE(EveryChunkStaged(Stage({{0, 32}, {32, 64}, {64, 96}, {96, 97}}), 97));
}

TEST(SlabStaging, AMissedLastSlabIsRefused) {
  EXPECT_FALSE(EveryChunkStaged(Stage({{0, 32}}), 40));
  EXPECT_FALSE(EveryChunkStaged(Stage({{0, 32}, {32, 64}}), 97));
  EXPECT_FALSE(EveryChunkStaged(Stage({}), 1));  // no slab at all since the last walk
}

TEST(SlabStaging, AMissedMiddleSlabIsRefused) {
  const SlabStaging s = Stage({{0, 32}, {64, 96}, {96, 97}});
  EXPECT_EQ(s.out_of_order, 1);
  EXPECT_FALSE(EveryChunkStaged(s, 97));
}

// The first slab left out: the records of chunks [0, 32) are an earlier frame's.
TEST(SlabStaging, AMissedFirstSlabIsRefused) {
  EXPECT_FALSE(EveryChunkStaged(Stage({{32, 64}, {64, 97}}), 97));
  // Even where an earlier frame's staging was complete and never consumed by a walk.
  EXPECT_FALSE(EveryChunkStaged(Stage({{32, 64}, {64, 97}}, SlabStaging{97, 0}), 97));
}

TEST(SlabStaging, OverlappingOrRepeatedSlabsAreRefused) {
  EXPECT_FALSE(EveryChunkStaged(Stage({{0, 64}, {32, 97}}), 97));
  EXPECT_FALSE(EveryChunkStaged(Stage({{0, 32}, {32, 64}, {32, 64}, {64, 97}}), 97));
  EXPECT_FALSE(EveryChunkStaged(Stage({{0, 32}, {64, 96}, {32, 64}, {96, 97}}), 97));  // out of order
}

// A slab at chunk 0 starts the sum again (it empties the pools): what came before it
// does not count, whether it was complete or broken.
TEST(SlabStaging, ASlabAtChunkZeroStartsAfresh) {
  EXPECT_TRUE(EveryChunkStaged(Stage({{0, 32}, {64, 96}, {0, 32}, {32, 64}, {64, 97}}), 97));
  EXPECT_FALSE(EveryChunkStaged(Stage({{0, 32}, {32, 64}, {64, 97}, {0, 32}}), 97));
}

TEST(SlabStaging, AnotherSumsLengthIsRefused) {
  EXPECT_FALSE(EveryChunkStaged(Stage({{0, 32}, {32, 64}}), 65));
  EXPECT_FALSE(EveryChunkStaged(Stage({{0, 32}, {32, 64}}), 63));
}

}  // namespace
}  // namespace gpu
}  // namespace exact
}  // namespace exactq
