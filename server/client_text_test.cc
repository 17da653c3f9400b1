#include "server/client_text.h"

#include <string>

#include "gtest/gtest.h"

namespace exactq::server {
namespace {

TEST(ClientTextTest, ControlCharactersAreEscaped) {
  EXPECT_EQ(ClientText("job\n2026-12-04T00:00:00 info forged\r\x1b[31m"),
            "job\\n2026-12-04T00:00:00 info forged\\r\\x1b[31m");
  EXPECT_EQ(ClientText("unknown metric 'x' \\ \xff"), "unknown metric 'x' \\\\ \\xff");
  EXPECT_EQ(ClientText("plain-job_42"), "plain-job_42");
}

TEST(ClientTextTest, LongTextKeepsABoundedPrefix) {
  const std::string text(3 << 20, '\n');
  const std::string logged = ClientText(text);
  EXPECT_LE(logged.size(), 4 * kLoggedClientBytes + 32);
  EXPECT_NE(logged.find("...(3145728 bytes)"), std::string::npos);
}

}  // namespace
}  // namespace exactq::server
