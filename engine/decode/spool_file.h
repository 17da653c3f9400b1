// SpoolFile: an upload's encoded bytes, written to an unlinked temporary file as they
// arrive and read back by a decoder on another thread, with seeking.
//
// Containers that need seeking (mp4/mov with its index at the end) read the file's
// end before its start; streaming containers (mkv, ts, ivf, Annex B) read straight
// through. Spooling every upload serves both with one path: the writer appends, a
// reader waits for bytes that have not arrived yet and sees the end only when the
// writer finishes. The file is unlinked as soon as it is created, so it is gone when
// the SpoolFile is (or the process dies), and it is bounded: an Append past
// `max_bytes` fails with ResourceExhausted.
//
//   absl::StatusOr<std::shared_ptr<SpoolFile>> spool = SpoolFile::Create("/tmp", 1 << 30, "reference upload");
//   std::unique_ptr<ByteSource> reader = (*spool)->OpenReader();  // for the decoder thread
//   (*spool)->Append(chunk.data(), chunk.size());  // from the receiving thread
//   (*spool)->Finish();                            // the upload is complete
//   (*spool)->Abort(absl::CancelledError("..."));  // or: wake the reader with an error

#ifndef EXACTQ_ENGINE_DECODE_SPOOL_FILE_H_
#define EXACTQ_ENGINE_DECODE_SPOOL_FILE_H_

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/decode/byte_source.h"

namespace exactq {

class SpoolFile : public std::enable_shared_from_this<SpoolFile> {
 public:
  // Creates the unlinked file in `directory` (O_TMPFILE, else mkstemp + unlink).
  static absl::StatusOr<std::shared_ptr<SpoolFile>> Create(const std::string& directory, uint64_t max_bytes,
                                                           std::string name);
  ~SpoolFile();
  SpoolFile(const SpoolFile&) = delete;
  SpoolFile& operator=(const SpoolFile&) = delete;

  // Appends bytes; ResourceExhausted past max_bytes, FailedPrecondition after Finish
  // or Abort. An error aborts the spool (readers see it).
  absl::Status Append(const void* data, size_t size);
  // No more bytes: readers reach the end.
  void Finish();
  // Readers' pending and later reads fail with `status` (the first Abort wins).
  void Abort(absl::Status status);

  // A reader from position 0; it keeps the spool alive.
  std::unique_ptr<ByteSource> OpenReader();

  uint64_t bytes_written() const;
  const std::string& name() const { return name_; }

 private:
  class Reader;
  SpoolFile(int fd, uint64_t max_bytes, std::string name) : fd_(fd), max_bytes_(max_bytes), name_(std::move(name)) {}
  // Blocks until `position` is below the bytes written, or the spool ended; the bytes
  // readable at `position` (0 at the end).
  absl::StatusOr<uint64_t> WaitFor(uint64_t position);

  const int fd_;
  const uint64_t max_bytes_;
  const std::string name_;
  mutable std::mutex mutex_;
  std::condition_variable grew_;
  uint64_t written_ = 0;
  bool finished_ = false;
  absl::Status error_;
};

}  // namespace exactq

#endif  // EXACTQ_ENGINE_DECODE_SPOOL_FILE_H_
