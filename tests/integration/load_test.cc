// Load: many concurrent streams against one real server over loopback for a fixed
// time (EXACTQ_LOAD_SECONDS, default 20). Every answer must arrive once, in frame
// order, with the bits the engine computes in-process; the server's memory must stay
// bounded (its resident size at the end within a fixed margin of its size after the
// warm-up round).
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "engine/metrics/registry.h"
#include "exactq/v1/exactq.grpc.pb.h"
#include "gtest/gtest.h"
#include "tests/testing/score_requests.h"
#include "tests/testing/server_process.h"

namespace exactq {
namespace {

constexpr int kStreams = 16;
constexpr int kFramesPerStream = 12;

FrameGeometry StreamGeometry(int stream) {
  // Mixed geometries and depths across streams.
  static const FrameGeometry kGeometries[] = {{64, 48, PixelFormat{ChromaLayout::k420, 8}},
                                              {33, 17, PixelFormat{ChromaLayout::k444, 10}},
                                              {96, 64, PixelFormat{ChromaLayout::k422, 12}},
                                              {40, 40, PixelFormat{ChromaLayout::k400, 16}}};
  return kGeometries[stream % 4];
}

Frame MakeFrame(const FrameGeometry& g, uint32_t seed) {
  Frame f = *Frame::Create(g);
  const uint32_t max = (1u << g.format.bit_depth) - 1;
  uint32_t x = seed * 2654435761u + 1;
  for (int p = 0; p < g.plane_count(); ++p) {
    for (int row = 0; row < g.plane_height(p); ++row) {
      for (int col = 0; col < g.plane_width(p); ++col) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        f.set_sample(p, col, row, x % (max + 1));
      }
    }
  }
  return f;
}

// One stream of kFramesPerStream frames; false with a message on any deviation.
bool RunStream(v1::Scorer::Stub& stub, int stream_id, uint32_t round, std::string* error) {
  const FrameGeometry g = StreamGeometry(stream_id);
  const char* metrics[] = {"psnr", "ssim"};
  const char* metric = metrics[stream_id % 2];
  std::unique_ptr<Metric> reference = *CreateMetric(metric, {});
  grpc::ClientContext context;
  auto stream = stub.ScoreStream(&context);
  v1::ScoreRequest header;
  header.mutable_header()->set_job_id("load-" + std::to_string(stream_id));
  header.mutable_header()->mutable_geometry()->set_width(g.width);
  header.mutable_header()->mutable_geometry()->set_height(g.height);
  header.mutable_header()->mutable_geometry()->mutable_format()->set_chroma(
      static_cast<v1::ChromaLayout>(static_cast<int>(g.format.layout) + 1));
  header.mutable_header()->mutable_geometry()->mutable_format()->set_bit_depth(g.format.bit_depth);
  header.mutable_header()->add_metrics()->set_name(metric);
  std::vector<FrameScores> expected;
  std::thread writer([&] {
    stream->Write(header);
    for (int f = 0; f < kFramesPerStream; ++f) {
      const uint32_t seed = round * 100000 + stream_id * 1000 + f;
      Frame ref = MakeFrame(g, seed), dist = MakeFrame(g, seed + 7);
      for (auto [pic, frame] : {std::pair{v1::PICTURE_REFERENCE, &ref}, std::pair{v1::PICTURE_DISTORTED, &dist}}) {
        if (!stream->Write(WholePictureChunk(f, pic, frame->bytes(), frame->size_bytes()))) return;
      }
    }
    stream->WritesDone();
  });
  for (int f = 0; f < kFramesPerStream; ++f) {
    const uint32_t seed = round * 100000 + stream_id * 1000 + f;
    expected.push_back(*reference->Score(MakeFrame(g, seed), MakeFrame(g, seed + 7)));
  }
  v1::ScoreResponse response;
  int next = 0;
  bool summary = false;
  while (stream->Read(&response)) {
    if (response.has_frame()) {
      const v1::FrameResult& r = response.frame();
      if (r.frame_index() != static_cast<uint64_t>(next)) {
        *error = "stream " + std::to_string(stream_id) + ": frame " + std::to_string(r.frame_index()) +
                 " arrived, expected " + std::to_string(next);
        break;
      }
      for (size_t i = 0; i < expected[next].size(); ++i) {
        const double got = r.scores(static_cast<int>(i)).value();
        if (std::memcmp(&got, &expected[next][i].value, sizeof(double)) != 0) {
          *error = "stream " + std::to_string(stream_id) + " frame " + std::to_string(next) + " differs";
        }
      }
      ++next;
    } else if (response.has_summary()) {
      summary = response.summary().totals().frames() == static_cast<uint64_t>(kFramesPerStream);
    }
  }
  writer.join();
  grpc::Status status = stream->Finish();
  if (!status.ok()) *error = "stream " + std::to_string(stream_id) + ": " + status.error_message();
  if (error->empty() && (next != kFramesPerStream || !summary)) {
    *error = "stream " + std::to_string(stream_id) + ": " + std::to_string(next) + " frames answered";
  }
  return error->empty();
}

TEST(LoadTest, ManyConcurrentStreamsKeepOrderBitsAndBoundedMemory) {
  const char* env = std::getenv("EXACTQ_LOAD_SECONDS");
  const int seconds = env != nullptr ? std::atoi(env) : 20;
  // Every stream runs on the CPU here: let the CPU pool take them all.
  exactq::testing::ServerProcess server({"--max-cpu-streams=" + std::to_string(kStreams)});
  ASSERT_TRUE(server.Start()) << server.log();
  auto stub = v1::Scorer::NewStub(grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials()));
  std::atomic<int> failures{0};
  std::atomic<int64_t> frames{0};
  uint64_t warm_rss = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  uint32_t round = 0;
  do {
    std::vector<std::thread> clients;
    for (int s = 0; s < kStreams; ++s) {
      clients.emplace_back([&, s] {
        std::string error;
        if (!RunStream(*stub, s, round, &error)) {
          if (failures.fetch_add(1) < 5) ADD_FAILURE() << error;
        } else {
          frames.fetch_add(kFramesPerStream);
        }
      });
    }
    for (std::thread& t : clients) t.join();
    if (round == 0) warm_rss = server.resident_bytes();
    ++round;
  } while (std::chrono::steady_clock::now() < deadline && failures.load() == 0);
  const uint64_t end_rss = server.resident_bytes();
  std::printf(
      "load: %u rounds, %lld frames over %d streams each round; server RSS %.1f MiB after warm-up, %.1f MiB at the "
      "end\n",
      round, static_cast<long long>(frames.load()), kStreams, warm_rss / 1048576.0, end_rss / 1048576.0);
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GE(round, 2u);
  // Bounded: no growth with the number of frames served beyond allocator noise.
  EXPECT_LT(end_rss, warm_rss + (64u << 20)) << "server memory grew from " << warm_rss << " to " << end_rss;
}

}  // namespace
}  // namespace exactq
