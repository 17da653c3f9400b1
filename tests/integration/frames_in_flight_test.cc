// Several frames in flight per stream (--frames_in_flight) through the real
// server over loopback: the server says K, answers every frame once in frame order
// with the engine's bits, and a bad frame in the middle ends the stream as it did
// with one frame at a time: the frames before it answered, then its error, nothing
// after. Run against K=1 and K=4 servers, so the two behaviours are compared.
#include <grpcpp/grpcpp.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "engine/metrics/registry.h"
#include "exactq/v1/exactq.grpc.pb.h"
#include "gtest/gtest.h"
#include "tests/testing/score_requests.h"
#include "tests/testing/server_process.h"

namespace exactq {
namespace {

const FrameGeometry kGeometry{96, 64, PixelFormat{ChromaLayout::k420, 10}};

Frame MakeFrame(uint32_t seed) {
  Frame f = *Frame::Create(kGeometry);
  uint32_t x = seed * 2654435761u + 1;
  for (int p = 0; p < kGeometry.plane_count(); ++p) {
    for (int row = 0; row < kGeometry.plane_height(p); ++row) {
      for (int col = 0; col < kGeometry.plane_width(p); ++col) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        f.set_sample(p, col, row, x % 1024);
      }
    }
  }
  return f;
}

struct StreamOutcome {
  uint32_t accepted_in_flight = 0;
  std::vector<v1::FrameResult> frames;
  bool summary = false;
  grpc::Status status;
};

// Sends `frames` pairs (seeds 2f and 2f+1) as fast as gRPC takes them; frame
// `bad_frame` (if >= 0) gets a luma sample above 10 bits.
StreamOutcome RunStream(const std::string& address, int frames, int bad_frame) {
  auto stub = v1::Scorer::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  auto stream = stub->ScoreStream(&context);
  std::thread writer([&] {
    v1::ScoreRequest header;
    v1::StreamHeader* h = header.mutable_header();
    h->set_job_id("frames-in-flight");
    h->mutable_geometry()->set_width(kGeometry.width);
    h->mutable_geometry()->set_height(kGeometry.height);
    h->mutable_geometry()->mutable_format()->set_chroma(v1::CHROMA_420);
    h->mutable_geometry()->mutable_format()->set_bit_depth(10);
    h->add_metrics()->set_name("psnr");
    h->add_metrics()->set_name("ssim");
    if (!stream->Write(header)) return;
    for (int f = 0; f < frames; ++f) {
      Frame ref = MakeFrame(2 * f), dist = MakeFrame(2 * f + 1);
      if (f == bad_frame) dist.set_sample(0, 3, 2, 4000);
      for (auto [pic, frame] : {std::pair{v1::PICTURE_REFERENCE, &ref}, std::pair{v1::PICTURE_DISTORTED, &dist}}) {
        if (!stream->Write(WholePictureChunk(f, pic, frame->bytes(), frame->size_bytes()))) return;
      }
    }
    stream->WritesDone();
  });
  StreamOutcome out;
  v1::ScoreResponse response;
  while (stream->Read(&response)) {
    if (response.has_accepted()) out.accepted_in_flight = response.accepted().max_frames_in_flight();
    if (response.has_frame()) out.frames.push_back(response.frame());
    if (response.has_summary()) out.summary = true;
  }
  writer.join();
  out.status = stream->Finish();
  return out;
}

// The engine's bits for frame f, computed in this process.
std::vector<double> Expected(int f) {
  Frame ref = MakeFrame(2 * f), dist = MakeFrame(2 * f + 1);
  std::vector<double> values;
  for (const char* metric : {"psnr", "ssim"}) {
    const FrameScores scores = *(*CreateMetric(metric, {}))->Score(ref, dist);
    for (const NamedScore& s : scores) values.push_back(s.value);
  }
  return values;
}

class FramesInFlightTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    server_ = std::make_unique<exactq::testing::ServerProcess>(
        std::vector<std::string>{"--frames_in_flight=" + std::to_string(GetParam())});
    ASSERT_TRUE(server_->Start()) << server_->log();
  }
  std::unique_ptr<exactq::testing::ServerProcess> server_;
};

TEST_P(FramesInFlightTest, AnswersEveryFrameOnceInOrderWithTheEnginesBits) {
  constexpr int kFrames = 40;
  const StreamOutcome out = RunStream(server_->address(), kFrames, -1);
  ASSERT_TRUE(out.status.ok()) << out.status.error_message();
  EXPECT_EQ(out.accepted_in_flight, static_cast<uint32_t>(GetParam()));
  ASSERT_EQ(out.frames.size(), static_cast<size_t>(kFrames));
  for (int f = 0; f < kFrames; ++f) {
    const v1::FrameResult& r = out.frames[f];
    EXPECT_EQ(r.frame_index(), static_cast<uint64_t>(f));
    const std::vector<double> want = Expected(f);
    ASSERT_EQ(r.scores_size(), static_cast<int>(want.size()));
    for (size_t i = 0; i < want.size(); ++i) {
      const double got = r.scores(static_cast<int>(i)).value();
      EXPECT_EQ(std::memcmp(&got, &want[i], sizeof got), 0) << "frame " << f << " output " << i;
    }
  }
  EXPECT_TRUE(out.summary);
}

TEST_P(FramesInFlightTest, ABadFrameEndsTheStreamAfterTheFramesBeforeIt) {
  const StreamOutcome out = RunStream(server_->address(), 20, 7);
  EXPECT_EQ(out.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(out.status.error_message().find("frame 7 distorted"), std::string::npos) << out.status.error_message();
  ASSERT_EQ(out.frames.size(), 7u);  // frames 0 to 6, none after the bad one
  for (int f = 0; f < 7; ++f) EXPECT_EQ(out.frames[f].frame_index(), static_cast<uint64_t>(f));
  EXPECT_FALSE(out.summary);
}

TEST_P(FramesInFlightTest, CapabilitiesSayTheLimit) {
  auto stub = v1::Scorer::NewStub(grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  v1::Capabilities caps;
  ASSERT_TRUE(stub->GetCapabilities(&context, {}, &caps).ok());
  EXPECT_EQ(caps.limits().max_frames_in_flight_per_stream(), static_cast<uint32_t>(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(OneAndFour, FramesInFlightTest, ::testing::Values(1, 4));

TEST(FramesInFlightFlagTest, OutOfRangeStopsTheServerWithAReason) {
  exactq::testing::ServerProcess server({"--frames_in_flight=0"});
  EXPECT_FALSE(server.Start());
  EXPECT_NE(server.log().find("--frames_in_flight must be 1 to 64"), std::string::npos) << server.log();
}

}  // namespace
}  // namespace exactq
