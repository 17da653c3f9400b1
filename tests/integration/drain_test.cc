// Graceful drain: on SIGTERM the real server reports NOT_SERVING, refuses new calls
// with UNAVAILABLE, lets the stream in flight finish with all its answers, and exits 0.
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <chrono>
#include <thread>

#include "exactq/v1/exactq.grpc.pb.h"
#include "gtest/gtest.h"
#include "tests/testing/grpc_probe.h"
#include "tests/testing/score_requests.h"
#include "tests/testing/server_process.h"

namespace exactq {
namespace {

v1::ScoreRequest Header() {
  v1::ScoreRequest r;
  r.mutable_header()->set_job_id("drain");
  r.mutable_header()->mutable_geometry()->set_width(4);
  r.mutable_header()->mutable_geometry()->set_height(4);
  r.mutable_header()->mutable_geometry()->mutable_format()->set_chroma(v1::CHROMA_420);
  r.mutable_header()->mutable_geometry()->mutable_format()->set_bit_depth(8);
  r.mutable_header()->add_metrics()->set_name("psnr");
  return r;
}

v1::ScoreRequest Chunk(uint64_t frame, v1::Picture picture) {
  return WholePictureChunk(frame, picture, std::string(24, picture == v1::PICTURE_REFERENCE ? 'a' : 'b'));
}

TEST(DrainTest, SigtermFinishesTheStreamInFlightAndRefusesNewOnes) {
  exactq::testing::ServerProcess server({"--grace-period-seconds=20", "--drain-notice-seconds=2"});
  ASSERT_TRUE(server.Start()) << server.log();
  auto stub = v1::Scorer::NewStub(grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  auto stream = stub->ScoreStream(&context);
  v1::ScoreResponse response;
  ASSERT_TRUE(stream->Write(Header()));
  ASSERT_TRUE(stream->Read(&response) && response.has_accepted());
  ASSERT_TRUE(stream->Write(Chunk(0, v1::PICTURE_REFERENCE)));
  ASSERT_TRUE(stream->Write(Chunk(0, v1::PICTURE_DISTORTED)));
  ASSERT_TRUE(stream->Read(&response) && response.has_frame());

  server.Signal(SIGTERM);
  // Health turns NOT_SERVING while the stream is still open.
  int health = -2;
  for (int i = 0; i < 100 && health != 2; ++i) {
    health = exactq::testing::HealthStatus(server.address());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(health, 2) << "health should report NOT_SERVING during the drain";

  // The stream in flight goes on: another frame, then its summary.
  ASSERT_TRUE(stream->Write(Chunk(1, v1::PICTURE_REFERENCE)));
  ASSERT_TRUE(stream->Write(Chunk(1, v1::PICTURE_DISTORTED)));
  ASSERT_TRUE(stream->Read(&response) && response.has_frame());
  EXPECT_EQ(response.frame().frame_index(), 1u);
  stream->WritesDone();
  ASSERT_TRUE(stream->Read(&response) && response.has_summary());
  EXPECT_EQ(response.summary().totals().frames(), 2u);
  EXPECT_TRUE(stream->Finish().ok());

  EXPECT_EQ(server.WaitForExit(30), 0) << server.log();
  EXPECT_NE(server.log().find("draining"), std::string::npos) << server.log();
}

TEST(DrainTest, NewCallsDuringTheDrainAreUnavailable) {
  exactq::testing::ServerProcess server({"--grace-period-seconds=20", "--drain-notice-seconds=2"});
  ASSERT_TRUE(server.Start()) << server.log();
  auto channel = grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials());
  auto stub = v1::Scorer::NewStub(channel);
  // A stream that keeps the drain going while we try new calls.
  grpc::ClientContext held_context;
  auto held = stub->ScoreStream(&held_context);
  v1::ScoreResponse response;
  ASSERT_TRUE(held->Write(Header()) && held->Read(&response));
  server.Signal(SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  auto fresh = stub->ScoreStream(&context);
  fresh->Write(Header());
  fresh->WritesDone();
  while (fresh->Read(&response)) {
  }
  const grpc::Status status = fresh->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  held->WritesDone();
  while (held->Read(&response)) {
  }
  EXPECT_TRUE(held->Finish().ok());
  EXPECT_EQ(server.WaitForExit(30), 0) << server.log();
}

}  // namespace
}  // namespace exactq
