#include "engine/io/frame_payload.h"

#include <cerrno>
#include <cstdio>

#include "absl/strings/str_cat.h"

namespace exactq {

absl::StatusOr<bool> ReadFramePayload(FileHandle& file, int64_t frame_index, bool end_allowed, Frame* frame) {
  const size_t expected = frame->size_bytes();
  errno = 0;
  const size_t got = std::fread(frame->mutable_bytes(), 1, expected, file.get());
  if (got == expected) return true;
  if (std::ferror(file.get())) {
    return file.ErrorStatus(absl::StrCat("read error in frame ", frame_index));
  }
  if (got == 0 && end_allowed) return false;
  return absl::DataLossError(absl::StrCat(file.name(), ": frame ", frame_index, " is truncated: ", got, " of ",
                                          expected, " bytes (", GeometryDescription(frame->geometry()), ")"));
}

}  // namespace exactq
