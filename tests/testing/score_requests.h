// Requests the integration tests send: one whole picture of a frame as one chunk.
//
//   stream->Write(WholePictureChunk(f, v1::PICTURE_REFERENCE, ref.bytes(), ref.size_bytes()));
#ifndef EXACTQ_TESTS_TESTING_SCORE_REQUESTS_H_
#define EXACTQ_TESTS_TESTING_SCORE_REQUESTS_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "exactq/v1/exactq.pb.h"

namespace exactq {

inline v1::ScoreRequest WholePictureChunk(uint64_t frame_index, v1::Picture picture, const void* data, size_t size) {
  v1::ScoreRequest r;
  r.mutable_chunk()->set_frame_index(frame_index);
  r.mutable_chunk()->set_picture(picture);
  r.mutable_chunk()->set_data(data, size);
  r.mutable_chunk()->set_last(true);
  return r;
}

inline v1::ScoreRequest WholePictureChunk(uint64_t frame_index, v1::Picture picture, std::string_view bytes) {
  return WholePictureChunk(frame_index, picture, bytes.data(), bytes.size());
}

}  // namespace exactq

#endif  // EXACTQ_TESTS_TESTING_SCORE_REQUESTS_H_
