// The GPU health reporter on a real gRPC server's health service, fed by a real
// DevicePool (plain C++, so no GPU is needed to lose one).
#include "server/gpu_health.h"

#include <grpcpp/grpcpp.h>

#include "exactq/v1/exactq.grpc.pb.h"
#include "gtest/gtest.h"
#include "tests/testing/grpc_probe.h"

namespace exactq::server {
namespace {

std::vector<GpuDevice> Devices(int n) {
  std::vector<GpuDevice> out;
  for (int i = 0; i < n; ++i) out.push_back({i, "Test GPU", "9.0", 1ull << 30});
  return out;
}

class GpuHealthTest : public ::testing::Test {
 protected:
  void Start(int gpus) {
    DevicePool::Options options;
    options.retry_after = std::chrono::seconds(10);
    options.now = [this] { return now_; };
    pool_ = std::make_unique<DevicePool>(Devices(gpus), options);
    grpc::EnableDefaultHealthCheckService(true);
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&scorer_);  // a server needs one service besides health
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    server_->GetHealthCheckService()->SetServingStatus(true);
    reporter_ = std::make_unique<GpuHealthReporter>(pool_.get(), &metrics_);
    reporter_->SetHealthService(server_->GetHealthCheckService());
  }
  void TearDown() override {
    if (reporter_ != nullptr) reporter_->SetHealthService(nullptr);
    if (server_ != nullptr) server_->Shutdown();
  }
  int Health() { return exactq::testing::HealthStatus("127.0.0.1:" + std::to_string(port_)); }
  double Usable() { return metrics_.usable_gpus.At({}).Value(); }

  DevicePool::Clock::time_point now_{};
  std::unique_ptr<DevicePool> pool_;
  ServerMetrics metrics_{{"psnr"}, BuildInfo{"test", "unknown", "false"}};
  v1::Scorer::Service scorer_;  // every method UNIMPLEMENTED; only health is asked
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::unique_ptr<GpuHealthReporter> reporter_;
};

TEST_F(GpuHealthTest, LosingEveryGpuTurnsHealthNotServingForGood) {
  Start(2);
  EXPECT_EQ(metrics_.configured_gpus.At({}).Value(), 2);
  EXPECT_FALSE(reporter_->Poll());
  EXPECT_EQ(Usable(), 2);
  EXPECT_EQ(Health(), 1);

  pool_->ReportFailure(0, DeviceFault::kPoisoned, "cudaErrorIllegalAddress");
  EXPECT_FALSE(reporter_->Poll());
  EXPECT_EQ(Usable(), 1);
  EXPECT_EQ(Health(), 1);  // capacity lost, but the server still has a GPU

  pool_->ReportFailure(1, DeviceFault::kTransient, "cudaErrorLaunchOutOfResources");
  EXPECT_FALSE(reporter_->Poll());
  EXPECT_EQ(Usable(), 0);
  EXPECT_EQ(Health(), 1);  // cooling down comes back
  now_ += std::chrono::seconds(10);
  reporter_->Poll();
  EXPECT_EQ(Usable(), 1);

  pool_->ReportFailure(1, DeviceFault::kPoisoned, "cudaErrorLaunchFailure");
  EXPECT_TRUE(reporter_->Poll());
  EXPECT_EQ(Usable(), 0);
  EXPECT_EQ(Health(), 2);
  EXPECT_TRUE(reporter_->Poll());
  EXPECT_EQ(Health(), 2);
  const std::string page = metrics_.Render();
  EXPECT_NE(page.find("exactq_usable_gpus 0"), std::string::npos) << page;
  EXPECT_NE(page.find("exactq_configured_gpus 2"), std::string::npos) << page;
}

TEST_F(GpuHealthTest, ACpuOnlyServerStaysServing) {
  Start(0);
  EXPECT_FALSE(reporter_->Poll());
  EXPECT_EQ(Health(), 1);
  EXPECT_EQ(Usable(), 0);
}

}  // namespace
}  // namespace exactq::server
