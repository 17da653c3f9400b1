#include "engine/format/frame_buffer.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace exactq {

namespace {
// Generous alignment for vector loads; page-locking resources give pages anyway.
constexpr size_t kAlignment = 64;
}  // namespace

FrameBuffer::FrameBuffer(const FrameBuffer& other) : resource_(std::pmr::get_default_resource()) {
  resize(other.size_);
  if (size_ > 0) std::memcpy(data_, other.data_, size_ * sizeof(uint16_t));
}

FrameBuffer& FrameBuffer::operator=(const FrameBuffer& other) {
  if (this == &other) return *this;
  if (other.size_ > capacity_) {
    Release();  // nothing to keep: every word is overwritten below
  }
  resize(other.size_);
  if (size_ > 0) std::memcpy(data_, other.data_, size_ * sizeof(uint16_t));
  return *this;
}

FrameBuffer::FrameBuffer(FrameBuffer&& other) noexcept
    : resource_(other.resource_),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      capacity_(std::exchange(other.capacity_, 0)) {}

FrameBuffer& FrameBuffer::operator=(FrameBuffer&& other) noexcept {
  if (this == &other) return *this;
  Release();
  resource_ = other.resource_;
  data_ = std::exchange(other.data_, nullptr);
  size_ = std::exchange(other.size_, 0);
  capacity_ = std::exchange(other.capacity_, 0);
  return *this;
}

void FrameBuffer::resize(size_t words) {
  if (words > capacity_) {
    auto* grown = static_cast<uint16_t*>(resource_->allocate(words * sizeof(uint16_t), kAlignment));
    if (size_ > 0) std::memcpy(grown, data_, size_ * sizeof(uint16_t));
    const size_t kept = size_;
    Release();
    data_ = grown;
    size_ = kept;
    capacity_ = words;
  }
  if (words > size_) std::memset(data_ + size_, 0, (words - size_) * sizeof(uint16_t));
  size_ = words;
}

void FrameBuffer::Release() {
  if (data_ != nullptr) resource_->deallocate(data_, capacity_ * sizeof(uint16_t), kAlignment);
  data_ = nullptr;
  size_ = 0;
  capacity_ = 0;
}

}  // namespace exactq
