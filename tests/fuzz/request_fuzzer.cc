// libFuzzer target: the server's request decoding and frame assembly.
//
// The input is a sequence of length-prefixed ScoreRequest messages (one byte length,
// up to 255 bytes each; the rest of the input is ignored) as a stream would deliver
// them. The first that parses as a header goes through FromWire (validation against
// the limits); every chunk then goes through a FrameAssembler of that geometry, and a
// completed frame through the sample-range check. Nothing may crash, hang, leak or
// read out of bounds, whatever the bytes.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "engine/format/frame.h"
#include "exactq/v1/exactq.pb.h"
#include "server/frame_assembler.h"
#include "server/wire_conversion.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace exactq;
  server::ServerLimits limits;
  limits.max_width = 64;  // keep frames small so the fuzzer explores protocol states
  limits.max_height = 64;
  limits.max_chunk_bytes = 512;
  std::unique_ptr<server::FrameAssembler> assembler;
  size_t pos = 0;
  while (pos < size) {
    const size_t length = data[pos++];
    if (length > size - pos) break;
    v1::ScoreRequest request;
    const bool parsed = request.ParseFromArray(data + pos, static_cast<int>(length));
    pos += length;
    if (!parsed) continue;
    if (request.has_header()) {
      if (assembler != nullptr) continue;  // the server rejects a second header
      absl::StatusOr<server::ScoringRequest> wanted = server::FromWire(request.header(), limits);
      if (!wanted.ok()) return 0;
      assembler = std::make_unique<server::FrameAssembler>(wanted->geometry, limits.max_chunk_bytes);
    } else if (request.has_chunk() && assembler != nullptr) {
      if (!assembler->Add(request.chunk(), server::Clock::now()).ok()) return 0;
      if (assembler->FrameReady()) {
        server::AssembledFrame frame = assembler->TakeFrame();
        (void)ValidateSampleRange(frame.reference);
        (void)ValidateSampleRange(frame.distorted);
      }
    }
  }
  return 0;
}
