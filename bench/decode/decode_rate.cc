// The decoder's own rate: decodes a file with engine/decode's VideoDecoder (the code
// the server runs, with the same thread count) into Frames and prints frames/s, so an
// end-to-end rate can be compared with the decoder alone on the same cores.
//   decode_rate FILE [THREADS]   ->   {"frames": N, "seconds": S, "frames_per_second": F}
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "engine/decode/byte_source.h"
#include "engine/decode/video_decoder.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: decode_rate FILE [THREADS]\n");
    return 2;
  }
  exactq::DecoderOptions options;
  options.threads = argc > 2 ? std::atoi(argv[2]) : 1;
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<exactq::ByteSource>> file = exactq::FileByteSource::Open(argv[1]);
  if (!file.ok()) {
    std::fprintf(stderr, "%s\n", std::string(file.status().message()).c_str());
    return 1;
  }
  absl::StatusOr<std::unique_ptr<exactq::VideoDecoder>> decoder = exactq::VideoDecoder::Open(*std::move(file), options);
  if (!decoder.ok()) {
    std::fprintf(stderr, "%s\n", std::string(decoder.status().message()).c_str());
    return 1;
  }
  exactq::Frame frame;
  while (true) {
    absl::StatusOr<bool> more = (*decoder)->ReadFrame(&frame);
    if (!more.ok()) {
      std::fprintf(stderr, "%s\n", std::string(more.status().message()).c_str());
      return 1;
    }
    if (!*more) break;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const long long frames = static_cast<long long>((*decoder)->frames_read());
  std::printf("{\"frames\": %lld, \"seconds\": %.6f, \"frames_per_second\": %.3f}\n", frames, seconds,
              frames / seconds);
  return 0;
}
