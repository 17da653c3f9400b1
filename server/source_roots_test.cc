#include "server/source_roots.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace exactq::server {
namespace {

class SourceRootsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = std::string(std::getenv("TEST_TMPDIR")) + "/roots";
    ::mkdir(base_.c_str(), 0755);
    root_ = base_ + "/root";
    ::mkdir(root_.c_str(), 0755);
    ::mkdir((root_ + "/sub").c_str(), 0755);
    std::ofstream(root_ + "/sub/ref.y4m") << "YUV4MPEG2";
    std::ofstream(base_ + "/secret.txt") << "secret";
    // Every test of the binary shares TEST_TMPDIR: links an earlier one made are fine.
    ASSERT_TRUE(::symlink((base_ + "/secret.txt").c_str(), (root_ + "/out.lnk").c_str()) == 0 || errno == EEXIST);
    ASSERT_TRUE(::symlink((root_ + "/sub/ref.y4m").c_str(), (root_ + "/in.lnk").c_str()) == 0 || errno == EEXIST);
  }
  std::string base_, root_;
};

absl::StatusCode OpenCode(const SourceRoots& roots, const std::string& path) {
  absl::StatusOr<int> fd = roots.Open(path);
  if (fd.ok()) ::close(*fd);
  return fd.status().code();
}

TEST_F(SourceRootsTest, NoRootsRefusesEverything) {
  SourceRoots none;
  EXPECT_EQ(OpenCode(none, root_ + "/sub/ref.y4m"), absl::StatusCode::kPermissionDenied);
}

TEST_F(SourceRootsTest, FilesUnderARootOpen) {
  absl::StatusOr<SourceRoots> roots = SourceRoots::Create({root_});
  ASSERT_TRUE(roots.ok()) << roots.status();
  EXPECT_EQ(OpenCode(*roots, root_ + "/sub/ref.y4m"), absl::StatusCode::kOk);
  EXPECT_EQ(OpenCode(*roots, "sub/ref.y4m"), absl::StatusCode::kOk);  // relative to the root
  EXPECT_EQ(OpenCode(*roots, "in.lnk"), absl::StatusCode::kOk);       // a symlink that stays inside
  EXPECT_EQ(OpenCode(*roots, "sub/../sub/ref.y4m"), absl::StatusCode::kOk);
}

TEST_F(SourceRootsTest, EscapesArePermissionDenied) {
  absl::StatusOr<SourceRoots> roots = SourceRoots::Create({root_});
  ASSERT_TRUE(roots.ok());
  EXPECT_EQ(OpenCode(*roots, "../secret.txt"), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(OpenCode(*roots, base_ + "/secret.txt"), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(OpenCode(*roots, "out.lnk"), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(OpenCode(*roots, "/etc/passwd"), absl::StatusCode::kPermissionDenied);
  // A missing file outside the roots does not reveal whether it exists.
  EXPECT_EQ(OpenCode(*roots, base_ + "/missing"), absl::StatusCode::kPermissionDenied);
  // A root's name as a prefix of a sibling is not inside the root.
  ::mkdir((root_ + "2").c_str(), 0755);
  std::ofstream(root_ + "2/x") << "x";
  EXPECT_EQ(OpenCode(*roots, root_ + "2/x"), absl::StatusCode::kPermissionDenied);
}

TEST_F(SourceRootsTest, MissingUnderARootIsNotFound) {
  absl::StatusOr<SourceRoots> roots = SourceRoots::Create({root_});
  ASSERT_TRUE(roots.ok());
  EXPECT_EQ(OpenCode(*roots, "sub/missing.mkv"), absl::StatusCode::kNotFound);
  EXPECT_EQ(OpenCode(*roots, root_ + "/missing.mkv"), absl::StatusCode::kNotFound);
}

TEST_F(SourceRootsTest, DirectoriesAreNotFiles) {
  absl::StatusOr<SourceRoots> roots = SourceRoots::Create({root_});
  ASSERT_TRUE(roots.ok());
  EXPECT_EQ(OpenCode(*roots, "sub"), absl::StatusCode::kInvalidArgument);
}

TEST(RepeatedFlagValuesTest, CollectsEveryOccurrence) {
  const char* argv[] = {"exactqd", "--source_root=/a",  "--listen=x",        "--source_root",
                        "/b,/c",   "--source_rootx=/d", "--source-root=/e-f"};
  EXPECT_EQ(RepeatedFlagValues(7, const_cast<char**>(argv), "source_root"),
            (std::vector<std::string>{"/a", "/b", "/c", "/e-f"}));
}

}  // namespace
}  // namespace exactq::server
