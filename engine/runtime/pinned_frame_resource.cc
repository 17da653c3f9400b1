#include "engine/runtime/pinned_frame_resource.h"

#include <utility>

namespace exactq {

namespace {
// Page-locked blocks start on a page; a stricter alignment goes to ordinary memory.
constexpr size_t kPageBytes = 4096;
}  // namespace

PinnedFrameResource::PinnedFrameResource(std::unique_ptr<HostPageLocker> locker, uint64_t limit_bytes,
                                         std::pmr::memory_resource* fallback)
    : locker_(std::move(locker)), fallback_(fallback) {
  stats_.limit_bytes = limit_bytes;
}

PinnedFrameResource::~PinnedFrameResource() {
  for (auto& [size, blocks] : kept_) FreeBlocks(blocks);
}

void PinnedFrameResource::set_limit(uint64_t limit_bytes) {
  std::vector<void*> evicted;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.limit_bytes = limit_bytes;
    for (auto& [size, blocks] : kept_) {
      while (!blocks.empty() && stats_.pinned_bytes > limit_bytes) {
        evicted.push_back(blocks.back());
        blocks.pop_back();
        stats_.pinned_bytes -= size;
      }
    }
  }
  FreeBlocks(evicted);
}

PinnedFrameStats PinnedFrameResource::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

bool PinnedFrameResource::IsPinnedBlock(const void* p) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return in_use_.count(p) > 0;
}

bool PinnedFrameResource::MakeRoomLocked(size_t bytes, std::vector<void*>* evicted) {
  if (bytes > stats_.limit_bytes) return false;
  const uint64_t room = stats_.limit_bytes - bytes;
  uint64_t kept_bytes = 0;
  for (const auto& [size, blocks] : kept_) kept_bytes += size * blocks.size();
  if (stats_.pinned_bytes - kept_bytes > room) return false;  // frames hold too much
  // Largest kept blocks first: fewest driver calls to make room.
  for (auto it = kept_.rbegin(); it != kept_.rend() && stats_.pinned_bytes > room; ++it) {
    while (!it->second.empty() && stats_.pinned_bytes > room) {
      evicted->push_back(it->second.back());
      it->second.pop_back();
      stats_.pinned_bytes -= it->first;
    }
  }
  return true;
}

void* PinnedFrameResource::do_allocate(size_t bytes, size_t alignment) {
  std::vector<void*> evicted;
  bool reserved = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (alignment <= kPageBytes && bytes > 0) {
      auto kept = kept_.find(bytes);
      if (kept != kept_.end() && !kept->second.empty()) {
        void* block = kept->second.back();
        kept->second.pop_back();
        in_use_[block] = bytes;
        stats_.in_use_bytes += bytes;
        ++stats_.reuses;
        return block;
      }
      if (!stats_.disabled && MakeRoomLocked(bytes, &evicted)) {
        stats_.pinned_bytes += bytes;  // reserved while the driver call runs unlocked
        reserved = true;
      }
    }
    if (!reserved) ++stats_.fallbacks;
  }
  FreeBlocks(evicted);
  if (!reserved) return fallback_->allocate(bytes, alignment);

  bool permanent = false;
  void* block = locker_->Allocate(bytes, &permanent);
  std::lock_guard<std::mutex> lock(mutex_);
  if (block == nullptr) {
    stats_.pinned_bytes -= bytes;
    ++stats_.fallbacks;
    if (permanent) stats_.disabled = true;
    return fallback_->allocate(bytes, alignment);
  }
  in_use_[block] = bytes;
  stats_.in_use_bytes += bytes;
  ++stats_.page_locks;
  return block;
}

void PinnedFrameResource::do_deallocate(void* p, size_t bytes, size_t alignment) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto it = in_use_.find(p);
  if (it == in_use_.end()) {
    lock.unlock();
    fallback_->deallocate(p, bytes, alignment);
    return;
  }
  const size_t size = it->second;
  in_use_.erase(it);
  stats_.in_use_bytes -= size;
  if (stats_.pinned_bytes <= stats_.limit_bytes) {
    kept_[size].push_back(p);  // the next frame of this size takes it
    return;
  }
  stats_.pinned_bytes -= size;  // over a lowered limit: give it back
  lock.unlock();
  locker_->Free(p);
}

void PinnedFrameResource::FreeBlocks(const std::vector<void*>& blocks) {
  for (void* block : blocks) locker_->Free(block);
}

}  // namespace exactq
