#include "server/logging.h"

#include "gtest/gtest.h"

namespace exactq::server {
namespace {

TEST(LoggingTest, JsonEscapeKeepsTheLineValidJson) {
  EXPECT_EQ(JsonEscape("error=\"x\" path=C:\\a\nnext\x01"), "error=\\\"x\\\" path=C:\\\\a\\nnext\\u0001");
}

TEST(LoggingTest, RejectsUnknownFormatAndLevel) {
  EXPECT_EQ(ConfigureLogging("xml", "info").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ConfigureLogging("text", "loud").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(ConfigureLogging("json", "warn").ok());
  EXPECT_TRUE(ConfigureLogging("text", "off").ok());
}

}  // namespace
}  // namespace exactq::server
