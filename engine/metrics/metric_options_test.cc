#include "engine/metrics/metric_options.h"

#include <string>

#include "gtest/gtest.h"

namespace exactq {
namespace {

MetricInfo ExampleInfo() {
  MetricInfo info;
  info.name = "example";
  info.options = {{"flag", "false", ""}, {"scale", "1.5", ""}, {"count", "3", ""}};
  return info;
}

TEST(MetricOptionParserTest, DefaultsApplyWhenNotGiven) {
  absl::StatusOr<MetricOptionParser> parser = MetricOptionParser::Create(ExampleInfo(), {});
  ASSERT_TRUE(parser.ok());
  EXPECT_EQ(*parser->GetBool("flag"), false);
  EXPECT_EQ(*parser->GetDouble("scale"), 1.5);
  EXPECT_EQ(*parser->GetInt("count"), 3);
}

TEST(MetricOptionParserTest, GivenValuesWin) {
  absl::StatusOr<MetricOptionParser> parser =
      MetricOptionParser::Create(ExampleInfo(), {{"flag", "TRUE"}, {"scale", "-2.25"}, {"count", "12"}});
  ASSERT_TRUE(parser.ok());
  EXPECT_EQ(*parser->GetBool("flag"), true);
  EXPECT_EQ(*parser->GetDouble("scale"), -2.25);
  EXPECT_EQ(*parser->GetInt("count"), 12);
  EXPECT_EQ(*MetricOptionParser::Create(ExampleInfo(), {{"flag", "1"}})->GetBool("flag"), true);
  EXPECT_EQ(*MetricOptionParser::Create(ExampleInfo(), {{"flag", "0"}})->GetBool("flag"), false);
}

TEST(MetricOptionParserTest, UnknownOptionIsNamedWithTheKnownOnes) {
  absl::StatusOr<MetricOptionParser> parser = MetricOptionParser::Create(ExampleInfo(), {{"flga", "true"}});
  ASSERT_FALSE(parser.ok());
  EXPECT_EQ(parser.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(parser.status().message()),
            "unknown option 'flga' for metric 'example' (known: flag, scale, count)");
}

TEST(MetricOptionParserTest, BadValuesAreNamed) {
  absl::StatusOr<MetricOptionParser> parser =
      MetricOptionParser::Create(ExampleInfo(), {{"flag", "yes"}, {"scale", "nan"}, {"count", "2.5"}});
  ASSERT_TRUE(parser.ok());
  EXPECT_EQ(std::string(parser->GetBool("flag").status().message()),
            "option 'flag' of metric 'example' is 'yes'; expected true or false");
  EXPECT_EQ(parser->GetDouble("scale").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(parser->GetInt("count").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(MetricOptionParserTest, ReadingAnUndeclaredOptionIsAnInternalError) {
  absl::StatusOr<MetricOptionParser> parser = MetricOptionParser::Create(ExampleInfo(), {});
  ASSERT_TRUE(parser.ok());
  EXPECT_EQ(parser->GetBool("other").status().code(), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace exactq
