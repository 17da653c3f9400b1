// ByteSource: the encoded bytes a VideoDecoder demuxes, read through FFmpeg's custom
// I/O (an AVIOContext calls Read and Seek), never through FFmpeg's own protocols.
//
// Two kinds exist: a file the caller opened (FileByteSource: a server-side path,
// checked against the source roots before it is opened) and an upload spooled as it
// arrives (SpoolFile::OpenReader). Keeping I/O on our side means a container can never
// make FFmpeg open another file or a URL (playlists, concat, references in mov).
//
//   absl::StatusOr<std::unique_ptr<ByteSource>> file = FileByteSource::Open("dist.mp4");
//   absl::StatusOr<size_t> n = (*file)->Read(buffer, sizeof buffer);  // 0: end

#ifndef EXACTQ_ENGINE_DECODE_BYTE_SOURCE_H_
#define EXACTQ_ENGINE_DECODE_BYTE_SOURCE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace exactq {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `size` bytes at the current position; 0 only at the end. May block
  // (an upload still arriving).
  virtual absl::StatusOr<size_t> Read(uint8_t* buffer, size_t size) = 0;
  // Moves to an absolute position (may be past the bytes seen so far: later reads
  // wait for them or end).
  virtual absl::Status Seek(uint64_t position) = 0;
  // The total size when known (a file, a finished upload); -1 otherwise.
  virtual int64_t Size() = 0;
  // For messages: "dist.mp4", "reference upload".
  virtual const std::string& name() const = 0;
};

// A regular file read with pread; the descriptor is the caller's choice of what was
// checked (see server/source_roots.h), so nothing is resolved again after the check.
class FileByteSource : public ByteSource {
 public:
  // NotFound / PermissionDenied / InvalidArgument (not a regular file) from open/fstat.
  static absl::StatusOr<std::unique_ptr<ByteSource>> Open(const std::string& path);
  // Takes ownership of an open descriptor; `name` appears in errors.
  static absl::StatusOr<std::unique_ptr<ByteSource>> FromDescriptor(int fd, std::string name);
  ~FileByteSource() override;

  absl::StatusOr<size_t> Read(uint8_t* buffer, size_t size) override;
  absl::Status Seek(uint64_t position) override;
  int64_t Size() override { return size_; }
  const std::string& name() const override { return name_; }

 private:
  FileByteSource(int fd, int64_t size, std::string name) : fd_(fd), size_(size), name_(std::move(name)) {}
  int fd_;
  int64_t size_;
  uint64_t position_ = 0;
  std::string name_;
};

}  // namespace exactq

#endif  // EXACTQ_ENGINE_DECODE_BYTE_SOURCE_H_
