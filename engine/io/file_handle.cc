#include "engine/io/file_handle.h"

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace exactq {

absl::StatusOr<FileHandle> FileHandle::Open(const std::string& path, const char* mode) {
  errno = 0;
  std::FILE* stream = std::fopen(path.c_str(), mode);
  if (stream == nullptr) {
    const int error = errno;
    return absl::Status(absl::ErrnoToStatusCode(error),
                        absl::StrCat("cannot open '", path, "': ", std::strerror(error)));
  }
  return FileHandle(stream, path, /*owned=*/true);
}

FileHandle FileHandle::Borrow(std::FILE* stream, std::string name) {
  return FileHandle(stream, std::move(name), /*owned=*/false);
}

FileHandle::FileHandle(FileHandle&& other) noexcept
    : stream_(std::exchange(other.stream_, nullptr)), name_(std::move(other.name_)), owned_(other.owned_) {}

FileHandle& FileHandle::operator=(FileHandle&& other) noexcept {
  if (this != &other) {
    Close().IgnoreError();
    stream_ = std::exchange(other.stream_, nullptr);
    name_ = std::move(other.name_);
    owned_ = other.owned_;
  }
  return *this;
}

FileHandle::~FileHandle() { Close().IgnoreError(); }

absl::Status FileHandle::Close() {
  if (stream_ == nullptr) return absl::OkStatus();
  std::FILE* stream = std::exchange(stream_, nullptr);
  errno = 0;
  // A borrowed stream stays open; fflush is not applied to it because on an input
  // stream glibc's fflush discards read-ahead. Writers flush before closing.
  bool failed = std::ferror(stream) != 0;
  int error = errno;
  if (owned_ && std::fclose(stream) != 0 && !failed) {
    failed = true;
    error = errno;
  }
  if (!failed) return absl::OkStatus();
  return absl::Status(
      error != 0 ? absl::ErrnoToStatusCode(error) : absl::StatusCode::kDataLoss,
      absl::StrCat(name_, ": error while closing: ", error != 0 ? std::strerror(error) : "stream error"));
}

absl::Status FileHandle::ErrorStatus(const std::string& what) const {
  const int error = errno;
  return absl::Status(error != 0 ? absl::ErrnoToStatusCode(error) : absl::StatusCode::kDataLoss,
                      absl::StrCat(name_, ": ", what, ": ", error != 0 ? std::strerror(error) : "stream error"));
}

}  // namespace exactq
