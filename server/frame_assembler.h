// Reassembles the FrameChunks of a stream into whole pictures, enforcing the chunk
// addressing rules of exactq.v1 (see proto/exactq/v1/exactq.proto, "CHUNKS"): frames
// in index order, each picture's chunks in order with contiguous offsets, `last` on
// the chunk that completes the picture. It copies bytes and never looks at samples.
//
// Pictures are allocated from a memory resource: exactqd passes PinnedFrameMemory(), so
// the GPU reads them straight from page-locked memory (no second host copy).
//
//   FrameAssembler assembler(geometry, limits.max_chunk_bytes, PinnedFrameMemory());
//   absl::Status s = assembler.Add(chunk);       // INVALID_ARGUMENT naming the field
//   if (assembler.FrameReady()) { AssembledFrame f = assembler.TakeFrame(); ... }
#ifndef EXACTQ_SERVER_FRAME_ASSEMBLER_H_
#define EXACTQ_SERVER_FRAME_ASSEMBLER_H_

#include <chrono>
#include <cstdint>
#include <memory_resource>
#include <vector>

#include "absl/status/status.h"
#include "engine/format/frame.h"
#include "exactq/v1/exactq.pb.h"
#include "server/chunk_wire.h"

namespace exactq::server {

using Clock = std::chrono::steady_clock;

struct AssembledFrame {
  uint64_t index = 0;
  Frame reference;  // filled with plain copies of the chunks' bytes
  Frame distorted;
  Clock::time_point first_chunk;  // arrival of the frame's first chunk
  Clock::time_point last_chunk;   // arrival of the chunk that completed it
};

class FrameAssembler {
 public:
  // The geometry must be valid (checked when the header was accepted).
  FrameAssembler(const FrameGeometry& geometry, uint64_t max_chunk_bytes,
                 std::pmr::memory_resource* frame_memory = std::pmr::get_default_resource());

  // Adds one chunk; an error names the offending field and leaves the assembler unusable.
  absl::Status Add(const v1::FrameChunk& chunk, Clock::time_point arrival);
  // The same with the chunk's data given apart, in pieces (RequestStream::chunk_data);
  // chunk.data() is then not read.
  absl::Status Add(const v1::FrameChunk& chunk, ChunkBytes data, Clock::time_point arrival);
  bool FrameReady() const;
  AssembledFrame TakeFrame();
  // Hands a scored frame's buffers back, so the next frame reuses them instead of
  // allocating (and zero-filling) two fresh pictures per frame.
  void Recycle(AssembledFrame&& frame);
  // True when some chunks of a frame arrived but the frame is not complete.
  bool HasPartialFrame() const;
  uint64_t next_frame_index() const { return current_.index; }

 private:
  struct PictureState {
    bool started = false;
    bool complete = false;
    uint64_t received = 0;  // bytes so far; the next chunk's offset
  };

  void StartFrame(uint64_t index);

  FrameGeometry geometry_;
  uint64_t picture_bytes_;
  uint64_t max_chunk_bytes_;
  std::pmr::memory_resource* frame_memory_;
  AssembledFrame current_;
  PictureState reference_state_;
  PictureState distorted_state_;
};

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_FRAME_ASSEMBLER_H_
