#include "engine/decode/byte_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace exactq {
namespace {

absl::Status ErrnoStatus(int error, const std::string& what) {
  const std::string message = absl::StrCat(what, ": ", std::strerror(error));
  switch (error) {
    case ENOENT:
    case ENOTDIR:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(message);
    default:
      return absl::InternalError(message);
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<ByteSource>> FileByteSource::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, path);
  return FromDescriptor(fd, path);
}

absl::StatusOr<std::unique_ptr<ByteSource>> FileByteSource::FromDescriptor(int fd, std::string name) {
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    return ErrnoStatus(error, name);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(absl::StrCat(name, ": not a regular file"));
  }
  return std::unique_ptr<ByteSource>(new FileByteSource(fd, st.st_size, std::move(name)));
}

FileByteSource::~FileByteSource() { ::close(fd_); }

absl::StatusOr<size_t> FileByteSource::Read(uint8_t* buffer, size_t size) {
  while (true) {
    const ssize_t n = ::pread(fd_, buffer, size, static_cast<off_t>(position_));
    if (n >= 0) {
      position_ += static_cast<uint64_t>(n);
      return static_cast<size_t>(n);
    }
    if (errno != EINTR) return ErrnoStatus(errno, absl::StrCat(name_, ": read"));
  }
}

absl::Status FileByteSource::Seek(uint64_t position) {
  position_ = position;
  return absl::OkStatus();
}

}  // namespace exactq
