// The device memory a GPU decoder is admitted for (gpu_decoding.h): the arithmetic on
// sizes worked out by hand. How it compares with what a decoder really takes is
// gpu_decoder_memory_test's, on a GPU.
#include "engine/decode/gpu_decoding.h"

#include "gtest/gtest.h"

namespace exactq::decode::internal {
namespace {

constexpr uint64_t kFixed = 134'217'728;  // 128 MiB

TEST(GpuDecoderDeviceBytesTest, FourKEightBitWithPicturesKeptOnTheDevice) {
  // Rows of 3840 bytes padded to 4096, 2160 rows to 2176: 4096 * 2176 * 3 / 2 =
  // 13,369,344 bytes a surface; 2 * 13 + 6 = 32 surfaces; 6 planar 4:2:0 pictures of
  // 3840 * 2160 * 3 / 2 = 12,441,600 bytes.
  EXPECT_EQ(kNvdecDecoderBytes, kFixed);
  EXPECT_EQ(GpuDecoderDeviceBytes(3840, 2160, 1, 13, 6, 12'441'600), kFixed + 32u * 13'369'344u + 6u * 12'441'600u);
  EXPECT_EQ(GpuDecoderDeviceBytes(3840, 2160, 1, 13, 6, 12'441'600), 636'686'336u);
}

TEST(GpuDecoderDeviceBytesTest, TenBitSamplesTakeTwoBytesAndNothingHeldAddsNothing) {
  // 1920 samples of 2 bytes: 3840 bytes, padded to 4096; 1080 rows to 1088:
  // 6,684,672 bytes a surface, 2 * 5 of them.
  EXPECT_EQ(GpuDecoderDeviceBytes(1920, 1080, 2, 5, 0, 0), kFixed + 10u * 6'684'672u);
}

TEST(GpuDecoderDeviceBytesTest, TinyPicturesStillTakeAPaddedSurface) {
  // 512 bytes a row, 64 rows: 49,152 bytes a surface; 2 * 1 + 1 surfaces and one
  // 3-byte planar picture.
  EXPECT_EQ(GpuDecoderDeviceBytes(1, 1, 1, 1, 1, 3), kFixed + 3u * 49'152u + 3u);
}

TEST(GpuDecoderDeviceBytesTest, EightKSixteenBitDoesNotOverflow) {
  // 8192 * 2 = 16384 bytes a row (a multiple of 512), 4352 rows (a multiple of 64):
  // 106,954,752 bytes a surface; 2 * 40 + 16 = 96 surfaces, beyond 32 bits in all.
  const uint64_t surface = 16384ull * 4352ull * 3 / 2;
  EXPECT_EQ(surface, 106'954'752u);
  EXPECT_EQ(GpuDecoderDeviceBytes(8192, 4352, 2, 40, 16, 0), kFixed + 96u * surface);
}

}  // namespace
}  // namespace exactq::decode::internal
