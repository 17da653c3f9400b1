#include "server/logging.h"

#include "gtest/gtest.h"

namespace exactq::server {
namespace {

TEST(LoggingTest, JsonEscapeKeepsTheLineValidJson) {
  EXPECT_EQ(JsonEscape("error=\"x\" path=C:\\a\nnext\x01"), "error=\\\"x\\\" path=C:\\\\a\\nnext\\u0001");
  // UTF-8 passes as it is; bytes that are not UTF-8 become U+FFFD.
  EXPECT_EQ(JsonEscape("caf\xc3\xa9 \xff\xfe"), "caf\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd");
}

TEST(LoggingTest, RejectsUnknownFormatAndLevel) {
  EXPECT_EQ(ConfigureLogging("xml", "info").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ConfigureLogging("text", "loud").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(ConfigureLogging("json", "warn").ok());
  EXPECT_TRUE(ConfigureLogging("text", "off").ok());
}

}  // namespace
}  // namespace exactq::server
