// FrameScorer's placement and fault rules, on any machine. Without a GPU the CUDA
// scorer cannot be built, so the device here is a stand-in: a GpuScorer that computes
// with the CPU metric (real bits) and fails on the frames a test chooses, with the
// DeviceFault the CUDA scorer would attach. The pool, the FrameScorer and the fault
// injection are the real ones; on a GPU host tests/gpu/ drives the real device.
#include <cstring>
#include <map>

#include "engine/metrics/registry.h"
#include "engine/runtime/device_fault.h"
#include "engine/runtime/device_pool.h"
#include "engine/runtime/frame_scorer.h"
#include "engine/runtime/runtime_config.h"
#include "engine/runtime/testing/cpu_metrics_as_gpu.h"
#include "gtest/gtest.h"

namespace exactq {
namespace {

FrameGeometry Geometry() {
  FrameGeometry g;
  g.width = 16;
  g.height = 8;
  g.format = PixelFormat{ChromaLayout::k420, 8};
  return g;
}

uint64_t Bits(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// What the stand-in devices do, shared by the scorers a test creates.
struct StandInDevices {
  // Frames scored per device, and failures to return: device -> {call number -> fault}.
  std::map<int, int> calls;
  std::map<int, std::map<int, DeviceFault>> failures;
  std::map<int, DeviceFault> creation_failures;
  int created = 0;

  GpuScorerFactory Factory() {
    return [this](int device, const FrameGeometry&,
                  const std::vector<GpuMetricRequest>& metrics) -> absl::StatusOr<std::unique_ptr<GpuScorer>> {
      if (auto it = creation_failures.find(device); it != creation_failures.end()) {
        return WithDeviceFault(absl::InternalError("stand-in: cudaStreamCreate failed"), it->second);
      }
      ++created;
      return std::unique_ptr<GpuScorer>(new StandIn(this, device, metrics));
    };
  }

  class StandIn final : public GpuScorer {
   public:
    StandIn(StandInDevices* owner, int device, const std::vector<GpuMetricRequest>& metrics)
        : owner_(owner), device_(device), metrics_(metrics) {}
    absl::StatusOr<GpuFrameScores> Score(const Frame& reference, const Frame& distorted,
                                         const Frame* previous_reference, GpuStageTimes*) override {
      const int call = owner_->calls[device_]++;
      auto& failures = owner_->failures[device_];
      if (auto it = failures.find(call); it != failures.end()) {
        return WithDeviceFault(absl::InternalError("stand-in: kernel failed"), it->second);
      }
      return metrics_.Score(reference, distorted, previous_reference);
    }

   private:
    StandInDevices* owner_;
    int device_;
    stand_in::CpuMetricsAsGpu metrics_;
  };
};

class PlacementTest : public ::testing::Test {
 protected:
  void MakePool(int devices) {
    DevicePool::Options options;
    options.retry_after = std::chrono::seconds(10);
    options.now = [this] { return now_; };
    pool_ = std::make_unique<DevicePool>(stand_in::Devices(devices), options);
  }
  std::unique_ptr<FrameScorer> Scorer(BackendPreference preference = BackendPreference::kAuto) {
    absl::StatusOr<std::unique_ptr<FrameScorer>> s =
        FrameScorer::Create(Geometry(), {{"psnr", {}}}, preference, {pool_.get(), devices_.Factory()});
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? std::move(*s) : nullptr;
  }
  // Frame i: content that differs per frame, so a repeated or skipped frame shows.
  std::pair<Frame, Frame> FramePair(int i) {
    Frame ref = *Frame::Create(Geometry()), dist = *Frame::Create(Geometry());
    for (size_t k = 0; k < ref.size_bytes(); ++k) {
      ref.mutable_bytes()[k] = static_cast<uint8_t>(k * 7 + i);
      dist.mutable_bytes()[k] = static_cast<uint8_t>(k * 7 + i + (k % (3 + i)));
    }
    return {std::move(ref), std::move(dist)};
  }
  // Scores frame i and checks its bits against the CPU metric called directly.
  ScoredFrame ScoreAndCheck(FrameScorer& scorer, int i) {
    auto [ref, dist] = FramePair(i);
    absl::StatusOr<ScoredFrame> scored = scorer.Score(ref, dist);
    EXPECT_TRUE(scored.ok()) << scored.status();
    if (!scored.ok()) return {};
    FrameScores direct = *(*CreateMetric("psnr", {}))->Score(ref, dist);
    EXPECT_EQ(scored->scores.size(), direct.size());
    for (size_t k = 0; k < direct.size() && k < scored->scores.size(); ++k) {
      EXPECT_EQ(Bits(scored->scores[k].value), Bits(direct[k].value)) << "frame " << i;
    }
    return *scored;
  }

  DevicePool::Clock::time_point now_{};
  std::unique_ptr<DevicePool> pool_;
  StandInDevices devices_;
};

TEST_F(PlacementTest, NoDeviceMeansCpuWithNoGpuAndForcedCudaIsRefused) {
  MakePool(0);
  std::unique_ptr<FrameScorer> scorer = Scorer();
  EXPECT_EQ(scorer->placement(), "cpu");
  ScoredFrame f = ScoreAndCheck(*scorer, 0);
  EXPECT_EQ(f.backend, Backend::kCpu);
  EXPECT_EQ(f.fallback_reason, "no_gpu");
  auto forced =
      FrameScorer::Create(Geometry(), {{"psnr", {}}}, BackendPreference::kCuda, {pool_.get(), devices_.Factory()});
  EXPECT_EQ(forced.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(PlacementTest, StreamsSpreadOverTheDevicesInTurn) {
  MakePool(2);
  std::unique_ptr<FrameScorer> a = Scorer(), b = Scorer(), c = Scorer();
  EXPECT_EQ(a->placement(), "cuda:0 (Stand-in)");
  EXPECT_EQ(b->placement(), "cuda:1 (Stand-in)");
  EXPECT_EQ(c->placement(), "cuda:0 (Stand-in)");
  EXPECT_EQ(ScoreAndCheck(*b, 0).backend, Backend::kCuda);
}

TEST_F(PlacementTest, ATransientFailureScoresTheFrameOnTheCpuAndTheDeviceIsRetriedLater) {
  MakePool(1);
  devices_.failures[0][2] = DeviceFault::kTransient;
  std::unique_ptr<FrameScorer> scorer = Scorer();
  std::vector<Backend> backends;
  std::vector<std::string> reasons;
  for (int i = 0; i < 5; ++i) {
    ScoredFrame f = ScoreAndCheck(*scorer, i);
    backends.push_back(f.backend);
    reasons.push_back(f.fallback_reason);
  }
  // Frames 0-1 on the device, frame 2 failed there and was scored on the CPU, 3-4 stay
  // on the CPU while the device cools down.
  EXPECT_EQ(backends,
            (std::vector<Backend>{Backend::kCuda, Backend::kCuda, Backend::kCpu, Backend::kCpu, Backend::kCpu}));
  EXPECT_EQ(reasons[2], "device_error");
  EXPECT_EQ(reasons[3], "device_error");
  EXPECT_EQ(devices_.calls[0], 3);  // the failed frame was not retried on the device
  EXPECT_EQ(pool_->usable(), 0);
  // A new stream meanwhile finds no usable GPU and says why.
  ScoredFrame other = ScoreAndCheck(*Scorer(), 0);
  EXPECT_EQ(other.fallback_reason, "no_gpu");
  // After the back-off the device is tried again, by this stream too.
  now_ += std::chrono::seconds(10);
  ScoredFrame back = ScoreAndCheck(*scorer, 5);
  EXPECT_EQ(back.backend, Backend::kCuda);
  EXPECT_EQ(back.fallback_reason, "");
  EXPECT_EQ(pool_->Snapshot()[0].failures_in_row, 0);
}

TEST_F(PlacementTest, APoisonedDeviceIsLeftByEveryStreamOnItAndNeverComesBack) {
  MakePool(1);
  devices_.failures[0][1] = DeviceFault::kPoisoned;
  std::unique_ptr<FrameScorer> a = Scorer(), b = Scorer();
  EXPECT_EQ(ScoreAndCheck(*a, 0).backend, Backend::kCuda);  // device call 0
  EXPECT_EQ(ScoreAndCheck(*b, 0).backend, Backend::kCpu);   // device call 1: poisoned
  EXPECT_TRUE(pool_->AllLost());
  // `a` leaves the device before touching it again.
  ScoredFrame f = ScoreAndCheck(*a, 1);
  EXPECT_EQ(f.backend, Backend::kCpu);
  EXPECT_EQ(f.fallback_reason, "device_error");
  EXPECT_NE(f.fallback_detail.find("taken out of the pool"), std::string::npos) << f.fallback_detail;
  EXPECT_EQ(devices_.calls[0], 2);
  now_ += std::chrono::hours(1);
  EXPECT_EQ(ScoreAndCheck(*a, 2).backend, Backend::kCpu);
  EXPECT_EQ(ScoreAndCheck(*b, 1).backend, Backend::kCpu);
  EXPECT_EQ(devices_.calls[0], 2);
  auto forced =
      FrameScorer::Create(Geometry(), {{"psnr", {}}}, BackendPreference::kCuda, {pool_.get(), devices_.Factory()});
  EXPECT_EQ(forced.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(forced.status().message().find("cuda:0 lost (stand-in: kernel failed)"), std::string::npos)
      << forced.status();
}

TEST_F(PlacementTest, AStreamMovesToAnotherDeviceWhenItsOwnIsLost) {
  MakePool(2);
  devices_.failures[0][1] = DeviceFault::kPoisoned;
  std::unique_ptr<FrameScorer> scorer = Scorer();
  ASSERT_EQ(scorer->placement(), "cuda:0 (Stand-in)");
  EXPECT_EQ(ScoreAndCheck(*scorer, 0).device, "cuda:0 (Stand-in)");
  EXPECT_EQ(ScoreAndCheck(*scorer, 1).backend, Backend::kCpu);  // failed on cuda:0
  ScoredFrame moved = ScoreAndCheck(*scorer, 2);
  EXPECT_EQ(moved.device, "cuda:1 (Stand-in)");
  EXPECT_FALSE(pool_->AllLost());
  EXPECT_EQ(pool_->usable(), 1);
}

TEST_F(PlacementTest, ForcedCudaReportsTheFailureAndTheDeviceLeavesThePool) {
  MakePool(1);
  devices_.failures[0][0] = DeviceFault::kTransient;
  std::unique_ptr<FrameScorer> scorer = Scorer(BackendPreference::kCuda);
  auto [ref, dist] = FramePair(0);
  absl::StatusOr<ScoredFrame> scored = scorer->Score(ref, dist);
  EXPECT_EQ(scored.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(scored.status().message().find("cuda:0 (Stand-in) failed"), std::string::npos) << scored.status();
  EXPECT_EQ(pool_->usable(), 0);
}

TEST_F(PlacementTest, AFailureToCreateTheDeviceScorerIsReportedAndFallsBack) {
  MakePool(1);
  devices_.creation_failures[0] = DeviceFault::kPoisoned;
  std::unique_ptr<FrameScorer> scorer = Scorer();
  ScoredFrame f = ScoreAndCheck(*scorer, 0);
  EXPECT_EQ(f.backend, Backend::kCpu);
  EXPECT_EQ(f.fallback_reason, "device_error");
  EXPECT_TRUE(pool_->AllLost());
}

TEST_F(PlacementTest, InjectedLossPoisonsTheDeviceThroughTheSamePath) {
  RuntimeConfig config = GetRuntimeConfig();
  RuntimeConfig injected = config;
  injected.faults.lose_gpu_after_frames = 0;
  SetRuntimeConfig(injected);
  MakePool(1);
  std::unique_ptr<FrameScorer> scorer = Scorer();
  ScoredFrame f = ScoreAndCheck(*scorer, 0);
  SetRuntimeConfig(config);
  EXPECT_EQ(f.backend, Backend::kCpu);
  EXPECT_EQ(f.fallback_reason, "device_error");
  EXPECT_NE(f.fallback_detail.find("cudaErrorIllegalAddress"), std::string::npos) << f.fallback_detail;
  EXPECT_EQ(devices_.calls[0], 0);  // the injection stood in for the device call
  EXPECT_TRUE(pool_->AllLost());
}

}  // namespace
}  // namespace exactq
