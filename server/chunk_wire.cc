#include "server/chunk_wire.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <deque>
#include <limits>

namespace exactq::server {
namespace {

using google::protobuf::io::ArrayInputStream;
using google::protobuf::io::CodedInputStream;
using google::protobuf::io::ZeroCopyInputStream;

constexpr uint32_t kVarint = 0, kLengthDelimited = 2;

// The chunk's fields, read by protobuf's decoder from `in` (placed after the chunk's
// length, which ends at `end`); false for any other shape.
bool ReadChunkFields(CodedInputStream& in, int end, ChunkWireView* view) {
  bool seen[6] = {};
  while (in.CurrentPosition() < end) {
    const uint32_t tag = in.ReadTag();
    const uint32_t field = tag >> 3;
    const uint32_t wire_type = tag & 7;
    if (field < 1 || field > 5 || seen[field]) return false;
    seen[field] = true;
    if (field == 4) {
      uint32_t length = 0;
      if (wire_type != kLengthDelimited || !in.ReadVarint32(&length) ||
          static_cast<int64_t>(in.CurrentPosition()) + length > end) {
        return false;
      }
      // The data in place: spans of the buffers the decoder reads from.
      for (uint32_t left = length; left > 0;) {
        const void* data = nullptr;
        int size = 0;
        if (!in.GetDirectBufferPointer(&data, &size)) return false;
        const uint32_t here = std::min<uint32_t>(left, static_cast<uint32_t>(size));
        view->data.emplace_back(static_cast<const uint8_t*>(data), here);
        if (!in.Skip(static_cast<int>(here))) return false;
        left -= here;
      }
      view->data_size = length;
      continue;
    }
    uint64_t value = 0;
    if (wire_type != kVarint || !in.ReadVarint64(&value)) return false;
    switch (field) {
      case 1:
        view->frame_index = value;
        break;
      case 2:
        view->picture = static_cast<int32_t>(value);  // an enum: int32, as protobuf reads it
        break;
      case 3:
        view->offset = value;
        break;
      default:
        view->last = value != 0;
        break;
    }
  }
  return in.CurrentPosition() == end;
}

}  // namespace

bool ReadChunkRequest(BytePieces message, ChunkWireView* view) {
  *view = ChunkWireView{};
  // One stream over the pieces (ArrayInputStream hands out each piece itself, so the
  // data spans point into the received buffers).
  std::deque<ArrayInputStream> arrays;
  std::vector<ZeroCopyInputStream*> streams;
  for (absl::Span<const uint8_t> piece : message) {
    if (piece.empty()) continue;
    streams.push_back(&arrays.emplace_back(piece.data(), static_cast<int>(piece.size())));
  }
  google::protobuf::io::ConcatenatingInputStream joined(streams.data(), static_cast<int>(streams.size()));
  CodedInputStream in(&joined);
  // ScoreRequest: field 2 (chunk), length-delimited, and nothing after it.
  uint32_t length = 0;
  if (in.ReadTag() != ((2u << 3) | kLengthDelimited) || !in.ReadVarint32(&length)) return false;
  const int64_t end = static_cast<int64_t>(in.CurrentPosition()) + length;
  if (end > std::numeric_limits<int>::max()) return false;
  if (!ReadChunkFields(in, static_cast<int>(end), view)) return false;
  return in.ReadTag() == 0 && in.ConsumedEntireMessage();
}

}  // namespace exactq::server
