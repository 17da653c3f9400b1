// The decoded-source protocol on the real server over loopback (proto "SOURCES"):
// uploads in any order, the chunk rules, the upload limit, mixed raw and decoded sides,
// pairing refusals, server paths without roots and cancellation, each with its status,
// and the server keeps scoring after every case.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "exactq/v1/exactq.grpc.pb.h"
#include "gtest/gtest.h"
#include "tests/testing/grpc_probe.h"
#include "tests/testing/server_process.h"

namespace exactq {
namespace {

using v1::ScoreRequest;
using v1::ScoreResponse;

class DecodedProtocolTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(exactq::testing::MakeTempDir("sources"));
    std::string output;
    for (const auto& [name, rate, frames] :
         std::vector<std::tuple<std::string, int, int>>{{"a.mkv", 24, 4}, {"b.mkv", 24, 4}, {"rate25.mkv", 25, 4}}) {
      const std::string command =
          "ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=32x32:rate=" + std::to_string(rate) + " -frames:v " +
          std::to_string(frames) + " -c:v ffv1 -pix_fmt yuv420p " + *dir_ + "/" + name;
      ASSERT_EQ(exactq::testing::RunCommand({"/bin/bash", "-c", command}, &output), 0) << output;
    }
    server_ = new exactq::testing::ServerProcess(
        {"--source_root=" + *dir_, "--max_upload_bytes=1000000", "--max_chunk_bytes=4096", "--gpus=none"});
    ASSERT_TRUE(server_->Start()) << server_->log();
    no_roots_ = new exactq::testing::ServerProcess({"--gpus=none"});
    ASSERT_TRUE(no_roots_->Start()) << no_roots_->log();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete no_roots_;
    delete dir_;
    server_ = no_roots_ = nullptr;
    dir_ = nullptr;
  }

  void TearDown() override {
    // Whatever the case did, the server still decodes and scores.
    std::vector<ScoreResponse> answers;
    grpc::Status ok = Run(*server_, {Header(Path("a.mkv"), Path("b.mkv"))}, &answers);
    EXPECT_TRUE(ok.ok()) << ok.error_message();
    EXPECT_EQ(exactq::testing::HealthStatus(server_->address()), 1);
  }

  static v1::Source Path(const std::string& path) {
    v1::Source s;
    s.mutable_server_path()->set_path(path);
    return s;
  }
  static v1::Source Upload(const std::string& name, uint64_t size = 0) {
    v1::Source s;
    s.mutable_upload()->set_name(name);
    s.mutable_upload()->set_size_bytes(size);
    return s;
  }
  static ScoreRequest Header(const v1::Source& reference, const v1::Source& distorted) {
    ScoreRequest r;
    v1::StreamHeader* h = r.mutable_header();
    h->set_job_id("decoded-protocol-test");
    h->add_metrics()->set_name("psnr");
    *h->mutable_reference_source() = reference;
    *h->mutable_distorted_source() = distorted;
    return r;
  }
  // A file's bytes as EncodedChunks of `chunk` bytes from `offset`.
  static std::vector<ScoreRequest> Chunks(v1::Picture picture, const std::string& bytes, size_t chunk = 4096,
                                          uint64_t offset = 0, bool last = true) {
    std::vector<ScoreRequest> out;
    for (size_t at = 0; at < bytes.size(); at += chunk) {
      ScoreRequest r;
      v1::EncodedChunk* c = r.mutable_encoded_chunk();
      c->set_picture(picture);
      c->set_offset(offset + at);
      c->set_data(bytes.substr(at, chunk));
      c->set_last(last && at + chunk >= bytes.size());
      out.push_back(std::move(r));
    }
    return out;
  }
  static std::vector<ScoreRequest> Join(std::vector<std::vector<ScoreRequest>> parts) {
    std::vector<ScoreRequest> all;
    for (auto& p : parts) all.insert(all.end(), p.begin(), p.end());
    return all;
  }

  // Sends the messages, half-closes, reads every answer; the final status.
  static grpc::Status Run(const exactq::testing::ServerProcess& server, const std::vector<ScoreRequest>& messages,
                          std::vector<ScoreResponse>* answers, bool cancel_after_writing = false) {
    auto stub = v1::Scorer::NewStub(grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    auto stream = stub->ScoreStream(&context);
    for (const ScoreRequest& m : messages) {
      if (!stream->Write(m)) break;
    }
    if (cancel_after_writing) {
      context.TryCancel();
    } else {
      stream->WritesDone();
    }
    ScoreResponse response;
    while (stream->Read(&response)) {
      if (answers != nullptr) answers->push_back(response);
    }
    return stream->Finish();
  }

  static std::string File(const std::string& name) { return exactq::testing::ReadFile(*dir_ + "/" + name); }

  static exactq::testing::ServerProcess* server_;
  static exactq::testing::ServerProcess* no_roots_;
  static std::string* dir_;
};

exactq::testing::ServerProcess* DecodedProtocolTest::server_ = nullptr;
exactq::testing::ServerProcess* DecodedProtocolTest::no_roots_ = nullptr;
std::string* DecodedProtocolTest::dir_ = nullptr;

TEST_F(DecodedProtocolTest, UploadsInAnyOrderAreDecodedAndAnswered) {
  // All of the distorted file first, then the reference: the spools absorb the order.
  std::vector<ScoreResponse> answers;
  grpc::Status s = Run(*server_,
                       Join({{Header(Upload("a.mkv"), Upload("b.mkv"))},
                             Chunks(v1::PICTURE_DISTORTED, File("b.mkv"), 1000),
                             Chunks(v1::PICTURE_REFERENCE, File("a.mkv"), 3000)}),
                       &answers);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_GE(answers.size(), 6u);
  ASSERT_TRUE(answers.front().has_accepted());
  EXPECT_EQ(answers.front().accepted().geometry().width(), 32u);
  EXPECT_EQ(answers.front().accepted().geometry().format().bit_depth(), 8u);
  EXPECT_NE(answers.front().accepted().distorted_decoder().find("ffv1"), std::string::npos);
  int frames = 0;
  for (const ScoreResponse& r : answers) frames += r.has_frame();
  EXPECT_EQ(frames, 4);
  EXPECT_TRUE(answers.back().has_summary());
  EXPECT_EQ(answers.back().summary().totals().frames(), 4u);
}

TEST_F(DecodedProtocolTest, AnUploadWithoutLastEndsAtTheHalfClose) {
  grpc::Status s = Run(*server_,
                       Join({{Header(Path("a.mkv"), Upload("b.mkv"))},
                             Chunks(v1::PICTURE_DISTORTED, File("b.mkv"), 4096, 0, /*last=*/false)}),
                       nullptr);
  EXPECT_TRUE(s.ok()) << s.error_message();
}

TEST_F(DecodedProtocolTest, ChunkRulesNameTheField) {
  grpc::Status s = Run(
      *server_, Join({{Header(Path("a.mkv"), Upload("b.mkv"))}, Chunks(v1::PICTURE_DISTORTED, File("b.mkv"), 4096, 7)}),
      nullptr);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("encoded_chunk.offset"), std::string::npos) << s.error_message();

  s = Run(*server_, Join({{Header(Path("a.mkv"), Upload("b.mkv"))}, Chunks(v1::PICTURE_REFERENCE, "xyz")}), nullptr);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("not an upload"), std::string::npos) << s.error_message();

  ScoreRequest raw;
  raw.mutable_chunk()->set_picture(v1::PICTURE_REFERENCE);
  raw.mutable_chunk()->set_data("abc");
  s = Run(*server_, {Header(Path("a.mkv"), Upload("b.mkv")), raw}, nullptr);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("chunk:"), std::string::npos) << s.error_message();

  s = Run(*server_,
          Join({{Header(Path("a.mkv"), Upload("b.mkv"))}, Chunks(v1::PICTURE_DISTORTED, std::string(5000, 'x'), 5000)}),
          nullptr);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("max_chunk_bytes"), std::string::npos) << s.error_message();
}

TEST_F(DecodedProtocolTest, UploadLimitIsResourceExhausted) {
  grpc::Status s = Run(*server_, {Header(Path("a.mkv"), Upload("big.mkv", 2000000))}, nullptr);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(s.error_message().find("max_upload_bytes"), std::string::npos) << s.error_message();
  // Undeclared, but more bytes than the limit.
  s = Run(*server_,
          Join({{Header(Path("a.mkv"), Upload("big.mkv"))}, Chunks(v1::PICTURE_DISTORTED, std::string(1100000, 'x'))}),
          nullptr);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_NE(s.error_message().find("spool limit"), std::string::npos) << s.error_message();
}

TEST_F(DecodedProtocolTest, ARawSideWithADecodedSideIsUnimplemented) {
  v1::Source raw;
  raw.mutable_raw();
  grpc::Status s = Run(*server_, {Header(raw, Path("b.mkv"))}, nullptr);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_NE(s.error_message().find("header.reference_source"), std::string::npos) << s.error_message();
}

TEST_F(DecodedProtocolTest, DifferentFrameRatesAreRefusedByName) {
  grpc::Status s = Run(*server_, {Header(Path("a.mkv"), Path("rate25.mkv"))}, nullptr);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("frame rates differ"), std::string::npos) << s.error_message();
}

TEST_F(DecodedProtocolTest, WithoutRootsEveryPathIsPermissionDenied) {
  grpc::Status s = Run(*no_roots_, {Header(Path(*dir_ + "/a.mkv"), Path(*dir_ + "/b.mkv"))}, nullptr);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(s.error_message().find("--source_root"), std::string::npos) << s.error_message();
}

TEST_F(DecodedProtocolTest, ACancelledUploadFreesTheStream) {
  const std::string bytes = File("b.mkv");
  grpc::Status s = Run(*server_,
                       Join({{Header(Upload("a.mkv"), Upload("b.mkv"))},
                             Chunks(v1::PICTURE_DISTORTED, bytes.substr(0, bytes.size() / 2), 4096, 0, false)}),
                       nullptr, /*cancel_after_writing=*/true);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::CANCELLED);
}

}  // namespace
}  // namespace exactq
