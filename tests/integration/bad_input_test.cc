// Bad input reaches the real server over loopback: each case gets a precise gRPC
// status naming the field, and the server keeps serving other calls.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "exactq/v1/exactq.grpc.pb.h"
#include "gtest/gtest.h"
#include "tests/testing/grpc_probe.h"
#include "tests/testing/score_requests.h"
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

  static ScoreRequest Header(uint32_t width, uint32_t height, uint32_t bit_depth, const std::string& metric = "psnr") {
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

  static ScoreRequest Chunk(uint64_t frame, v1::Picture picture, uint64_t offset, const std::string& data, bool last) {
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

TEST_F(BadInputTest, AnEmptyStream) { ExpectStatus({}, grpc::StatusCode::INVALID_ARGUMENT, "ended before its header"); }

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

ScoreRequest WithHeader(ScoreRequest header, const std::function<void(v1::StreamHeader*)>& edit) {
  edit(header.mutable_header());
  return header;
}

TEST_F(BadInputTest, MoreMalformedHeaders) {
  ExpectStatus({Header(4, 0, 8)}, grpc::StatusCode::INVALID_ARGUMENT, "header.geometry.height");
  ExpectStatus({Header(4, 4, 7)}, grpc::StatusCode::INVALID_ARGUMENT, "header.geometry.format.bit_depth");
  ExpectStatus({Header(4, 4, 0)}, grpc::StatusCode::INVALID_ARGUMENT, "header.geometry.format.bit_depth");
  ExpectStatus({Header(16, 100000, 8)}, grpc::StatusCode::RESOURCE_EXHAUSTED, "max_height");
  ExpectStatus({WithHeader(Header(4, 4, 8), [](v1::StreamHeader* h) { h->clear_geometry(); })},
               grpc::StatusCode::INVALID_ARGUMENT, "header.geometry: missing");
  ExpectStatus({WithHeader(Header(4, 4, 8), [](v1::StreamHeader* h) { h->mutable_metrics(0)->clear_name(); })},
               grpc::StatusCode::INVALID_ARGUMENT, "header.metrics[0].name");
  ExpectStatus({WithHeader(Header(4, 4, 8), [](v1::StreamHeader* h) { h->set_backend(static_cast<v1::Backend>(7)); })},
               grpc::StatusCode::INVALID_ARGUMENT, "header.backend");
  ExpectStatus({WithHeader(Header(4, 4, 8),
                           [](v1::StreamHeader* h) {
                             h->mutable_geometry()->mutable_format()->set_chroma(static_cast<v1::ChromaLayout>(9));
                           })},
               grpc::StatusCode::INVALID_ARGUMENT, "header.geometry.format.chroma");
  ExpectStatus({WithHeader(Header(4, 4, 8), [](v1::StreamHeader* h) { h->add_metrics()->set_name("psnr"); })},
               grpc::StatusCode::INVALID_ARGUMENT, "requested twice");
  ExpectStatus(
      {WithHeader(Header(4, 4, 8),
                  [](v1::StreamHeader* h) { (*h->mutable_metrics(0)->mutable_options())["enable_chroma"] = "maybe"; })},
      grpc::StatusCode::INVALID_ARGUMENT, "enable_chroma");
}

TEST_F(BadInputTest, ProtocolViolationsAfterTheHeader) {
  ExpectStatus({Header(4, 4, 8), Header(4, 4, 8)}, grpc::StatusCode::INVALID_ARGUMENT,
               "only the first message may be a header");
  ExpectStatus({Header(4, 4, 8), ScoreRequest()}, grpc::StatusCode::INVALID_ARGUMENT, "neither header nor chunk");
  ExpectStatus({Header(4, 4, 8), Chunk(0, v1::PICTURE_REFERENCE, 0, std::string(24, 'a'), true),
                Chunk(0, v1::PICTURE_REFERENCE, 24, "", true)},
               grpc::StatusCode::INVALID_ARGUMENT, "picture already complete");
  ExpectStatus({Header(4, 4, 8), Chunk(0, v1::PICTURE_REFERENCE, 0, std::string(10, 'a'), false),
                Chunk(0, v1::PICTURE_REFERENCE, 5, std::string(19, 'a'), true)},
               grpc::StatusCode::INVALID_ARGUMENT, "chunk.offset: expected 10, got 5");
  ExpectStatus({WithHeader(Header(4, 4, 8), [](v1::StreamHeader* h) { h->set_expected_frames(1); }),
                Chunk(0, v1::PICTURE_REFERENCE, 0, std::string(24, 'a'), true),
                Chunk(0, v1::PICTURE_DISTORTED, 0, std::string(24, 'a'), true),
                Chunk(1, v1::PICTURE_REFERENCE, 0, std::string(24, 'a'), true)},
               grpc::StatusCode::INVALID_ARGUMENT, "past header.expected_frames=1");
  // A frame index far ahead (frames after the end of a sane stream).
  ExpectStatus({Header(4, 4, 8), Chunk(1ull << 40, v1::PICTURE_REFERENCE, 0, std::string(24, 'a'), true)},
               grpc::StatusCode::INVALID_ARGUMENT, "chunk.frame_index: expected 0");
  // A stream of only a header: no frames is a valid, empty run.
  std::vector<ScoreResponse> answers;
  grpc::Status empty = RunStream({Header(4, 4, 8)}, &answers);
  EXPECT_TRUE(empty.ok()) << empty.error_message();
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[1].summary().totals().frames(), 0u);
}

TEST_F(BadInputTest, OddChromaSizesMustMatchTheLayout) {
  // 5x5: luma 25; 4:2:0 chroma 3x3 (+18) = 43; 4:2:2 chroma 3x5 (+30) = 55; 4:4:4 = 75.
  ExpectStatus({Header(5, 5, 8), Chunk(0, v1::PICTURE_REFERENCE, 0, std::string(33, 'a'), true)},
               grpc::StatusCode::INVALID_ARGUMENT, "expected 43");
  ScoreRequest h422 = Header(5, 5, 8);
  h422.mutable_header()->mutable_geometry()->mutable_format()->set_chroma(v1::CHROMA_422);
  ExpectStatus({h422, Chunk(0, v1::PICTURE_REFERENCE, 0, std::string(43, 'a'), true)},
               grpc::StatusCode::INVALID_ARGUMENT, "expected 55");
  ScoreRequest h444_16 = Header(5, 5, 16);
  h444_16.mutable_header()->mutable_geometry()->mutable_format()->set_chroma(v1::CHROMA_444);
  ExpectStatus({h444_16, Chunk(0, v1::PICTURE_DISTORTED, 0, std::string(75, 'a'), true)},
               grpc::StatusCode::INVALID_ARGUMENT, "expected 150");
  // The right sizes work, odd or not.
  std::vector<ScoreResponse> answers;
  grpc::Status ok = RunStream({Header(5, 5, 8), Chunk(0, v1::PICTURE_REFERENCE, 0, std::string(43, 'a'), true),
                               Chunk(0, v1::PICTURE_DISTORTED, 0, std::string(43, 'c'), true)},
                              &answers);
  EXPECT_TRUE(ok.ok()) << ok.error_message();
}

TEST_F(BadInputTest, SamplesAboveTheBitDepthInChromaOfTheDistortedPicture) {
  // 12 bits, 4x4 4:2:0: 24 samples of 2 bytes; the last sample (Cr) is 4096.
  std::string picture(48, '\0');
  picture[46] = '\x00';
  picture[47] = '\x10';
  ExpectStatus({Header(4, 4, 12), Chunk(0, v1::PICTURE_REFERENCE, 0, std::string(48, '\0'), true),
                Chunk(0, v1::PICTURE_DISTORTED, 0, picture, true)},
               grpc::StatusCode::INVALID_ARGUMENT, "distorted");
}

TEST_F(BadInputTest, GarbageBytesInsteadOfAMessage) {
  auto channel = grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::CompletionQueue cq;
  void* tag;
  bool ok;
  auto call = stub.PrepareCall(&context, "/exactq.v1.Scorer/ScoreStream", &cq);
  call->StartCall(reinterpret_cast<void*>(1));
  ASSERT_TRUE(cq.Next(&tag, &ok) && ok);
  const std::string garbage("\xff\xff\xff\xff\x0f\x12\x34", 7);  // not a valid ScoreRequest
  grpc::Slice slice(garbage);
  grpc::ByteBuffer send(&slice, 1);
  call->WriteLast(send, grpc::WriteOptions(), reinterpret_cast<void*>(2));
  cq.Next(&tag, &ok);
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(3));
  while (cq.Next(&tag, &ok)) {
    if (tag == reinterpret_cast<void*>(3)) break;
  }
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  EXPECT_FALSE(status.ok());
}

TEST_F(BadInputTest, AStalledClientHitsItsDeadlineAndIsFreed) {
  auto stub = v1::Scorer::NewStub(grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(700));
  auto stream = stub->ScoreStream(&context);
  ASSERT_TRUE(stream->Write(Header(4, 4, 8)));
  ASSERT_TRUE(stream->Write(Chunk(0, v1::PICTURE_REFERENCE, 0, std::string(10, 'a'), false)));
  // ...and then nothing: the client stalls mid-frame.
  ScoreResponse response;
  while (stream->Read(&response)) {
  }
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  // The server released the stream: no active streams or frames in flight remain.
  for (int i = 0; i < 100; ++i) {
    const std::string page = exactq::testing::HttpGet(server_->metrics_port(), "/metrics");
    if (page.find("exactq_active_streams 0\n") != std::string::npos &&
        page.find("exactq_frames_in_flight 0\n") != std::string::npos) {
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ADD_FAILURE() << exactq::testing::HttpGet(server_->metrics_port(), "/metrics");
}

TEST_F(BadInputTest, AClientThatCancelsMidFrameIsFreed) {
  auto stub = v1::Scorer::NewStub(grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  auto stream = stub->ScoreStream(&context);
  ASSERT_TRUE(stream->Write(Header(4, 4, 8)));
  ASSERT_TRUE(stream->Write(Chunk(0, v1::PICTURE_REFERENCE, 0, std::string(10, 'a'), false)));
  ScoreResponse accepted;
  ASSERT_TRUE(stream->Read(&accepted));
  context.TryCancel();
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::CANCELLED);
  for (int i = 0; i < 100; ++i) {
    if (exactq::testing::HttpGet(server_->metrics_port(), "/metrics").find("exactq_active_streams 0\n") !=
        std::string::npos) {
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ADD_FAILURE() << "the cancelled stream was not released";
}

TEST_F(BadInputTest, UnaryCallLimitsAndSamples) {
  auto stub = v1::Scorer::NewStub(grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials()));
  {
    v1::ScorePairRequest request;
    v1::ScorePairResponse response;
    grpc::ClientContext context;
    EXPECT_EQ(stub->ScorePair(&context, request, &response).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }
  {
    v1::ScorePairRequest request;
    *request.mutable_header() = Header(4, 4, 10).header();
    std::string picture(48, '\0');
    picture[1] = '\x04';  // 1024 at 10 bits
    request.set_reference(picture);
    request.set_distorted(std::string(48, '\0'));
    v1::ScorePairResponse response;
    grpc::ClientContext context;
    grpc::Status status = stub->ScorePair(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(status.error_message().find("reference"), std::string::npos) << status.error_message();
  }
  {
    v1::Capabilities caps;
    grpc::ClientContext context;
    ASSERT_TRUE(stub->GetCapabilities(&context, {}, &caps).ok());
    EXPECT_EQ(caps.limits().max_chunk_bytes(), 4096u);
    EXPECT_EQ(caps.limits().max_width(), 1024u);
    ASSERT_GE(caps.metrics_size(), 1);
    EXPECT_EQ(caps.metrics(0).name(), "psnr");
  }
}

TEST(ServerLimitsTest, ConcurrentStreamAndMemoryLimitsAreResourceExhausted) {
  exactq::testing::ServerProcess server(
      {"--max-streams=2", "--max-buffered-bytes=100000", "--max-unary-picture-bytes=1000"});
  ASSERT_TRUE(server.Start()) << server.log();
  auto channel = grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials());
  auto stub = v1::Scorer::NewStub(channel);
  auto header = [](uint32_t w, uint32_t h) {
    ScoreRequest r;
    r.mutable_header()->mutable_geometry()->set_width(w);
    r.mutable_header()->mutable_geometry()->set_height(h);
    r.mutable_header()->mutable_geometry()->mutable_format()->set_chroma(v1::CHROMA_420);
    r.mutable_header()->mutable_geometry()->mutable_format()->set_bit_depth(8);
    r.mutable_header()->add_metrics()->set_name("psnr");
    return r;
  };
  // Memory: a 320x240 pair needs 2 * 115200 bytes > 100000.
  {
    grpc::ClientContext context;
    auto stream = stub->ScoreStream(&context);
    stream->Write(header(320, 240));
    stream->WritesDone();
    ScoreResponse r;
    while (stream->Read(&r)) {
    }
    grpc::Status status = stream->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_NE(status.error_message().find("max_buffered_bytes=100000"), std::string::npos) << status.error_message();
  }
  // Unary pictures over their limit.
  {
    v1::ScorePairRequest request;
    *request.mutable_header() = header(64, 64).header();
    v1::ScorePairResponse response;
    grpc::ClientContext context;
    grpc::Status status = stub->ScorePair(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_NE(status.error_message().find("max_unary_picture_bytes=1000"), std::string::npos);
  }
  // Streams: two open ones hold both slots; a third is refused; closing one frees a slot.
  grpc::ClientContext c1, c2, c3;
  auto s1 = stub->ScoreStream(&c1);
  auto s2 = stub->ScoreStream(&c2);
  ScoreResponse r;
  ASSERT_TRUE(s1->Write(header(8, 8)) && s1->Read(&r));
  ASSERT_TRUE(s2->Write(header(8, 8)) && s2->Read(&r));
  auto s3 = stub->ScoreStream(&c3);
  s3->Write(header(8, 8));
  s3->WritesDone();
  while (s3->Read(&r)) {
  }
  grpc::Status third = s3->Finish();
  EXPECT_EQ(third.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(third.error_message().find("max_streams=2"), std::string::npos) << third.error_message();
  s1->WritesDone();
  while (s1->Read(&r)) {
  }
  EXPECT_TRUE(s1->Finish().ok());
  grpc::ClientContext c4;
  auto s4 = stub->ScoreStream(&c4);
  s4->Write(header(8, 8));
  s4->WritesDone();
  while (s4->Read(&r)) {
  }
  EXPECT_TRUE(s4->Finish().ok());
  s2->WritesDone();
  while (s2->Read(&r)) {
  }
  EXPECT_TRUE(s2->Finish().ok());
}

TEST(ServerLimitsTest, ASaturatedCpuPoolAnswersUnavailableWithARetryHint) {
  // A CPU stream holds its slot only while its frames are scored: the held stream sends
  // two 1080p frames for SSIMULACRA2, seconds of CPU, and the second stream arrives then.
  exactq::testing::ServerProcess server({"--max-cpu-streams=1"});
  ASSERT_TRUE(server.Start()) << server.log();
  auto stub = v1::Scorer::NewStub(grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials()));
  auto header = [](uint32_t width, uint32_t height, const std::string& metric) {
    ScoreRequest r;
    r.mutable_header()->mutable_geometry()->set_width(width);
    r.mutable_header()->mutable_geometry()->set_height(height);
    r.mutable_header()->mutable_geometry()->mutable_format()->set_chroma(v1::CHROMA_420);
    r.mutable_header()->mutable_geometry()->mutable_format()->set_bit_depth(8);
    r.mutable_header()->add_metrics()->set_name(metric);
    r.mutable_header()->set_backend(v1::BACKEND_CPU);
    return r;
  };
  grpc::ClientContext held_context;
  auto held = stub->ScoreStream(&held_context);
  ScoreResponse r;
  ASSERT_TRUE(held->Write(header(1920, 1080, "ssimulacra2")) && held->Read(&r) && r.has_accepted());
  const std::string picture(1920 * 1080 * 3 / 2, 'a'), other(1920 * 1080 * 3 / 2, 'c');
  for (uint64_t f = 0; f < 2; ++f) {
    for (auto [which, bytes] : {std::pair{v1::PICTURE_REFERENCE, &picture}, std::pair{v1::PICTURE_DISTORTED, &other}}) {
      for (size_t offset = 0; offset < bytes->size(); offset += 1 << 20) {
        ScoreRequest chunk;
        chunk.mutable_chunk()->set_frame_index(f);
        chunk.mutable_chunk()->set_picture(which);
        chunk.mutable_chunk()->set_offset(offset);
        chunk.mutable_chunk()->set_data(bytes->substr(offset, 1 << 20));
        chunk.mutable_chunk()->set_last(offset + (1 << 20) >= bytes->size());
        ASSERT_TRUE(held->Write(chunk));
      }
    }
  }
  // While those frames are scored, the one slot is busy.
  grpc::Status status;
  std::unique_ptr<grpc::ClientContext> context;
  for (int attempt = 0; attempt < 100; ++attempt) {
    context = std::make_unique<grpc::ClientContext>();
    auto second = stub->ScoreStream(context.get());
    second->Write(header(8, 8, "psnr"));
    second->WritesDone();
    while (second->Read(&r)) {
    }
    status = second->Finish();
    if (status.error_code() == grpc::StatusCode::UNAVAILABLE) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  EXPECT_NE(status.error_message().find("max_cpu_streams=1"), std::string::npos) << status.error_message();
  const auto& metadata = context->GetServerTrailingMetadata();
  auto hint = metadata.find("retry-after-seconds");
  ASSERT_NE(hint, metadata.end());
  EXPECT_EQ(std::string(hint->second.data(), hint->second.size()), "5");
  held->WritesDone();
  int frames = 0;
  while (held->Read(&r)) frames += r.has_frame();
  EXPECT_TRUE(held->Finish().ok());
  EXPECT_EQ(frames, 2);
}

TEST(ServerLimitsTest, HealthyStreamsAreUnaffectedByConcurrentBadOnes) {
  exactq::testing::ServerProcess server;
  ASSERT_TRUE(server.Start()) << server.log();
  auto stub = v1::Scorer::NewStub(grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials()));
  // A 64x64 pair, 20 frames, with known content; its scores alone are the baseline.
  auto run_healthy = [&](std::vector<double>* values) {
    grpc::ClientContext context;
    auto stream = stub->ScoreStream(&context);
    ScoreRequest h;
    h.mutable_header()->mutable_geometry()->set_width(64);
    h.mutable_header()->mutable_geometry()->set_height(64);
    h.mutable_header()->mutable_geometry()->mutable_format()->set_chroma(v1::CHROMA_420);
    h.mutable_header()->mutable_geometry()->mutable_format()->set_bit_depth(8);
    h.mutable_header()->add_metrics()->set_name("psnr");
    stream->Write(h);
    for (uint64_t f = 0; f < 20; ++f) {
      std::string ref(6144, '\0'), dist(6144, '\0');
      for (size_t i = 0; i < ref.size(); ++i) {
        ref[i] = static_cast<char>((i * 13 + f) & 0xff);
        dist[i] = static_cast<char>((i * 13 + f + (i % 7)) & 0xff);
      }
      for (auto [pic, data] : {std::pair{v1::PICTURE_REFERENCE, &ref}, std::pair{v1::PICTURE_DISTORTED, &dist}}) {
        stream->Write(WholePictureChunk(f, pic, *data));
      }
    }
    stream->WritesDone();
    ScoreResponse r;
    while (stream->Read(&r)) {
      if (r.has_frame()) values->push_back(r.frame().scores(0).value());
    }
    return stream->Finish();
  };
  std::vector<double> alone;
  ASSERT_TRUE(run_healthy(&alone).ok());
  std::vector<double> concurrent;
  grpc::Status healthy_status;
  std::thread healthy([&] { healthy_status = run_healthy(&concurrent); });
  for (int i = 0; i < 20; ++i) {
    grpc::ClientContext context;
    auto stream = stub->ScoreStream(&context);
    ScoreRequest bad;
    bad.mutable_header()->mutable_geometry()->set_width(0);
    stream->Write(bad);
    stream->WritesDone();
    ScoreResponse r;
    while (stream->Read(&r)) {
    }
    EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }
  healthy.join();
  ASSERT_TRUE(healthy_status.ok()) << healthy_status.error_message();
  ASSERT_EQ(concurrent.size(), alone.size());
  for (size_t i = 0; i < alone.size(); ++i) EXPECT_EQ(std::memcmp(&alone[i], &concurrent[i], sizeof(double)), 0);
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
