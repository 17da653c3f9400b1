// A ScoreRequest that carries one FrameChunk, read straight from its wire bytes: the
// chunk's numbers, and its data as pieces of the received buffers, so the frame
// assembler copies the picture bytes once (protobuf's parse would copy them into a
// string first; on a raw 4K stream that is a tenth of the server's CPU time).
//
// Only the common shape is read here: the message is exactly field `chunk` (2), and the
// chunk holds fields 1 to 5, each at most once, with their declared wire types. Anything
// else (a header, an encoded chunk, unknown or repeated fields, a malformed message) is
// left to protobuf, which gives it its usual meaning or error.
#ifndef EXACTQ_SERVER_CHUNK_WIRE_H_
#define EXACTQ_SERVER_CHUNK_WIRE_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace exactq::server {

using BytePieces = absl::Span<const absl::Span<const uint8_t>>;

// A chunk's data: its pieces and their total size.
struct ChunkBytes {
  BytePieces pieces;
  uint64_t size = 0;
};

struct ChunkWireView {
  uint64_t frame_index = 0;
  int32_t picture = 0;  // the v1::Picture value
  uint64_t offset = 0;
  bool last = false;
  std::vector<absl::Span<const uint8_t>> data;  // pieces of `message`, in order
  uint64_t data_size = 0;
};

// True when `message` (a serialized ScoreRequest, in pieces) is the shape above; *view
// then holds its fields. False: parse it with protobuf.
bool ReadChunkRequest(BytePieces message, ChunkWireView* view);

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_CHUNK_WIRE_H_
