#include "engine/format/frame.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace exactq {

absl::StatusOr<Frame> Frame::Create(const FrameGeometry& geometry, std::pmr::memory_resource* resource) {
  Frame frame;
  frame.words_ = FrameBuffer(resource);
  if (absl::Status status = frame.Reset(geometry); !status.ok()) return status;
  return frame;
}

absl::Status Frame::Reset(const FrameGeometry& geometry) {
  if (absl::Status status = ValidateGeometry(geometry); !status.ok()) return status;
  geometry_ = geometry;
  words_.resize((geometry.frame_bytes() + 1) / 2);
  device_picture_.reset();
  host_bytes_valid_ = true;
  return absl::OkStatus();
}

void Frame::SetDevicePicture(std::shared_ptr<const DevicePicture> picture) {
  device_picture_ = std::move(picture);
  host_bytes_valid_ = device_picture_ == nullptr;
}

absl::Status Frame::CopyDeviceToHost() {
  if (host_bytes_valid()) return absl::OkStatus();
  if (absl::Status s = device_picture_->CopyToHost(mutable_bytes(), size_bytes()); !s.ok()) return s;
  host_bytes_valid_ = true;
  return absl::OkStatus();
}

absl::StatusOr<const Frame*> HostReadable(const Frame& frame, Frame* scratch) {
  if (frame.host_bytes_valid()) return &frame;
  if (absl::Status s = scratch->Reset(frame.geometry()); !s.ok()) return s;
  if (absl::Status s = frame.device_picture()->CopyToHost(scratch->mutable_bytes(), scratch->size_bytes()); !s.ok()) {
    return s;
  }
  return scratch;
}

uint32_t Frame::sample(int plane, int x, int y) const {
  const size_t index = static_cast<size_t>(y) * geometry_.plane_width(plane) + x;
  return geometry_.bytes_per_sample() == 1 ? plane8(plane)[index] : plane16(plane)[index];
}

void Frame::set_sample(int plane, int x, int y, uint32_t value) {
  const size_t index = static_cast<size_t>(y) * geometry_.plane_width(plane) + x;
  if (geometry_.bytes_per_sample() == 1) {
    mutable_plane8(plane)[index] = static_cast<uint8_t>(value);
  } else {
    mutable_plane16(plane)[index] = static_cast<uint16_t>(value);
  }
}

absl::Status ValidateSampleRange(const Frame& frame) {
  const FrameGeometry& geometry = frame.geometry();
  // Every byte or word is legal at 8 and 16 bits.
  if (geometry.format.bit_depth == 8 || geometry.format.bit_depth == 16) {
    return absl::OkStatus();
  }
  const uint16_t max_value = static_cast<uint16_t>(geometry.max_sample_value());
  for (int plane = 0; plane < geometry.plane_count(); ++plane) {
    const uint16_t* samples = frame.plane16(plane);
    const size_t count = geometry.plane_samples(plane);
    // A branch-free scan for the common (valid) case; locate the culprit only on failure.
    uint16_t largest = 0;
    for (size_t i = 0; i < count; ++i) largest = samples[i] > largest ? samples[i] : largest;
    if (largest <= max_value) continue;
    const int width = geometry.plane_width(plane);
    for (size_t i = 0; i < count; ++i) {
      if (samples[i] > max_value) {
        return absl::InvalidArgumentError(absl::StrCat(
            "sample value ", samples[i], " in plane ", plane, " (", PlaneName(plane), ") at row ", i / width,
            ", column ", i % width, " exceeds ", max_value, ", the largest ", geometry.format.bit_depth, "-bit value"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace exactq
