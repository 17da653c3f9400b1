#include "common/dashed_flags.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace exactq {
namespace {

std::vector<std::string> Rewrite(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  AcceptDashedFlagNames(static_cast<int>(argv.size()), argv.data());
  return std::vector<std::string>(argv.begin(), argv.end());
}

TEST(DashedFlagsTest, RewritesNamesNotValues) {
  EXPECT_EQ(Rewrite({"prog", "--metrics-listen=a-b:1", "--port-file", "x-y", "-", "ref-1.y4m", "-log-level=info"}),
            (std::vector<std::string>{"prog", "--metrics_listen=a-b:1", "--port_file", "x-y", "-", "ref-1.y4m",
                                      "-log_level=info"}));
}

TEST(DashedFlagsTest, StopsAtDoubleDash) {
  EXPECT_EQ(Rewrite({"prog", "--", "--not-a-flag"}), (std::vector<std::string>{"prog", "--", "--not-a-flag"}));
}

}  // namespace
}  // namespace exactq
