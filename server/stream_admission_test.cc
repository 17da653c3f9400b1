#include "server/stream_admission.h"

#include <optional>

#include "gtest/gtest.h"

namespace exactq::server {
namespace {

TEST(StreamAdmissionTest, PeerHostDropsThePort) {
  EXPECT_EQ(StreamAdmission::PeerHost("ipv4:10.0.0.7:53122"), "ipv4:10.0.0.7");
  EXPECT_EQ(StreamAdmission::PeerHost("ipv6:[::1]:5000"), "ipv6:[::1]");
  EXPECT_EQ(StreamAdmission::PeerHost("unix:"), "unix:");
}

TEST(StreamAdmissionTest, EnforcesTotalAndPerPeerLimitsAndReleases) {
  StreamAdmission admission(3, 2);
  auto a = admission.Admit("ipv4:1.1.1.1:1");
  auto b = admission.Admit("ipv4:1.1.1.1:2");
  ASSERT_TRUE(a.ok() && b.ok());
  auto c = admission.Admit("ipv4:1.1.1.1:3");
  EXPECT_EQ(c.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(c.status().message().find("max_streams_per_peer=2"), absl::string_view::npos);
  {
    auto d = admission.Admit("ipv4:2.2.2.2:1");
    ASSERT_TRUE(d.ok());
    auto e = admission.Admit("ipv4:3.3.3.3:1");
    EXPECT_EQ(e.status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_NE(e.status().message().find("max_streams=3"), absl::string_view::npos);
    EXPECT_EQ(admission.active(), 3u);
  }
  EXPECT_EQ(admission.active(), 2u);
  EXPECT_TRUE(admission.Admit("ipv4:3.3.3.3:1").ok());
}

}  // namespace
}  // namespace exactq::server
