// FileHandle: a stdio stream that the readers and writers either own (a file they
// opened by path) or borrow (stdin, stdout, a pipe the caller opened).
//
// Owning closes the stream on destruction; borrowing never does. Errors name the
// stream ("p720.ref.y4m", "stdin") so a message says which input was bad.
//
//   absl::StatusOr<FileHandle> file = FileHandle::Open("ref.y4m", "rb");
//   FileHandle input = FileHandle::Borrow(stdin, "stdin");

#ifndef EXACTQ_ENGINE_IO_FILE_HANDLE_H_
#define EXACTQ_ENGINE_IO_FILE_HANDLE_H_

#include <cstdio>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace exactq {

class FileHandle {
 public:
  // Opens `path` with fopen `mode`; NotFound / PermissionDenied / ... from errno.
  static absl::StatusOr<FileHandle> Open(const std::string& path, const char* mode);
  // Wraps a stream the caller keeps open and closes.
  static FileHandle Borrow(std::FILE* stream, std::string name);

  FileHandle(FileHandle&& other) noexcept;
  FileHandle& operator=(FileHandle&& other) noexcept;
  FileHandle(const FileHandle&) = delete;
  FileHandle& operator=(const FileHandle&) = delete;
  ~FileHandle();

  std::FILE* get() const { return stream_; }
  const std::string& name() const { return name_; }

  // Closes an owned stream (fclose flushes it); a borrowed one stays open. Reports a
  // stream error seen so far. Idempotent.
  absl::Status Close();

  // A status for the stream's current error (errno-based), prefixed with its name.
  absl::Status ErrorStatus(const std::string& what) const;

 private:
  FileHandle(std::FILE* stream, std::string name, bool owned)
      : stream_(stream), name_(std::move(name)), owned_(owned) {}

  std::FILE* stream_ = nullptr;
  std::string name_;
  bool owned_ = false;
};

}  // namespace exactq

#endif  // EXACTQ_ENGINE_IO_FILE_HANDLE_H_
