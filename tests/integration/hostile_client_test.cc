// Hostile and careless clients against the real server over loopback (issue 40): each
// attack gets a precise status, and the server's memory, threads and log stay bounded.
#include <grpc/byte_buffer.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "exactq/v1/exactq.grpc.pb.h"
#include "gtest/gtest.h"
#include "tests/testing/score_requests.h"
#include "tests/testing/server_process.h"

// grpc::ByteBuffer keeps its C buffer private to a list of friends; this one is
// declared by gRPC for its own tests and defined here to hand the channel a message
// that is already compressed (a gzip bomb), which the C++ API cannot make otherwise.
namespace grpc::internal {
class GrpcByteBufferPeer {
 public:
  static void Set(ByteBuffer* buffer, grpc_byte_buffer* c_buffer) { buffer->set_buffer(c_buffer); }
};
}  // namespace grpc::internal

namespace exactq {
namespace {

using Clock = std::chrono::steady_clock;
using v1::ScoreRequest;
using v1::ScoreResponse;

ScoreRequest Header(const std::string& job_id = "hostile", uint32_t width = 4, uint32_t height = 4) {
  ScoreRequest r;
  v1::StreamHeader* h = r.mutable_header();
  h->set_job_id(job_id);
  h->mutable_geometry()->set_width(width);
  h->mutable_geometry()->set_height(height);
  h->mutable_geometry()->mutable_format()->set_chroma(v1::CHROMA_420);
  h->mutable_geometry()->mutable_format()->set_bit_depth(8);
  h->add_metrics()->set_name("psnr");
  return r;
}

// One 4x4 4:2:0 8-bit picture (24 bytes).
ScoreRequest Picture(uint64_t frame, v1::Picture picture) {
  return WholePictureChunk(frame, picture, std::string(24, picture == v1::PICTURE_REFERENCE ? 'a' : 'c'));
}

std::string Serialized(const ScoreRequest& request) { return request.SerializeAsString(); }

// A call made with raw bytes (GenericStub): each message is sent as given, answers
// come back as bytes. The status, and the answers in *answers.
grpc::Status RawCall(const std::string& address, const std::string& method, const std::vector<grpc::ByteBuffer>& messages,
                     grpc::ClientContext* context, std::vector<grpc::ByteBuffer>* answers) {
  grpc::GenericStub stub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::CompletionQueue cq;
  void* tag;
  bool ok;
  auto call = stub.PrepareCall(context, method, &cq);
  call->StartCall(reinterpret_cast<void*>(1));
  cq.Next(&tag, &ok);
  for (const grpc::ByteBuffer& m : messages) {
    if (!ok) break;
    call->Write(m, reinterpret_cast<void*>(2));
    cq.Next(&tag, &ok);
  }
  call->WritesDone(reinterpret_cast<void*>(3));
  cq.Next(&tag, &ok);
  for (;;) {
    grpc::ByteBuffer answer;
    call->Read(&answer, reinterpret_cast<void*>(4));
    if (!cq.Next(&tag, &ok) || !ok) break;
    if (answers != nullptr) answers->push_back(answer);
  }
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(5));
  cq.Next(&tag, &ok);
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  return status;
}

grpc::ByteBuffer Bytes(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

// Sends the requests, half-closes, reads every answer; the final status.
grpc::Status RunStream(const std::string& address, const std::vector<ScoreRequest>& requests,
                       std::vector<ScoreResponse>* answers, grpc::ClientContext* context) {
  auto stub = v1::Scorer::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  auto stream = stub->ScoreStream(context);
  for (const ScoreRequest& r : requests) {
    if (!stream->Write(r)) break;
  }
  stream->WritesDone();
  ScoreResponse response;
  while (stream->Read(&response)) {
    if (answers != nullptr) answers->push_back(response);
  }
  return stream->Finish();
}

class HostileClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new exactq::testing::ServerProcess({"--stream_idle_seconds=2"});
    ASSERT_TRUE(server_->Start()) << server_->log();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void TearDown() override {
    // Whatever the case did, the server still scores.
    grpc::ClientContext context;
    std::vector<ScoreResponse> answers;
    grpc::Status ok = RunStream(server_->address(),
                                {Header(), Picture(0, v1::PICTURE_REFERENCE), Picture(0, v1::PICTURE_DISTORTED)},
                                &answers, &context);
    EXPECT_TRUE(ok.ok()) << ok.error_message();
    EXPECT_EQ(answers.size(), 3u);
  }
  static exactq::testing::ServerProcess* server_;
};

exactq::testing::ServerProcess* HostileClientTest::server_ = nullptr;

// Issue 40, row 6: the frames after a malformed message used to vanish and the call
// ended OK.
TEST_F(HostileClientTest, AMalformedMessageMidStreamIsInvalidArgument) {
  std::vector<grpc::ByteBuffer> messages = {Bytes(Serialized(Header()))};
  for (uint64_t f = 0; f < 2; ++f) {
    messages.push_back(Bytes(Serialized(Picture(f, v1::PICTURE_REFERENCE))));
    messages.push_back(Bytes(Serialized(Picture(f, v1::PICTURE_DISTORTED))));
  }
  messages.push_back(Bytes(std::string("\xff\xff\xff\xff\x0f\x12\x34", 7)));  // not a ScoreRequest
  for (uint64_t f = 2; f < 4; ++f) {
    messages.push_back(Bytes(Serialized(Picture(f, v1::PICTURE_REFERENCE))));
    messages.push_back(Bytes(Serialized(Picture(f, v1::PICTURE_DISTORTED))));
  }
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  std::vector<grpc::ByteBuffer> answers;
  const grpc::Status status = RawCall(server_->address(), "/exactq.v1.Scorer/ScoreStream", messages, &context, &answers);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_NE(status.error_message().find("message 6 of the stream is not a valid"), std::string::npos)
      << status.error_message();
  // The accepted answer and the two frames before the bad message; nothing after it.
  ASSERT_EQ(answers.size(), 3u);
  ScoreResponse last;
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(answers[2].Dump(&slices).ok());
  std::string bytes;
  for (const grpc::Slice& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  ASSERT_TRUE(last.ParseFromString(bytes));
  EXPECT_EQ(last.frame().frame_index(), 1u);
}

// Row 7: Capabilities said 16 MiB per unary picture, but gRPC's 4 MiB receive limit
// refused a 1080p pair.
TEST_F(HostileClientTest, TheUnaryLimitThatCapabilitiesAdvertisesWorks) {
  auto stub = v1::Scorer::NewStub(grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials()));
  v1::Capabilities caps;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(stub->GetCapabilities(&context, {}, &caps).ok());
  }
  const uint64_t picture_bytes = 1920 * 1080 * 3 / 2;
  ASSERT_LE(picture_bytes, caps.limits().max_unary_picture_bytes());
  v1::ScorePairRequest request;
  *request.mutable_header() = Header("unary-1080p", 1920, 1080).header();
  request.set_reference(std::string(picture_bytes, 'a'));
  request.set_distorted(std::string(picture_bytes, 'b'));
  v1::ScorePairResponse response;
  grpc::ClientContext context;
  const grpc::Status status = stub->ScorePair(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.frame().scores_size(), 3);
}

std::vector<std::string> LogLines(const std::string& log) {
  std::vector<std::string> lines;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Row 8: a job_id could forge a log line, and a 3 MiB one made 3 MB log lines.
TEST_F(HostileClientTest, ClientStringsCannotForgeOrFloodTheLog) {
  const std::string forged = "2026-12-04T00:00:00.000000 info stream end job_id=forged";
  {
    grpc::ClientContext context;
    const grpc::Status status =
        RunStream(server_->address(),
                  {Header("job\n" + forged), Picture(0, v1::PICTURE_REFERENCE), Picture(0, v1::PICTURE_DISTORTED)},
                  nullptr, &context);
    EXPECT_TRUE(status.ok()) << status.error_message();
  }
  {
    grpc::ClientContext context;
    const grpc::Status status = RunStream(server_->address(), {Header(std::string(3 << 20, '\n'))}, nullptr, &context);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(status.error_message().find("header.job_id: 3145728 bytes exceeds the limit of 256"), std::string::npos)
        << status.error_message().substr(0, 200);
  }
  {
    // A long metric name comes back in the error; the log keeps a bounded prefix of it.
    ScoreRequest header = Header();
    header.mutable_header()->mutable_metrics(0)->set_name(std::string(3 << 20, 'm') + "\n" + forged);
    grpc::ClientContext context;
    EXPECT_EQ(RunStream(server_->address(), {header}, nullptr, &context).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the session's last log line
  const std::string log = server_->log();
  EXPECT_NE(log.find("job\\n" + forged), std::string::npos) << "the job_id is logged, escaped";
  for (const std::string& line : LogLines(log)) {
    EXPECT_NE(line.rfind(forged, 0), 0u) << "a forged log line";
    EXPECT_LE(line.size(), 8u << 10) << line.substr(0, 200);
  }
}

}  // namespace
}  // namespace exactq
