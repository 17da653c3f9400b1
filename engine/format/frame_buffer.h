// FrameBuffer: a Frame's storage, 16-bit words from a std::pmr::memory_resource.
//
// Not a std::pmr::vector because a vector's move assignment between different
// resources copies element by element; a frame's move must always hand over the
// buffer (the server recycles page-locked buffers by moving frames around), so here a
// move takes the buffer and its resource, whatever the target held. A copy allocates
// from the default resource, as a pmr container's copy does; copy assignment keeps the
// target's resource.
#ifndef EXACTQ_ENGINE_FORMAT_FRAME_BUFFER_H_
#define EXACTQ_ENGINE_FORMAT_FRAME_BUFFER_H_

#include <cstddef>
#include <cstdint>
#include <memory_resource>

namespace exactq {

class FrameBuffer {
 public:
  explicit FrameBuffer(std::pmr::memory_resource* resource = std::pmr::get_default_resource()) : resource_(resource) {}
  ~FrameBuffer() { Release(); }
  FrameBuffer(const FrameBuffer& other);
  FrameBuffer& operator=(const FrameBuffer& other);
  FrameBuffer(FrameBuffer&& other) noexcept;
  FrameBuffer& operator=(FrameBuffer&& other) noexcept;

  // As std::vector::resize: keeps the first min(size, words) words, zero-fills the rest,
  // reallocates only when words exceed the capacity.
  void resize(size_t words);

  uint16_t* data() { return data_; }
  const uint16_t* data() const { return data_; }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  std::pmr::memory_resource* resource() const { return resource_; }

 private:
  void Release();

  std::pmr::memory_resource* resource_;
  uint16_t* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace exactq

#endif  // EXACTQ_ENGINE_FORMAT_FRAME_BUFFER_H_
