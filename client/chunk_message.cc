#include "client/chunk_message.h"

#include <grpcpp/support/slice.h>

#include <string>

namespace exactq::client {
namespace {

void AppendVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

// Tags: field number << 3 | wire type (0 varint, 2 length-delimited).
constexpr uint8_t kChunkTag = (2 << 3) | 2;  // ScoreRequest.chunk
constexpr uint8_t kFrameIndexTag = (1 << 3) | 0, kPictureTag = (2 << 3) | 0, kOffsetTag = (3 << 3) | 0,
                  kDataTag = (4 << 3) | 2, kLastTag = (5 << 3) | 0;

void ReleaseRefs(void* refs) { static_cast<PictureRefs*>(refs)->Release(); }

}  // namespace

void PictureRefs::Acquire() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++count_;
}

void PictureRefs::Release() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (--count_ == 0) unused_.notify_all();
}

void PictureRefs::WaitUntilUnused() {
  std::unique_lock<std::mutex> lock(mutex_);
  unused_.wait(lock, [this] { return count_ == 0; });
}

bool PictureRefs::WaitUntilUnusedFor(std::chrono::milliseconds limit) {
  std::unique_lock<std::mutex> lock(mutex_);
  return unused_.wait_for(lock, limit, [this] { return count_ == 0; });
}

int PictureRefs::in_use() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return count_;
}

grpc::ByteBuffer ChunkMessage(const ChunkFields& fields, const uint8_t* data, size_t n, PictureRefs* refs) {
  // The chunk's fields before its data, proto3 style (zero values left out).
  std::string chunk_head;
  if (fields.frame_index != 0) {
    chunk_head.push_back(static_cast<char>(kFrameIndexTag));
    AppendVarint(fields.frame_index, &chunk_head);
  }
  if (fields.picture != 0) {
    chunk_head.push_back(static_cast<char>(kPictureTag));
    AppendVarint(static_cast<uint64_t>(static_cast<int64_t>(fields.picture)), &chunk_head);
  }
  if (fields.offset != 0) {
    chunk_head.push_back(static_cast<char>(kOffsetTag));
    AppendVarint(fields.offset, &chunk_head);
  }
  if (fields.last) {
    chunk_head.push_back(static_cast<char>(kLastTag));
    chunk_head.push_back(1);
  }
  if (n != 0) {
    chunk_head.push_back(static_cast<char>(kDataTag));
    AppendVarint(n, &chunk_head);
  }
  std::string head(1, static_cast<char>(kChunkTag));
  AppendVarint(chunk_head.size() + n, &head);
  head += chunk_head;
  if (n == 0) {
    grpc::Slice only(head);
    return grpc::ByteBuffer(&only, 1);
  }
  refs->Acquire();
  grpc::Slice slices[2] = {grpc::Slice(head),
                           grpc::Slice(const_cast<uint8_t*>(data), n, &ReleaseRefs, static_cast<void*>(refs))};
  return grpc::ByteBuffer(slices, 2);
}

}  // namespace exactq::client
