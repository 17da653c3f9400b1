#include "engine/runtime/pinned_frame_resource.h"

#include <atomic>
#include <cstdlib>
#include <set>
#include <thread>
#include <vector>

#include "engine/format/frame.h"
#include "gtest/gtest.h"

namespace exactq {
namespace {

// Stands in for cudaHostAlloc: aligned blocks, remembered so the test can tell them
// apart from ordinary memory; can be told to fail.
struct FakeLockerState {
  std::atomic<int> locks{0};
  std::atomic<int> frees{0};
  std::atomic<bool> fail{false};
  std::atomic<bool> permanent{false};
};

class FakeLocker final : public HostPageLocker {
 public:
  explicit FakeLocker(FakeLockerState* state) : state_(state) {}
  void* Allocate(size_t bytes, bool* permanent) override {
    if (state_->fail) {
      *permanent = state_->permanent;
      return nullptr;
    }
    ++state_->locks;
    return std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
  }
  void Free(void* block) override {
    ++state_->frees;
    std::free(block);
  }

 private:
  FakeLockerState* state_;
};

const FrameGeometry k1080{1920, 1080, {ChromaLayout::k420, 8}};  // 3,110,400 bytes
const FrameGeometry k720{1280, 720, {ChromaLayout::k420, 8}};    // 1,382,400 bytes

TEST(PinnedFrameResourceTest, FramesReuseKeptBlocksInsteadOfLockingAgain) {
  FakeLockerState state;
  PinnedFrameResource resource(std::make_unique<FakeLocker>(&state), 64 << 20);
  const void* first = nullptr;
  {
    Frame a = *Frame::Create(k1080, &resource);
    Frame b = *Frame::Create(k1080, &resource);
    first = a.bytes();
    EXPECT_TRUE(resource.IsPinnedBlock(a.bytes()));
    EXPECT_TRUE(resource.IsPinnedBlock(b.bytes()));
    EXPECT_EQ(resource.stats().in_use_bytes, 2 * k1080.frame_bytes());
  }
  EXPECT_EQ(resource.stats().in_use_bytes, 0u);
  EXPECT_EQ(resource.stats().pinned_bytes, 2 * k1080.frame_bytes());  // kept
  for (int i = 0; i < 100; ++i) {
    Frame a = *Frame::Create(k1080, &resource);
    Frame b = *Frame::Create(k1080, &resource);
    ASSERT_TRUE(a.bytes() == first || b.bytes() == first);
  }
  const PinnedFrameStats stats = resource.stats();
  EXPECT_EQ(stats.page_locks, 2u);
  EXPECT_EQ(stats.reuses, 200u);
  EXPECT_EQ(stats.fallbacks, 0u);
  EXPECT_EQ(state.frees, 0);
}

TEST(PinnedFrameResourceTest, BeyondTheLimitFramesGetOrdinaryMemory) {
  FakeLockerState state;
  PinnedFrameResource resource(std::make_unique<FakeLocker>(&state), 2 * k1080.frame_bytes() + 100);
  Frame a = *Frame::Create(k1080, &resource);
  Frame b = *Frame::Create(k1080, &resource);
  Frame c = *Frame::Create(k1080, &resource);  // over the limit: still a frame
  EXPECT_TRUE(resource.IsPinnedBlock(a.bytes()));
  EXPECT_TRUE(resource.IsPinnedBlock(b.bytes()));
  EXPECT_FALSE(resource.IsPinnedBlock(c.bytes()));
  c.set_sample(0, 5, 5, 200);
  EXPECT_EQ(c.sample(0, 5, 5), 200u);
  const PinnedFrameStats stats = resource.stats();
  EXPECT_EQ(stats.fallbacks, 1u);
  EXPECT_LE(stats.pinned_bytes, stats.limit_bytes);
}

TEST(PinnedFrameResourceTest, KeptBlocksOfAnotherSizeMakeRoom) {
  FakeLockerState state;
  PinnedFrameResource resource(std::make_unique<FakeLocker>(&state), 2 * k1080.frame_bytes());
  { Frame a = *Frame::Create(k1080, &resource), b = *Frame::Create(k1080, &resource); }
  // The 1080p blocks are kept; 720p frames need room, so kept blocks are freed.
  Frame a = *Frame::Create(k720, &resource), b = *Frame::Create(k720, &resource);
  EXPECT_TRUE(resource.IsPinnedBlock(a.bytes()));
  EXPECT_TRUE(resource.IsPinnedBlock(b.bytes()));
  EXPECT_GE(state.frees, 1);
  EXPECT_LE(resource.stats().pinned_bytes, resource.stats().limit_bytes);
  EXPECT_EQ(resource.stats().fallbacks, 0u);
}

TEST(PinnedFrameResourceTest, AFailedPageLockFallsBackAndAPermanentOneStopsAsking) {
  FakeLockerState state;
  state.fail = true;
  PinnedFrameResource resource(std::make_unique<FakeLocker>(&state), 64 << 20);
  Frame a = *Frame::Create(k720, &resource);
  EXPECT_FALSE(resource.IsPinnedBlock(a.bytes()));
  EXPECT_FALSE(resource.stats().disabled);
  state.permanent = true;
  Frame b = *Frame::Create(k720, &resource);
  EXPECT_TRUE(resource.stats().disabled);
  state.fail = false;  // no longer asked: stays ordinary memory
  Frame c = *Frame::Create(k720, &resource);
  EXPECT_FALSE(resource.IsPinnedBlock(c.bytes()));
  EXPECT_EQ(state.locks, 0);
  EXPECT_EQ(resource.stats().fallbacks, 3u);
  EXPECT_EQ(resource.stats().pinned_bytes, 0u);
}

TEST(PinnedFrameResourceTest, ALowerLimitGivesBlocksBack) {
  FakeLockerState state;
  PinnedFrameResource resource(std::make_unique<FakeLocker>(&state), 64 << 20);
  { Frame kept = *Frame::Create(k720, &resource); }
  Frame held = *Frame::Create(k1080, &resource);
  resource.set_limit(0);
  EXPECT_EQ(state.frees, 1);  // the kept block at once
  held = Frame();             // the one in use when it comes back
  EXPECT_EQ(state.frees, 2);
  EXPECT_EQ(resource.stats().pinned_bytes, 0u);
}

TEST(PinnedFrameResourceTest, ManyThreadsNeverShareABlockOrPassTheLimit) {
  FakeLockerState state;
  const uint64_t limit = 6 * k720.frame_bytes();
  PinnedFrameResource resource(std::make_unique<FakeLocker>(&state), limit);
  std::atomic<bool> bad{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        Frame f = *Frame::Create(i % 3 == 0 ? k1080 : k720, &resource);
        f.set_sample(0, 0, 0, static_cast<uint32_t>(t + 1));
        std::this_thread::yield();
        if (f.sample(0, 0, 0) != static_cast<uint32_t>(t + 1)) bad = true;
        if (resource.stats().pinned_bytes > limit) bad = true;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_FALSE(bad);
  const PinnedFrameStats stats = resource.stats();
  EXPECT_EQ(stats.in_use_bytes, 0u);
  EXPECT_EQ(stats.reuses + stats.page_locks + stats.fallbacks, 8u * 200u);
}

}  // namespace
}  // namespace exactq
