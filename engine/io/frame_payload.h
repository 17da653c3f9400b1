// ReadFramePayload: reads one frame's pixel bytes from a stream straight into a Frame.
//
// Shared by the Y4M and raw readers, which differ only in what precedes the pixels.
// A frame is read whole or reported as truncated; nothing is ever read past it, so
// input arrives frame by frame and a file is never held in memory at once.

#ifndef EXACTQ_ENGINE_IO_FRAME_PAYLOAD_H_
#define EXACTQ_ENGINE_IO_FRAME_PAYLOAD_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "engine/format/frame.h"
#include "engine/io/file_handle.h"

namespace exactq {

// Fills frame->mutable_bytes() (the frame already has its geometry) from `file`.
// Returns true when the frame was read whole. Returns false when the stream ended
// before the frame's first byte and `end_allowed` is set (a clean end of stream).
// A partial frame is DataLoss naming `frame_index`; a read error keeps its errno code.
absl::StatusOr<bool> ReadFramePayload(FileHandle& file, int64_t frame_index, bool end_allowed, Frame* frame);

}  // namespace exactq

#endif  // EXACTQ_ENGINE_IO_FRAME_PAYLOAD_H_
