// Bad input reaches the real server over loopback: each case gets a precise gRPC
// status naming the field, and the server keeps serving other calls.
#include <grpcpp/grpcpp.h>

#include <string>

#include "exactq/v1/exactq.grpc.pb.h"
#include "gtest/gtest.h"
#include "tests/testing/grpc_probe.h"
#include "tests/testing/server_process.h"

namespace exactq {
namespace {

using v1::ScoreRequest;
using v1::ScoreResponse;

class BadInputTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new exactq::testing::ServerProcess({"--max_chunk_bytes=4096", "--max_width=1024"});
    ASSERT_TRUE(server_->Start()) << server_->log();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  void TearDown() override {
    // Whatever the case did, the server still answers and still scores.
    EXPECT_EQ(exactq::testing::HealthStatus(server_->address()), 1);
    grpc::Status ok = RunStream({Header(4, 4, 8), Chunk(0, v1::PICTURE_REFERENCE, 0, std::string(24, 'a'), true),
                                 Chunk(0, v1::PICTURE_DISTORTED, 0, std::string(24, 'b'), true)},
                                nullptr);
    EXPECT_TRUE(ok.ok()) << ok.error_message();
  }

  static ScoreRequest Header(uint32_t width, uint32_t height, uint32_t bit_depth,
                             const std::string& metric = "psnr") {
    ScoreRequest r;
    v1::StreamHeader* h = r.mutable_header();
    h->set_job_id("bad-input-test");
    h->mutable_geometry()->set_width(width);
    h->mutable_geometry()->set_height(height);
    h->mutable_geometry()->mutable_format()->set_chroma(v1::CHROMA_420);
    h->mutable_geometry()->mutable_format()->set_bit_depth(bit_depth);
    h->add_metrics()->set_name(metric);
    return r;
  }

  static ScoreRequest Chunk(uint64_t frame, v1::Picture picture, uint64_t offset, const std::string& data,
                            bool last) {
    ScoreRequest r;
    v1::FrameChunk* c = r.mutable_chunk();
    c->set_frame_index(frame);
    c->set_picture(picture);
    c->set_offset(offset);
    c->set_data(data);
    c->set_last(last);
    return r;
  }

  // Sends the messages, half-closes, drains the answers; returns the final status.
  static grpc::Status RunStream(const std::vector<ScoreRequest>& messages, std::vector<ScoreResponse>* answers) {
    auto channel = grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials());
    auto stub = v1::Scorer::NewStub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    auto stream = stub->ScoreStream(&context);
    for (const ScoreRequest& m : messages) {
      if (!stream->Write(m)) break;
    }
    stream->WritesDone();
    ScoreResponse response;
    while (stream->Read(&response)) {
      if (answers != nullptr) answers->push_back(response);
    }
    return stream->Finish();
  }

  static void ExpectStatus(const std::vector<ScoreRequest>& messages, grpc::StatusCode code,
                           const std::string& message_part) {
    grpc::Status status = RunStream(messages, nullptr);
    EXPECT_EQ(status.error_code(), code) << status.error_message();
    EXPECT_NE(status.error_message().find(message_part), std::string::npos)
        << "'" << status.error_message() << "' does not contain '" << message_part << "'";
  }

  static exactq::testing::ServerProcess* server_;
};

exactq::testing::ServerProcess* BadInputTest::server_ = nullptr;

TEST_F(BadInputTest, AChunkBeforeTheHeader) {
  ExpectStatus({Chunk(0, v1::PICTURE_REFERENCE, 0, "x", false)}, grpc::StatusCode::INVALID_ARGUMENT,
               "first message of a stream must be a StreamHeader");
}

TEST_F(BadInputTest, AnEmptyStream) {
  ExpectStatus({}, grpc::StatusCode::INVALID_ARGUMENT, "ended before its header");
}

TEST_F(BadInputTest, MalformedHeaders) {
  ExpectStatus({Header(0, 4, 8)}, grpc::StatusCode::INVALID_ARGUMENT, "header.geometry.width");
  ExpectStatus({Header(4, 4, 17)}, grpc::StatusCode::INVALID_ARGUMENT, "header.geometry.format.bit_depth");
  ExpectStatus({Header(4, 4, 8, "no_such_metric")}, grpc::StatusCode::INVALID_ARGUMENT, "no_such_metric");
  ScoreRequest no_chroma = Header(4, 4, 8);
  no_chroma.mutable_header()->mutable_geometry()->mutable_format()->set_chroma(v1::CHROMA_LAYOUT_UNSPECIFIED);
  ExpectStatus({no_chroma}, grpc::StatusCode::INVALID_ARGUMENT, "header.geometry.format.chroma");
  ScoreRequest no_metrics = Header(4, 4, 8);
  no_metrics.mutable_header()->clear_metrics();
  ExpectStatus({no_metrics}, grpc::StatusCode::INVALID_ARGUMENT, "header.metrics");
  ScoreRequest bad_option = Header(4, 4, 8);
  (*bad_option.mutable_header()->mutable_metrics(0)->mutable_options())["bogus"] = "1";
  ExpectStatus({bad_option}, grpc::StatusCode::INVALID_ARGUMENT, "bogus");
}

TEST_F(BadInputTest, LimitsAreResourceExhaustedNamingTheLimit) {
  ExpectStatus({Header(2048, 16, 8)}, grpc::StatusCode::RESOURCE_EXHAUSTED, "max_width=1024");
  ExpectStatus({Header(4, 4, 8), Chunk(0, v1::PICTURE_REFERENCE, 0, std::string(5000, 'a'), false)},
               grpc::StatusCode::RESOURCE_EXHAUSTED, "max_chunk_bytes=4096");
}

TEST_F(BadInputTest, WrongPlaneSizes) {
  // 4x4 4:2:0 at 8 bits is 16 + 2*4 = 24 bytes.
  ExpectStatus({Header(4, 4, 8), Chunk(0, v1::PICTURE_REFERENCE, 0, std::string(23, 'a'), true)},
               grpc::StatusCode::INVALID_ARGUMENT, "chunk.last: picture ended at byte 23, expected 24");
  ExpectStatus({Header(4, 4, 8), Chunk(0, v1::PICTURE_REFERENCE, 0, std::string(25, 'a'), true)},
               grpc::StatusCode::INVALID_ARGUMENT, "past the picture size 24");
}

TEST_F(BadInputTest, ChunksOutOfOrder) {
  ExpectStatus({Header(4, 4, 8), Chunk(0, v1::PICTURE_REFERENCE, 0, std::string(10, 'a'), false),
                Chunk(0, v1::PICTURE_REFERENCE, 12, std::string(12, 'a'), true)},
               grpc::StatusCode::INVALID_ARGUMENT, "chunk.offset: expected 10, got 12");
  ExpectStatus({Header(4, 4, 8), Chunk(1, v1::PICTURE_REFERENCE, 0, std::string(24, 'a'), true)},
               grpc::StatusCode::INVALID_ARGUMENT, "chunk.frame_index: expected 0");
  ExpectStatus({Header(4, 4, 8), Chunk(0, v1::PICTURE_UNSPECIFIED, 0, std::string(24, 'a'), true)},
               grpc::StatusCode::INVALID_ARGUMENT, "chunk.picture");
}

TEST_F(BadInputTest, AStreamThatStopsMidFrame) {
  std::vector<ScoreResponse> answers;
  grpc::Status status = RunStream({Header(4, 4, 8), Chunk(0, v1::PICTURE_REFERENCE, 0, std::string(24, 'a'), true),
                                   Chunk(0, v1::PICTURE_DISTORTED, 0, std::string(24, 'a'), true),
                                   Chunk(1, v1::PICTURE_REFERENCE, 0, std::string(24, 'a'), true)},
                                  &answers);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("in the middle of frame 1"), std::string::npos) << status.error_message();
  // Frame 0 was complete and was answered before the error.
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_TRUE(answers[0].has_accepted());
  EXPECT_EQ(answers[1].frame().frame_index(), 0u);
}

TEST_F(BadInputTest, SamplesAboveTheBitDepth) {
  // 10 bits: every sample is a 16-bit little-endian word; 0x0400 = 1024 > 1023.
  std::string picture(48, '\0');
  picture[10] = '\x00';
  picture[11] = '\x04';
  ExpectStatus({Header(4, 4, 10), Chunk(0, v1::PICTURE_REFERENCE, 0, picture, true),
                Chunk(0, v1::PICTURE_DISTORTED, 0, std::string(48, '\0'), true)},
               grpc::StatusCode::INVALID_ARGUMENT, "reference");
}

TEST_F(BadInputTest, ForcedCudaWithoutAGpuNamesTheCause) {
  ScoreRequest header = Header(4, 4, 8);
  header.mutable_header()->set_backend(v1::BACKEND_CUDA);
  ExpectStatus({header}, grpc::StatusCode::FAILED_PRECONDITION, "cuda");
}

TEST_F(BadInputTest, UnaryCallChecksPictureSizes) {
  auto stub = v1::Scorer::NewStub(grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials()));
  v1::ScorePairRequest request;
  *request.mutable_header() = Header(4, 4, 8).header();
  request.set_reference(std::string(24, 'a'));
  request.set_distorted(std::string(20, 'a'));
  v1::ScorePairResponse response;
  grpc::ClientContext context;
  grpc::Status status = stub->ScorePair(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("distorted: 20 bytes, expected 24"), std::string::npos)
      << status.error_message();

  request.set_distorted(std::string(24, 'a' + 1));
  grpc::ClientContext context2;
  status = stub->ScorePair(&context2, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.frame().scores_size(), 3);
  EXPECT_EQ(response.frame().scores(0).name(), "psnr_y");
  // Every sample differs by 1: mse = 1, psnr = 10 * log10(255^2 / 1).
  EXPECT_EQ(response.frame().scores(0).value(), 10.0 * std::log10(255.0 * 255.0 / 1.0));
  EXPECT_EQ(response.provenance().metrics(0).name(), "psnr");
}

}  // namespace
}  // namespace exactq
