// A ScoreRequest carrying one FrameChunk, built as a gRPC message whose data is not
// copied: a small slice with the chunk's numbers, then a slice that points into the
// picture. gRPC sends slices as they are, so a picture's bytes are copied only by the
// kernel; the picture must stay unchanged until gRPC lets go of every slice into it,
// which PictureRefs counts.
//
//   PictureRefs refs;
//   grpc::ByteBuffer message = ChunkMessage({index, v1::PICTURE_REFERENCE, offset, last},
//                                           frame.bytes() + offset, n, &refs);
//   stream->Write(message);
//   ...
//   refs.WaitUntilUnused();  // before the frame's buffer is read into again
//
// On the wire the fields come in the order 1, 2, 3, 5, 4 (data last); a protobuf parser
// reads fields in any order, so the message is the same ScoreRequest.
#ifndef EXACTQ_CLIENT_CHUNK_MESSAGE_H_
#define EXACTQ_CLIENT_CHUNK_MESSAGE_H_

#include <grpcpp/support/byte_buffer.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "exactq/v1/exactq.pb.h"

namespace exactq::client {

// Counts the slices gRPC still holds into one picture buffer.
class PictureRefs {
 public:
  void Acquire();
  void Release();
  // Blocks until gRPC holds no slice into the buffer.
  void WaitUntilUnused();
  // The same, for at most `limit`: false when slices are still held.
  bool WaitUntilUnusedFor(std::chrono::milliseconds limit);
  int in_use() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable unused_;
  int count_ = 0;
};

struct ChunkFields {
  uint64_t frame_index = 0;
  v1::Picture picture = v1::PICTURE_UNSPECIFIED;
  uint64_t offset = 0;
  bool last = false;
};

// The message; `data` (n bytes) is referenced, not copied, and counted in *refs until
// gRPC releases it.
grpc::ByteBuffer ChunkMessage(const ChunkFields& fields, const uint8_t* data, size_t n, PictureRefs* refs);

}  // namespace exactq::client

#endif  // EXACTQ_CLIENT_CHUNK_MESSAGE_H_
