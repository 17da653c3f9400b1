// The per-GPU ledger that scorers and GPU decoders reserve device memory from: what fits
// the limit is admitted, what does not is refused by name, and bytes come back when
// their reservation goes (moved reservations give them back once).
#include "engine/runtime/device_memory.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/runtime/device_memory_ledger.h"
#include "engine/runtime/runtime_config.h"
#include "gtest/gtest.h"

namespace exactq {
namespace {

// Each test uses GPU numbers of its own: the ledger is process-wide.

TEST(DeviceMemoryTest, AdmitsUpToTheLimitAndRefusesBeyondByName) {
  constexpr int kGpu = 11;
  absl::StatusOr<DeviceMemoryReservation> first = ReserveDeviceMemoryWithin(kGpu, 600, 1000, "the scorer");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->bytes(), 600u);
  EXPECT_EQ(first->gpu(), kGpu);
  EXPECT_EQ(DeviceMemoryAdmitted(kGpu), 600u);

  absl::StatusOr<DeviceMemoryReservation> fits = ReserveDeviceMemoryWithin(kGpu, 400, 1000, "a decoder");
  ASSERT_TRUE(fits.ok()) << fits.status();
  EXPECT_EQ(DeviceMemoryAdmitted(kGpu), 1000u);

  absl::StatusOr<DeviceMemoryReservation> over = ReserveDeviceMemoryWithin(kGpu, 1, 1000, "the GPU decoder of dist");
  ASSERT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(over.status().message(),
            "device memory: the GPU decoder of dist needs about 1 bytes on cuda:11, 1000 are admitted already, "
            "limit max_device_bytes=1000");
  EXPECT_EQ(DeviceMemoryAdmitted(kGpu), 1000u);  // a refusal admits nothing
}

TEST(DeviceMemoryTest, ARequestLargerThanTheLimitIsRefusedWithoutOverflow) {
  constexpr int kGpu = 12;
  ASSERT_TRUE(ReserveDeviceMemoryWithin(kGpu, 10, 100, "x").ok());  // released at once
  absl::StatusOr<DeviceMemoryReservation> huge = ReserveDeviceMemoryWithin(kGpu, ~uint64_t{0}, 100, "x");
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kResourceExhausted);
  absl::StatusOr<DeviceMemoryReservation> held = ReserveDeviceMemoryWithin(kGpu, 90, 100, "x");
  ASSERT_TRUE(held.ok());
  // 90 admitted: limit - bytes would wrap for bytes > limit; the check must not.
  EXPECT_EQ(ReserveDeviceMemoryWithin(kGpu, 101, 100, "x").status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(ReserveDeviceMemoryWithin(kGpu, 11, 100, "x").status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(ReserveDeviceMemoryWithin(kGpu, 10, 100, "x").ok());
}

TEST(DeviceMemoryTest, BytesComeBackOnceWhenTheReservationGoes) {
  constexpr int kGpu = 13;
  {
    absl::StatusOr<DeviceMemoryReservation> a = ReserveDeviceMemoryWithin(kGpu, 300, 1000, "a");
    ASSERT_TRUE(a.ok());
    DeviceMemoryReservation moved = *std::move(a);
    DeviceMemoryReservation again = std::move(moved);
    EXPECT_EQ(again.bytes(), 300u);
    EXPECT_EQ(moved.bytes(), 0u);  // NOLINT(bugprone-use-after-move): moved-from holds nothing
    EXPECT_EQ(DeviceMemoryAdmitted(kGpu), 300u);
    absl::StatusOr<DeviceMemoryReservation> b = ReserveDeviceMemoryWithin(kGpu, 200, 1000, "b");
    ASSERT_TRUE(b.ok());
    again = *std::move(b);  // gives back the 300 it held
    EXPECT_EQ(DeviceMemoryAdmitted(kGpu), 200u);
  }
  EXPECT_EQ(DeviceMemoryAdmitted(kGpu), 0u);
}

TEST(DeviceMemoryTest, GpusAreCountedApart) {
  absl::StatusOr<DeviceMemoryReservation> a = ReserveDeviceMemoryWithin(14, 1000, 1000, "a");
  ASSERT_TRUE(a.ok());
  absl::StatusOr<DeviceMemoryReservation> b = ReserveDeviceMemoryWithin(15, 1000, 1000, "b");
  EXPECT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(DeviceMemoryAdmitted(14), 1000u);
  EXPECT_EQ(DeviceMemoryAdmitted(15), 1000u);
}

// The runtime's entry point takes the operator's limit (max_device_bytes) without
// asking a device, so this runs on machines without one.
TEST(DeviceMemoryTest, ReserveDeviceMemoryUsesTheOperatorsLimit) {
  RuntimeConfig config = GetRuntimeConfig();
  config.max_device_bytes = 5000;
  SetRuntimeConfig(config);
  constexpr int kGpu = 16;
  absl::StatusOr<DeviceMemoryReservation> decoder = ReserveDeviceMemory(kGpu, 4000, "the GPU decoder of ref.mkv");
  ASSERT_TRUE(decoder.ok()) << decoder.status();
  absl::StatusOr<DeviceMemoryReservation> second = ReserveDeviceMemory(kGpu, 1001, "the GPU decoder of dist.mkv");
  ASSERT_EQ(second.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(second.status().message(),
            "device memory: the GPU decoder of dist.mkv needs about 1001 bytes on cuda:16, 4000 are admitted "
            "already, limit max_device_bytes=5000");
}

}  // namespace
}  // namespace exactq
