#include "server/chunk_wire.h"

#include <algorithm>

namespace exactq::server {
namespace {

// Reads across the pieces of one message.
class PieceReader {
 public:
  explicit PieceReader(BytePieces pieces) : pieces_(pieces) { SkipEmpty(); }

  uint64_t position() const { return position_; }

  bool ReadByte(uint8_t* byte) {
    if (piece_ >= pieces_.size()) return false;
    *byte = pieces_[piece_][offset_];
    Advance(1);
    return true;
  }

  // A base-128 varint of at most 10 bytes.
  bool ReadVarint(uint64_t* value) {
    *value = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      uint8_t byte;
      if (!ReadByte(&byte)) return false;
      if (shift == 63 && byte > 1) return false;  // more than 64 bits
      *value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  }

  // The next n bytes as pieces.
  bool Take(uint64_t n, std::vector<absl::Span<const uint8_t>>* out) {
    while (n > 0) {
      if (piece_ >= pieces_.size()) return false;
      const uint64_t here = std::min<uint64_t>(n, pieces_[piece_].size() - offset_);
      out->push_back(pieces_[piece_].subspan(offset_, here));
      Advance(here);
      n -= here;
    }
    return true;
  }

  bool AtEnd() const { return piece_ >= pieces_.size(); }

 private:
  void Advance(uint64_t n) {
    offset_ += n;
    position_ += n;
    if (offset_ == pieces_[piece_].size()) {
      ++piece_;
      offset_ = 0;
      SkipEmpty();
    }
  }
  void SkipEmpty() {
    while (piece_ < pieces_.size() && pieces_[piece_].empty()) ++piece_;
  }

  BytePieces pieces_;
  size_t piece_ = 0;
  uint64_t offset_ = 0;
  uint64_t position_ = 0;
};

constexpr uint8_t kVarint = 0, kLengthDelimited = 2;

}  // namespace

bool ReadChunkRequest(BytePieces message, ChunkWireView* view) {
  *view = ChunkWireView{};
  PieceReader in(message);
  uint64_t tag = 0, length = 0;
  // ScoreRequest: field 2 (chunk), length-delimited, and nothing after it.
  if (!in.ReadVarint(&tag) || tag != ((2u << 3) | kLengthDelimited) || !in.ReadVarint(&length)) return false;
  const uint64_t end = in.position() + length;
  bool seen[6] = {};
  while (in.position() < end) {
    if (!in.ReadVarint(&tag)) return false;
    const uint64_t field = tag >> 3;
    const uint64_t wire_type = tag & 7;
    if (field < 1 || field > 5 || seen[field]) return false;
    seen[field] = true;
    if (field == 4) {
      if (wire_type != kLengthDelimited || !in.ReadVarint(&length) || in.position() + length > end) return false;
      if (!in.Take(length, &view->data)) return false;
      view->data_size = length;
      continue;
    }
    uint64_t value = 0;
    if (wire_type != kVarint || !in.ReadVarint(&value)) return false;
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
  return in.position() == end && in.AtEnd();
}

}  // namespace exactq::server
