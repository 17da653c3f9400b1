// What a failed GPU call means for the device it ran on, carried inside the
// absl::Status that reports the failure (a payload), so that the code deciding about
// devices (DevicePool, FrameScorer) is plain C++ and never sees a CUDA error code.
//
//   kNone       not the device's fault: bad input, an admission limit, no twin.
//   kTransient  a launch, copy or allocation failed but the CUDA context still works:
//               the device leaves the pool for a while and is tried again.
//   kPoisoned   a sticky error (illegal address, launch failure, ECC, device off the
//               bus): the process's context on that device is unusable until the
//               process exits, so the device stays out for good.
//
//   absl::Status s = WithDeviceFault(absl::InternalError("..."), DeviceFault::kPoisoned);
//   DeviceFaultOf(s) == DeviceFault::kPoisoned
#ifndef EXACTQ_ENGINE_RUNTIME_DEVICE_FAULT_H_
#define EXACTQ_ENGINE_RUNTIME_DEVICE_FAULT_H_

#include "absl/status/status.h"

namespace exactq {

enum class DeviceFault { kNone, kTransient, kPoisoned };

const char* DeviceFaultName(DeviceFault fault);  // "none", "transient", "poisoned"

// `status` (not OK) tagged with `fault`; an OK status is returned unchanged.
absl::Status WithDeviceFault(absl::Status status, DeviceFault fault);

// The tag set by WithDeviceFault; kNone for untagged and OK statuses.
DeviceFault DeviceFaultOf(const absl::Status& status);

}  // namespace exactq

#endif  // EXACTQ_ENGINE_RUNTIME_DEVICE_FAULT_H_
