// StagedCopy: every byte copied, every byte reported exactly once and in order, also
// with many callers sharing the helpers at once. No GPU needed.
#include "engine/platform/staged_copy.h"

#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace exactq {
namespace {

// Copies `sizes` spans of random bytes and checks the copies and the reports.
void CheckCopy(const std::vector<size_t>& sizes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<uint8_t>> src(sizes.size()), dst(sizes.size());
  std::vector<CopySpan> spans;
  for (size_t i = 0; i < sizes.size(); ++i) {
    src[i].resize(sizes[i]);
    for (uint8_t& b : src[i]) b = static_cast<uint8_t>(rng());
    dst[i].assign(sizes[i], 0);
    spans.push_back({src[i].data(), dst[i].data(), sizes[i]});
  }
  // Where the next report must start: span, then offset.
  size_t span_at = 0, offset_at = 0;
  bool ordered = true, copied_when_reported = true;
  StagedCopy(spans, [&](size_t span, size_t begin, size_t end) {
    while (span_at < sizes.size() && offset_at == sizes[span_at]) {
      ++span_at;
      offset_at = 0;
    }
    if (span != span_at || begin != offset_at || end <= begin || end > sizes[span]) {
      ordered = false;
      return;
    }
    // A reported range is already copied.
    for (size_t b = begin; b < end; ++b) {
      if (dst[span][b] != src[span][b]) copied_when_reported = false;
    }
    offset_at = end;
  });
  while (span_at < sizes.size() && offset_at == sizes[span_at]) {
    ++span_at;
    offset_at = 0;
  }
  EXPECT_TRUE(ordered);
  EXPECT_TRUE(copied_when_reported);
  EXPECT_EQ(span_at, sizes.size()) << "not every byte was reported";
  for (size_t i = 0; i < sizes.size(); ++i) EXPECT_EQ(dst[i], src[i]) << "span " << i;
}

TEST(StagedCopyTest, CopiesAndReportsEveryByteInOrder) {
  const size_t chunk = GetStagedCopySettings().chunk_bytes;
  CheckCopy({}, 1);
  CheckCopy({0}, 2);
  CheckCopy({1}, 3);
  CheckCopy({1, 1}, 4);
  CheckCopy({0, 7, 0, 3}, 5);
  CheckCopy({chunk, chunk}, 6);
  CheckCopy({chunk - 1, chunk + 1}, 7);
  CheckCopy({3 * chunk + 17, 0, 5 * chunk + 1}, 8);
  CheckCopy({6220800 / 2 * 3 / 2, 6220800 / 2 * 3 / 2}, 9);  // a 1080p 4:2:0 pair
}

TEST(StagedCopyTest, ManyCallersAtOnce) {
  const size_t chunk = GetStagedCopySettings().chunk_bytes;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t, chunk] {
      for (int round = 0; round < 20; ++round) {
        CheckCopy({static_cast<size_t>(t + 1) * chunk / 3 + round, 2 * chunk + static_cast<size_t>(round)},
                  static_cast<uint64_t>(t * 100 + round));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
}

TEST(StagedCopyTest, SettingsAreSane) {
  const StagedCopySettings& s = GetStagedCopySettings();
  EXPECT_GE(s.helpers, 0);
  EXPECT_GE(s.chunk_bytes, 4096u);
  EXPECT_GE(s.spin_us, 0);
  EXPECT_GE(s.crowd, 1);
}

}  // namespace
}  // namespace exactq
