#include "engine/runtime/device_fault.h"

#include "gtest/gtest.h"

namespace exactq {
namespace {

TEST(DeviceFaultTest, TagsTravelInTheStatusAndKeepItsCodeAndMessage) {
  const absl::Status poisoned =
      WithDeviceFault(absl::InternalError("launch: cudaErrorIllegalAddress"), DeviceFault::kPoisoned);
  EXPECT_EQ(DeviceFaultOf(poisoned), DeviceFault::kPoisoned);
  EXPECT_EQ(poisoned.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(poisoned.message(), "launch: cudaErrorIllegalAddress");
  // Copies carry the tag (statuses are passed up by value).
  const absl::Status copy = poisoned;
  EXPECT_EQ(DeviceFaultOf(copy), DeviceFault::kPoisoned);
  EXPECT_EQ(DeviceFaultOf(WithDeviceFault(poisoned, DeviceFault::kTransient)), DeviceFault::kTransient);
  EXPECT_EQ(DeviceFaultOf(WithDeviceFault(poisoned, DeviceFault::kNone)), DeviceFault::kNone);
}

TEST(DeviceFaultTest, UntaggedAndOkStatusesAreNotTheDevicesFault) {
  EXPECT_EQ(DeviceFaultOf(absl::InternalError("x")), DeviceFault::kNone);
  EXPECT_EQ(DeviceFaultOf(absl::OkStatus()), DeviceFault::kNone);
  EXPECT_TRUE(WithDeviceFault(absl::OkStatus(), DeviceFault::kPoisoned).ok());
  EXPECT_STREQ(DeviceFaultName(DeviceFault::kTransient), "transient");
}

}  // namespace
}  // namespace exactq
