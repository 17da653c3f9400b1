#include "server/metrics_exposer.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/server_metrics.h"

namespace exactq::server {
namespace {

int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// GET /metrics; the whole answer, or "" if none came within timeout_ms.
std::string Scrape(int port, int timeout_ms) {
  const int fd = Connect(port);
  if (fd < 0) return "";
  const std::string request = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  if (write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return "";
  }
  std::string answer;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  char buffer[65536];
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n <= 0) break;
    answer.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return answer;
}

class MetricsExposerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto exposer = MetricsExposer::Start("127.0.0.1:0", metrics_.registry, [this] { ++scrapes_; });
    ASSERT_TRUE(exposer.ok()) << exposer.status();
    exposer_ = std::move(*exposer);
    ASSERT_GT(exposer_->port(), 0);
  }

  ServerMetrics metrics_{{"psnr", "ssim"}, BuildInfo{"0.1.0", "abc123", "false"}};
  std::unique_ptr<MetricsExposer> exposer_;
  int scrapes_ = 0;
};

TEST_F(MetricsExposerTest, ServesTheNamesDashboardsRead) {
  metrics_.frames_scored.At({"psnr", "cpu"}).Increment(3);
  metrics_.errors.At({"ScorePair", "INVALID_ARGUMENT"}).Increment();
  metrics_.frame_seconds.At({}).Observe(0.002);
  metrics_.stage_seconds.At({"compute"}).Observe(0.001);
  metrics_.SyncCounter(metrics_.pinned_frame_fallbacks.At({}), 4);
  metrics_.SyncCounter(metrics_.pinned_frame_fallbacks.At({}), 5);
  metrics_.active_streams.At({}).Add(2);
  metrics_.active_streams.At({}).Add(-1);
  const std::string page = Scrape(exposer_->port(), 5000);
  ASSERT_NE(page.find("200 OK"), std::string::npos) << page;
  EXPECT_EQ(scrapes_, 1);
  for (const char* line : {
           "exactq_frames_scored_total{backend=\"cpu\",metric=\"psnr\"} 3\n",
           "exactq_frames_scored_total{backend=\"cuda\",metric=\"ssim\"} 0\n",
           "exactq_errors_total{code=\"INVALID_ARGUMENT\",method=\"ScorePair\"} 1\n",
           "exactq_errors_total{code=\"INTERNAL\",method=\"ScoreStream\"} 0\n",
           "# TYPE exactq_pinned_frame_fallbacks_total counter\n",
           "exactq_pinned_frame_fallbacks_total 5\n",
           "exactq_build_info{cuda=\"false\",revision=\"abc123\",version=\"0.1.0\"} 1\n",
           "exactq_active_streams 1\n",
           "# TYPE exactq_frame_seconds histogram\n",
           "exactq_frame_seconds_count 1\n",
           "exactq_frame_stage_seconds_count{stage=\"compute\"} 1\n",
       }) {
    EXPECT_NE(page.find(line), std::string::npos) << line << "\n" << page;
  }
  // The whole frame is its own histogram: no stage sums the others.
  EXPECT_EQ(page.find("stage=\"total\""), std::string::npos);
}

// Four connections that send half a request and then nothing must not delay a scrape
// past 3 s (civetweb's default would hold each for 30 s on too few workers).
TEST_F(MetricsExposerTest, StalledConnectionsDoNotBlockAScrape) {
  std::vector<int> stalled;
  for (int i = 0; i < 4; ++i) {
    const int fd = Connect(exposer_->port());
    ASSERT_GE(fd, 0);
    const std::string half = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    ASSERT_EQ(write(fd, half.data(), half.size()), static_cast<ssize_t>(half.size()));
    stalled.push_back(fd);
  }
  usleep(200 * 1000);  // the workers have taken the stalled connections
  for (int round = 0; round < 2; ++round) {
    const auto start = std::chrono::steady_clock::now();
    const std::string page = Scrape(exposer_->port(), 3000);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_NE(page.find("exactq_active_streams"), std::string::npos) << "round " << round;
    EXPECT_LT(seconds, 3.0) << "round " << round;
  }
  for (int fd : stalled) close(fd);
}

// The same four connections against civetweb's old settings (2 workers, 30 s timeout)
// do hold the scrape: the test above would catch a return to them.
TEST(MetricsExposerStallTest, TwoWorkersAndALongTimeoutAreBlocked) {
  ServerMetrics metrics({"psnr"}, BuildInfo{"0.1.0", "unknown", "false"});
  auto exposer = MetricsExposer::Start("127.0.0.1:0", metrics.registry, nullptr, MetricsExposerOptions{2, 30000});
  ASSERT_TRUE(exposer.ok()) << exposer.status();
  std::vector<int> stalled;
  for (int i = 0; i < 4; ++i) {
    const int fd = Connect((*exposer)->port());
    ASSERT_GE(fd, 0);
    const std::string half = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    ASSERT_EQ(write(fd, half.data(), half.size()), static_cast<ssize_t>(half.size()));
    stalled.push_back(fd);
  }
  usleep(200 * 1000);
  EXPECT_EQ(Scrape((*exposer)->port(), 1500).find("exactq_active_streams"), std::string::npos);
  for (int fd : stalled) close(fd);  // the workers see the end and are free again
}

TEST(MetricsExposerStartTest, AnAddressInUseIsAnError) {
  ServerMetrics metrics({"psnr"}, BuildInfo{"0.1.0", "unknown", "false"});
  auto first = MetricsExposer::Start("127.0.0.1:0", metrics.registry, nullptr);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = MetricsExposer::Start(absl::StrCat("127.0.0.1:", (*first)->port()), metrics.registry, nullptr);
  EXPECT_FALSE(second.ok());
}

}  // namespace
}  // namespace exactq::server
