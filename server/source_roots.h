// SourceRoots: the directories under which clients may name files for the server to
// read (--source_root, repeatable). The trust boundary for server-side paths.
//
// A path is resolved with every symlink followed (realpath) and must land inside a
// root: `..`, absolute paths elsewhere and symlinks that point out are refused with
// PermissionDenied, as is every path when no root is configured. A relative path is
// looked up under each root in order. A missing file under a root is NotFound; a
// missing file outside every root is PermissionDenied (no probing for existence
// outside the roots). The file is opened O_NOFOLLOW and its descriptor re-checked
// through /proc/self/fd, so a symlink swapped in between the check and the open
// cannot lead out. Paths may be logged; contents never are.
//
//   absl::StatusOr<SourceRoots> roots = SourceRoots::Create({"/data/ref", "/data/renditions"});
//   absl::StatusOr<int> fd = roots->Open("title/ref.y4m");  // the caller closes it
#ifndef EXACTQ_SERVER_SOURCE_ROOTS_H_
#define EXACTQ_SERVER_SOURCE_ROOTS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace exactq::server {

class SourceRoots {
 public:
  SourceRoots() = default;  // no roots: every path is refused
  // Each root must exist and be a directory (InvalidArgument naming it).
  static absl::StatusOr<SourceRoots> Create(const std::vector<std::string>& roots);

  bool empty() const { return roots_.empty(); }
  const std::vector<std::string>& roots() const { return roots_; }

  // A read-only descriptor of the regular file `path` names under a root.
  absl::StatusOr<int> Open(const std::string& path) const;

 private:
  bool Contains(const std::string& resolved) const;
  std::vector<std::string> roots_;  // resolved, without a trailing '/'
};

// Every value of a repeatable flag `--name=V` / `--name V` in argv, each split at
// commas (absl keeps only the last occurrence of a flag).
std::vector<std::string> RepeatedFlagValues(int argc, char** argv, const std::string& name);

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_SOURCE_ROOTS_H_
