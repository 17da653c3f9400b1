#include "server/chunk_wire.h"

#include <random>
#include <string>
#include <vector>

#include "exactq/v1/exactq.pb.h"
#include "gtest/gtest.h"

namespace exactq::server {
namespace {

// `bytes` cut at `cuts` (sorted positions) into pieces.
std::vector<absl::Span<const uint8_t>> Cut(const std::string& bytes, const std::vector<size_t>& cuts) {
  std::vector<absl::Span<const uint8_t>> pieces;
  size_t begin = 0;
  for (size_t cut : cuts) {
    pieces.emplace_back(reinterpret_cast<const uint8_t*>(bytes.data()) + begin, cut - begin);
    begin = cut;
  }
  pieces.emplace_back(reinterpret_cast<const uint8_t*>(bytes.data()) + begin, bytes.size() - begin);
  return pieces;
}

std::string Joined(const ChunkWireView& view) {
  std::string out;
  for (absl::Span<const uint8_t> piece : view.data)
    out.append(reinterpret_cast<const char*>(piece.data()), piece.size());
  return out;
}

// Every field value protobuf would read, through any cut of the message into pieces.
TEST(ChunkWireTest, ReadsWhatProtobufReadsWhereverTheMessageIsCut) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    v1::ScoreRequest request;
    v1::FrameChunk* chunk = request.mutable_chunk();
    if (rng() % 4) chunk->set_frame_index(rng() % 3 == 0 ? rng() : (uint64_t{rng()} << 32) | rng());
    if (rng() % 4) chunk->set_picture(static_cast<v1::Picture>(rng() % 3));
    if (rng() % 4) chunk->set_offset(rng() % 2 ? rng() % 300 : uint64_t{rng()} << 20);
    if (rng() % 4) chunk->set_last(rng() % 2);
    std::string data(rng() % 5 == 0 ? 0 : rng() % 3000, '\0');
    for (char& c : data) c = static_cast<char>(rng());
    chunk->set_data(data);
    const std::string bytes = request.SerializeAsString();
    std::vector<size_t> cuts;
    for (size_t i = 1; i < bytes.size(); ++i) {
      if (rng() % 97 == 0 || (trial % 7 == 0 && rng() % 2)) cuts.push_back(i);
    }
    ChunkWireView view;
    ASSERT_TRUE(ReadChunkRequest(Cut(bytes, cuts), &view)) << trial;
    EXPECT_EQ(view.frame_index, chunk->frame_index());
    EXPECT_EQ(view.picture, chunk->picture());
    EXPECT_EQ(view.offset, chunk->offset());
    EXPECT_EQ(view.last, chunk->last());
    EXPECT_EQ(view.data_size, data.size());
    EXPECT_EQ(Joined(view), data);
    // In place: every data span lies inside the received bytes, none is a copy.
    const uint8_t* first = reinterpret_cast<const uint8_t*>(bytes.data());
    for (absl::Span<const uint8_t> piece : view.data) {
      EXPECT_TRUE(piece.data() >= first && piece.data() + piece.size() <= first + bytes.size()) << trial;
    }
  }
}

TEST(ChunkWireTest, LeavesEveryOtherShapeToProtobuf) {
  ChunkWireView view;
  auto read = [&](const std::string& bytes) { return ReadChunkRequest(Cut(bytes, {}), &view); };
  v1::ScoreRequest header;
  header.mutable_header()->set_job_id("j");
  EXPECT_FALSE(read(header.SerializeAsString()));
  v1::ScoreRequest encoded;
  encoded.mutable_encoded_chunk()->set_data("xyz");
  EXPECT_FALSE(read(encoded.SerializeAsString()));
  EXPECT_FALSE(read(""));  // no kind
  // chunk {frame_index: 1, data: "ab"} as bytes, then variations of it.
  const std::string inner = std::string(
      "\x08\x01\x22\x02"
      "ab",
      6);
  const std::string good = std::string("\x12\x06", 2) + inner;
  ASSERT_TRUE(read(good));
  EXPECT_EQ(Joined(view), "ab");
  EXPECT_FALSE(read(std::string("\x12\x08", 2) + inner + std::string("\x08\x02", 2)));  // frame_index twice
  EXPECT_FALSE(read(std::string("\x12\x08", 2) + inner + std::string("\x30\x01", 2)));  // unknown field 6
  EXPECT_FALSE(read(std::string("\x12\x07", 2) +
                    std::string("\x09\x01\x22\x02"
                                "ab",
                                6) +
                    "x"));                                                                // fixed64 tag
  EXPECT_FALSE(read(good + std::string("\x12\x00", 2)));                                  // a second chunk field
  EXPECT_FALSE(read(good.substr(0, good.size() - 1)));                                    // truncated data
  EXPECT_FALSE(read(std::string("\x12\x05", 2) + inner));                                 // length short of data
  EXPECT_FALSE(read(std::string("\x12\x0c\x08", 3) + std::string(10, '\xff') + "\x01"));  // an 11-byte varint
}

}  // namespace
}  // namespace exactq::server
