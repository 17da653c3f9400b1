#include "client/chunk_message.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <grpcpp/support/slice.h>

#include <string>

namespace exactq::client {
namespace {

// Tags: field number << 3 | wire type (0 varint, 2 length-delimited).
constexpr uint32_t kChunkTag = (2 << 3) | 2;  // ScoreRequest.chunk
constexpr uint32_t kFrameIndexTag = (1 << 3) | 0, kPictureTag = (2 << 3) | 0, kOffsetTag = (3 << 3) | 0,
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
  // The chunk's fields before its data, proto3 style (zero values left out), written by
  // protobuf's encoder; the data itself goes as a slice of the picture.
  std::string chunk_head;
  {
    google::protobuf::io::StringOutputStream stream(&chunk_head);
    google::protobuf::io::CodedOutputStream out(&stream);
    if (fields.frame_index != 0) {
      out.WriteTag(kFrameIndexTag);
      out.WriteVarint64(fields.frame_index);
    }
    if (fields.picture != 0) {
      out.WriteTag(kPictureTag);
      out.WriteVarint64(static_cast<uint64_t>(static_cast<int64_t>(fields.picture)));
    }
    if (fields.offset != 0) {
      out.WriteTag(kOffsetTag);
      out.WriteVarint64(fields.offset);
    }
    if (fields.last) {
      out.WriteTag(kLastTag);
      out.WriteVarint32(1);
    }
    if (n != 0) {
      out.WriteTag(kDataTag);
      out.WriteVarint64(n);
    }
  }  // the encoder flushes into chunk_head here
  std::string head;
  {
    google::protobuf::io::StringOutputStream stream(&head);
    google::protobuf::io::CodedOutputStream out(&stream);
    out.WriteTag(kChunkTag);
    out.WriteVarint64(chunk_head.size() + n);
    out.WriteRaw(chunk_head.data(), static_cast<int>(chunk_head.size()));
  }
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
