// libFuzzer target: an uploaded encoded file, as the server takes it in: bytes appended
// to a SpoolFile in chunks (the first input byte picks the chunk size and whether the
// spool limit cuts the upload short), then demuxed and decoded by VideoDecoder through
// the project's AVIOContext callbacks, with the decoded-geometry limit, into Frames.
// Nothing may crash, hang, leak or read out of bounds, whatever the bytes; errors are
// statuses. FFmpeg's libraries are Debian's (not instrumented): ASan and UBSan check
// ExactQ's code and its use of them, and a crash inside them still stops the run.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "engine/decode/spool_file.h"
#include "engine/decode/video_decoder.h"
#include "engine/format/frame.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace exactq;
  if (size < 1) return 0;
  const uint8_t control = data[0];
  ++data;
  --size;
  const size_t chunk = size_t{1} << (4 + (control & 7));  // 16 B .. 2 KiB
  // One input in eight meets a spool limit below its size.
  const uint64_t limit = (control & 0x38) == 0x38 ? size / 2 : uint64_t{1} << 20;
  const char* tmp = std::getenv("TMPDIR");
  absl::StatusOr<std::shared_ptr<SpoolFile>> spool =
      SpoolFile::Create(tmp != nullptr ? tmp : "/tmp", limit, "fuzz upload");
  if (!spool.ok()) std::abort();
  std::unique_ptr<ByteSource> reader = (*spool)->OpenReader();
  for (size_t at = 0; at < size; at += chunk) {
    if (!(*spool)->Append(data + at, std::min(chunk, size - at)).ok()) break;
  }
  (*spool)->Finish();
  DecoderOptions options;
  options.threads = 1;
  options.max_width = 256;  // small pictures keep runs fast
  options.max_height = 256;
  absl::StatusOr<std::unique_ptr<VideoDecoder>> decoder = VideoDecoder::Open(std::move(reader), options);
  if (!decoder.ok()) return 0;
  Frame frame;
  for (int i = 0; i < 64; ++i) {
    absl::StatusOr<bool> more = (*decoder)->ReadFrame(&frame);
    if (!more.ok() || !*more) break;
    if (frame.geometry() != (*decoder)->info().geometry) std::abort();
  }
  return 0;
}
