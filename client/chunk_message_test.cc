#include "client/chunk_message.h"

#include <grpcpp/impl/codegen/proto_utils.h>

#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace exactq::client {
namespace {

// The message parsed by protobuf is the ScoreRequest protobuf would have serialized.
TEST(ChunkMessageTest, ParsesAsTheSameScoreRequest) {
  std::mt19937 rng(3);
  PictureRefs refs;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<uint8_t> picture(rng() % 4 == 0 ? 0 : rng() % 5000);
    for (uint8_t& b : picture) b = static_cast<uint8_t>(rng());
    ChunkFields f;
    f.frame_index = rng() % 3 == 0 ? 0 : (uint64_t{rng()} << (rng() % 32)) | rng();
    f.picture = static_cast<v1::Picture>(rng() % 3);
    f.offset = rng() % 2 ? 0 : rng();
    f.last = rng() % 2;
    v1::ScoreRequest want;
    want.mutable_chunk()->set_frame_index(f.frame_index);
    want.mutable_chunk()->set_picture(f.picture);
    want.mutable_chunk()->set_offset(f.offset);
    want.mutable_chunk()->set_last(f.last);
    want.mutable_chunk()->set_data(picture.data(), picture.size());
    {
      grpc::ByteBuffer message = ChunkMessage(f, picture.data(), picture.size(), &refs);
      EXPECT_EQ(message.Length(), want.ByteSizeLong());
      v1::ScoreRequest got;
      const grpc::Status parsed = grpc::GenericDeserialize<grpc::ProtoBufferReader, v1::ScoreRequest>(&message, &got);
      ASSERT_TRUE(parsed.ok()) << parsed.error_message();
      EXPECT_EQ(got.SerializeAsString(), want.SerializeAsString()) << trial;
    }
    EXPECT_EQ(refs.in_use(), 0) << "the data slice is released with the message";
  }
}

// The picture stays counted while any copy of the message holds it.
TEST(ChunkMessageTest, ThePictureIsCountedUntilEveryHolderLetsGo) {
  PictureRefs refs;
  std::vector<uint8_t> picture(1000, 7);
  grpc::ByteBuffer first = ChunkMessage({1, v1::PICTURE_DISTORTED, 0, true}, picture.data(), picture.size(), &refs);
  EXPECT_EQ(refs.in_use(), 1);
  {
    grpc::ByteBuffer copy(first);  // shares the slices
    first.Clear();
    EXPECT_EQ(refs.in_use(), 1);
  }
  EXPECT_EQ(refs.in_use(), 0);
  refs.WaitUntilUnused();  // returns at once
}

}  // namespace
}  // namespace exactq::client
