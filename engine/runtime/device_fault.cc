#include "engine/runtime/device_fault.h"

#include <optional>

#include "absl/strings/cord.h"

namespace exactq {

namespace {
// A type URL of our own: payloads are keyed by URL, and this one is never sent on the
// wire (FrameScorer consumes it before a status leaves the engine).
constexpr char kPayloadUrl[] = "type.exactq.dev/engine.runtime.DeviceFault";
}  // namespace

const char* DeviceFaultName(DeviceFault fault) {
  switch (fault) {
    case DeviceFault::kTransient:
      return "transient";
    case DeviceFault::kPoisoned:
      return "poisoned";
    case DeviceFault::kNone:
      break;
  }
  return "none";
}

absl::Status WithDeviceFault(absl::Status status, DeviceFault fault) {
  if (status.ok()) return status;
  if (fault == DeviceFault::kNone) {
    status.ErasePayload(kPayloadUrl);
  } else {
    status.SetPayload(kPayloadUrl, absl::Cord(DeviceFaultName(fault)));
  }
  return status;
}

DeviceFault DeviceFaultOf(const absl::Status& status) {
  const auto payload = status.GetPayload(kPayloadUrl);
  if (!payload.has_value()) return DeviceFault::kNone;
  if (*payload == "poisoned") return DeviceFault::kPoisoned;
  if (*payload == "transient") return DeviceFault::kTransient;
  return DeviceFault::kNone;
}

}  // namespace exactq
