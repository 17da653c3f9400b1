#include "engine/decode/spool_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace exactq {

class SpoolFile::Reader : public ByteSource {
 public:
  explicit Reader(std::shared_ptr<SpoolFile> spool) : spool_(std::move(spool)) {}

  absl::StatusOr<size_t> Read(uint8_t* buffer, size_t size) override {
    absl::StatusOr<uint64_t> available = spool_->WaitFor(position_);
    if (!available.ok()) return available.status();
    const size_t want = static_cast<size_t>(std::min<uint64_t>(size, *available));
    if (want == 0) return size_t{0};
    while (true) {
      const ssize_t n = ::pread(spool_->fd_, buffer, want, static_cast<off_t>(position_));
      if (n >= 0) {
        position_ += static_cast<uint64_t>(n);
        return static_cast<size_t>(n);
      }
      if (errno != EINTR)
        return absl::InternalError(absl::StrCat(spool_->name_, ": spool read: ", std::strerror(errno)));
    }
  }
  absl::Status Seek(uint64_t position) override {
    position_ = position;
    return absl::OkStatus();
  }
  int64_t Size() override {
    std::lock_guard<std::mutex> lock(spool_->mutex_);
    return spool_->finished_ ? static_cast<int64_t>(spool_->written_) : -1;
  }
  const std::string& name() const override { return spool_->name_; }

 private:
  std::shared_ptr<SpoolFile> spool_;
  uint64_t position_ = 0;
};

absl::StatusOr<std::shared_ptr<SpoolFile>> SpoolFile::Create(const std::string& directory, uint64_t max_bytes,
                                                             std::string name) {
  int fd = ::open(directory.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {
    // File systems without O_TMPFILE: a named file, unlinked at once.
    std::string path_template = absl::StrCat(directory, "/exactq-spool-XXXXXX");
    std::vector<char> path(path_template.begin(), path_template.end());
    path.push_back('\0');
    fd = ::mkostemp(path.data(), O_CLOEXEC);
    if (fd < 0) {
      return absl::InternalError(
          absl::StrCat(name, ": cannot create a spool file in ", directory, ": ", std::strerror(errno)));
    }
    ::unlink(path.data());
  }
  return std::shared_ptr<SpoolFile>(new SpoolFile(fd, max_bytes, std::move(name)));
}

SpoolFile::~SpoolFile() { ::close(fd_); }

absl::Status SpoolFile::Append(const void* data, size_t size) {
  uint64_t offset;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!error_.ok()) return error_;
    if (finished_) return absl::FailedPreconditionError(absl::StrCat(name_, ": bytes after the end of the upload"));
    if (size > max_bytes_ - written_) {
      error_ = absl::ResourceExhaustedError(
          absl::StrCat(name_, ": the upload exceeds the spool limit of ", max_bytes_, " bytes"));
      grew_.notify_all();
      return error_;
    }
    offset = written_;
  }
  // Only the receiving thread appends, so the region past `written_` is ours.
  const uint8_t* bytes = static_cast<const uint8_t*>(data);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pwrite(fd_, bytes + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      absl::Status status =
          absl::ResourceExhaustedError(absl::StrCat(name_, ": spool write: ", std::strerror(n < 0 ? errno : ENOSPC)));
      Abort(status);
      return status;
    }
    done += static_cast<size_t>(n);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  written_ += size;
  grew_.notify_all();
  return absl::OkStatus();
}

void SpoolFile::Finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  finished_ = true;
  grew_.notify_all();
}

void SpoolFile::Abort(absl::Status status) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (error_.ok()) error_ = std::move(status);
  grew_.notify_all();
}

std::unique_ptr<ByteSource> SpoolFile::OpenReader() { return std::make_unique<Reader>(shared_from_this()); }

uint64_t SpoolFile::bytes_written() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return written_;
}

absl::StatusOr<uint64_t> SpoolFile::WaitFor(uint64_t position) {
  std::unique_lock<std::mutex> lock(mutex_);
  grew_.wait(lock, [&] { return !error_.ok() || finished_ || position < written_; });
  if (!error_.ok()) return error_;
  return position < written_ ? written_ - position : 0;
}

}  // namespace exactq
