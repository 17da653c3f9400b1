// PinnedFrameResource: a std::pmr::memory_resource of page-locked host blocks for frame
// buffers, so the GPU copies frames straight from them (no pageable->pinned staging copy).
//
// Page-locking costs milliseconds per call, so blocks are never returned to the system
// per frame: a freed block is kept, by size, for the next frame of that size (a stream's
// frames all have one size). The bytes page-locked at once (in use + kept) never exceed
// a limit; a request beyond it first frees kept blocks of other sizes, and otherwise,
// like a failed page-lock, is served from ordinary memory (counted as a fallback), so an
// allocation never fails for want of page-locked memory. Thread-safe.
//
// Plain C++: how pages are locked is a HostPageLocker (cudaHostAlloc in a CUDA build,
// pinned_frame_memory.h; a stand-in in tests).
#ifndef EXACTQ_ENGINE_RUNTIME_PINNED_FRAME_RESOURCE_H_
#define EXACTQ_ENGINE_RUNTIME_PINNED_FRAME_RESOURCE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace exactq {

class HostPageLocker {
 public:
  virtual ~HostPageLocker() = default;
  // A page-locked block of `bytes` (page-aligned), or nullptr. *permanent: set when no
  // later call can succeed either (no driver, no device), so the resource stops asking.
  virtual void* Allocate(size_t bytes, bool* permanent) = 0;
  virtual void Free(void* block) = 0;
};

struct PinnedFrameStats {
  uint64_t limit_bytes = 0;
  uint64_t pinned_bytes = 0;  // page-locked now: in use + kept for reuse
  uint64_t in_use_bytes = 0;  // page-locked and held by frames
  uint64_t page_locks = 0;    // blocks page-locked so far (each cost a driver call)
  uint64_t reuses = 0;        // allocations served from a kept block
  uint64_t fallbacks = 0;     // allocations served from ordinary memory
  bool disabled = false;      // page-locking failed for good (no GPU or driver)
};

class PinnedFrameResource final : public std::pmr::memory_resource {
 public:
  PinnedFrameResource(std::unique_ptr<HostPageLocker> locker, uint64_t limit_bytes,
                      std::pmr::memory_resource* fallback = std::pmr::new_delete_resource());
  // Frees the kept blocks; every block must have been deallocated first.
  ~PinnedFrameResource() override;
  PinnedFrameResource(const PinnedFrameResource&) = delete;
  PinnedFrameResource& operator=(const PinnedFrameResource&) = delete;

  // A lower limit frees kept blocks now and blocks in use as they come back.
  void set_limit(uint64_t limit_bytes);
  PinnedFrameStats stats() const;
  // Whether p is a block this resource page-locked and handed out.
  bool IsPinnedBlock(const void* p) const;

 private:
  void* do_allocate(size_t bytes, size_t alignment) override;
  void do_deallocate(void* p, size_t bytes, size_t alignment) override;
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }

  // Takes kept blocks (other sizes first) until `bytes` more fit under the limit; the
  // caller frees them outside the lock. False when they cannot fit.
  bool MakeRoomLocked(size_t bytes, std::vector<void*>* evicted);
  void FreeBlocks(const std::vector<void*>& blocks);

  const std::unique_ptr<HostPageLocker> locker_;
  std::pmr::memory_resource* const fallback_;
  mutable std::mutex mutex_;
  PinnedFrameStats stats_;
  std::map<size_t, std::vector<void*>> kept_;       // by size
  std::unordered_map<const void*, size_t> in_use_;  // block -> size
};

}  // namespace exactq

#endif  // EXACTQ_ENGINE_RUNTIME_PINNED_FRAME_RESOURCE_H_
