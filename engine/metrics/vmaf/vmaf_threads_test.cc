// The threaded path against the reference, bit for bit, on random frames: 1, 2, 3 and 7
// threads, 8 to 16 bits, odd sizes.

#include "engine/metrics/vmaf/vmaf_threads.h"

#include <cstdint>
#include <cstring>

#include "engine/metrics/vmaf/vmaf_test_frames.h"
#include "gtest/gtest.h"

namespace exactq {
namespace vmaf {
namespace {

uint64_t Bits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

TEST(VmafThreadsTest, EveryThreadCountGivesTheReferenceBits) {
  VmafThreads pools[] = {VmafThreads(1), VmafThreads(2), VmafThreads(3), VmafThreads(7)};
  struct Case {
    int w, h, depth;
    uint32_t seed;
  };
  for (const Case& c : {Case{17, 17, 8, 1}, Case{67, 45, 8, 2}, Case{203, 117, 10, 3}, Case{130, 77, 12, 4},
                        Case{95, 151, 16, 5}, Case{320, 181, 8, 6}}) {
    SCOPED_TRACE(testing::Message() << c.w << "x" << c.h << " " << c.depth << " bit");
    const FrameGeometry g = testing_frames::Geometry(c.w, c.h, c.depth);
    const Frame prev = testing_frames::MakeFrame(g, 0, 0, c.seed);
    const Frame ref = testing_frames::MakeFrame(g, 3, 0, c.seed);
    const Frame dis = testing_frames::MakeFrame(g, 3, 4, c.seed);
    absl::StatusOr<VmafFeatures> want = ComputeVmafFeatures(ref, dis, &prev);
    ASSERT_TRUE(want.ok()) << want.status();
    for (VmafThreads& threads : pools) {
      absl::StatusOr<VmafFeatures> got = threads.ComputeFeatures(ref, dis, &prev);
      ASSERT_TRUE(got.ok()) << got.status();
      for (int s = 0; s < 4; ++s) {
        EXPECT_EQ(Bits(got->vif[s]), Bits(want->vif[s])) << threads.num_threads() << " threads, vif scale " << s;
      }
      EXPECT_EQ(Bits(got->adm2), Bits(want->adm2)) << threads.num_threads() << " threads";
      EXPECT_EQ(Bits(got->motion), Bits(want->motion)) << threads.num_threads() << " threads";
    }
  }
}

}  // namespace
}  // namespace vmaf
}  // namespace exactq
