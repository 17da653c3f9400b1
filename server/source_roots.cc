#include "server/source_roots.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace exactq::server {
namespace {

// realpath(3); an errno on failure.
bool Resolve(const std::string& path, std::string* resolved, int* error) {
  char buffer[PATH_MAX];
  if (::realpath(path.c_str(), buffer) == nullptr) {
    *error = errno;
    return false;
  }
  *resolved = buffer;
  return true;
}

// A lexical normal form of an absolute path ("." and ".." folded), for deciding
// whether a missing file would have been inside a root.
std::string Normalize(const std::string& path) {
  std::vector<std::string> parts;
  for (absl::string_view part : absl::StrSplit(path, '/', absl::SkipEmpty())) {
    if (part == ".") continue;
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.emplace_back(part);
  }
  std::string out;
  for (const std::string& p : parts) absl::StrAppend(&out, "/", p);
  return out.empty() ? "/" : out;
}

}  // namespace

absl::StatusOr<SourceRoots> SourceRoots::Create(const std::vector<std::string>& roots) {
  SourceRoots result;
  for (const std::string& root : roots) {
    if (root.empty()) continue;
    std::string resolved;
    int error = 0;
    if (!Resolve(root, &resolved, &error)) {
      return absl::InvalidArgumentError(absl::StrCat("--source_root ", root, ": ", std::strerror(error)));
    }
    struct stat st;
    if (::stat(resolved.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return absl::InvalidArgumentError(absl::StrCat("--source_root ", root, ": not a directory"));
    }
    if (resolved.size() > 1 && resolved.back() == '/') resolved.pop_back();
    result.roots_.push_back(resolved);
  }
  return result;
}

bool SourceRoots::Contains(const std::string& resolved) const {
  for (const std::string& root : roots_) {
    if (root == "/") return true;
    if (resolved == root || absl::StartsWith(resolved, root + "/")) return true;
  }
  return false;
}

absl::StatusOr<int> SourceRoots::Open(const std::string& path) const {
  if (roots_.empty()) {
    return absl::PermissionDeniedError(
        absl::StrCat("server path ", path, ": this server reads no files (start it with --source_root DIR)"));
  }
  if (path.empty()) return absl::InvalidArgumentError("server path: empty");
  if (path.find('\0') != std::string::npos) return absl::InvalidArgumentError("server path: contains a NUL byte");
  std::vector<std::string> candidates;
  if (path.front() == '/') {
    candidates.push_back(path);
  } else {
    for (const std::string& root : roots_) candidates.push_back(absl::StrCat(root, "/", path));
  }
  const absl::Status outside =
      absl::PermissionDeniedError(absl::StrCat("server path ", path, ": outside the server's source roots"));
  bool missing_inside = false;
  for (const std::string& candidate : candidates) {
    std::string resolved;
    int error = 0;
    if (!Resolve(candidate, &resolved, &error)) {
      if ((error == ENOENT || error == ENOTDIR) && Contains(Normalize(candidate))) missing_inside = true;
      continue;
    }
    if (!Contains(resolved)) return outside;
    const int fd = ::open(resolved.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) {
        missing_inside = true;
        continue;
      }
      return absl::PermissionDeniedError(absl::StrCat("server path ", path, ": ", std::strerror(errno)));
    }
    // What was opened is what is read: check the descriptor's own path again.
    std::string opened;
    if (!Resolve(absl::StrCat("/proc/self/fd/", fd), &opened, &error) || !Contains(opened)) {
      ::close(fd);
      return outside;
    }
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      return absl::InvalidArgumentError(absl::StrCat("server path ", path, ": not a regular file"));
    }
    return fd;
  }
  if (missing_inside) return absl::NotFoundError(absl::StrCat("server path ", path, ": no such file"));
  return outside;
}

std::vector<std::string> RepeatedFlagValues(int argc, char** argv, const std::string& name) {
  std::vector<std::string> values;
  const std::string with_value = absl::StrCat("--", name, "=");
  const std::string bare = absl::StrCat("--", name);
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") break;
    // Flag names may be spelled with dashes (common/command_line.h).
    const size_t name_end = std::min(arg.find('='), arg.size());
    for (size_t c = 2; c < name_end; ++c) {
      if (arg[c] == '-') arg[c] = '_';
    }
    std::string value;
    if (absl::StartsWith(arg, with_value)) {
      value = arg.substr(with_value.size());
    } else if (arg == bare && i + 1 < argc) {
      value = argv[++i];
    } else {
      continue;
    }
    for (absl::string_view v : absl::StrSplit(value, ',', absl::SkipEmpty())) values.emplace_back(v);
  }
  return values;
}

}  // namespace exactq::server
