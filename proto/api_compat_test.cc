// Fails when the compiled exactq.v1 API drops a line of the committed snapshot: a
// field, enum value or rpc removed, renumbered or retyped. Additions are allowed
// (refresh the snapshot with //proto:dump_api_surface so they are protected too).
#include <fstream>
#include <set>
#include <string>

#include "api_surface.h"
#include "exactq/v1/exactq.pb.h"
#include "gtest/gtest.h"

namespace exactq::proto {
namespace {

TEST(ApiCompatTest, EverySnapshotLineIsStillInTheApi) {
  std::ifstream snapshot("proto/exactq/v1/api_surface.txt");
  ASSERT_TRUE(snapshot) << "missing proto/exactq/v1/api_surface.txt";
  const std::vector<std::string> current = exactq::proto::ApiSurface(*exactq::v1::ScoreRequest::descriptor()->file());
  const std::set<std::string> now(current.begin(), current.end());
  std::string line;
  int checked = 0;
  while (std::getline(snapshot, line)) {
    if (line.empty()) continue;
    ++checked;
    EXPECT_TRUE(now.count(line)) << "breaking change to exactq.v1: '" << line
                                 << "' is gone (removed, renumbered or retyped). Add a new field "
                                    "instead, or start exactq.v2.";
  }
  EXPECT_GT(checked, 50);
}

TEST(ApiCompatTest, DetectsARetypedField) {
  // The check itself: a snapshot line with another type must not be in the API.
  const std::vector<std::string> current = exactq::proto::ApiSurface(*exactq::v1::ScoreRequest::descriptor()->file());
  const std::set<std::string> now(current.begin(), current.end());
  EXPECT_TRUE(now.count("field exactq.v1.FrameChunk.offset = 3 uint64 optional"));
  EXPECT_FALSE(now.count("field exactq.v1.FrameChunk.offset = 3 uint32 optional"));
  EXPECT_FALSE(now.count("field exactq.v1.FrameChunk.offset = 4 uint64 optional"));
}

}  // namespace
}  // namespace exactq::proto
