// The decoder's own rate: decodes a file with engine/decode's VideoDecoder (the code
// the server runs, with the same thread count) into Frames and prints frames/s, so an
// end-to-end rate can be compared with the decoder alone on the same cores.
// STREAMS copies decode at once (the rate is their frames over the wall time), on the
// CPU or the GPU's video decoder. `keep`: pictures the GPU decodes stay in its memory
// (the server's path when it scores them on that GPU); else they are downloaded.
//   decode_rate FILE [THREADS] [cpu|gpu|auto] [STREAMS] [keep]
//     ->   {"frames": N, "seconds": S, "frames_per_second": F, "streams": K, "decoder": "hevc (gpu)",
//           "kept_on_device": true}
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "engine/decode/byte_source.h"
#include "engine/decode/video_decoder.h"

namespace {

// Decodes the whole file; the frame count, or -1 after printing the error.
long long DecodeFile(const char* path, const exactq::DecoderOptions& options, bool keep, std::string* decoder_name,
                     bool* kept) {
  absl::StatusOr<std::unique_ptr<exactq::ByteSource>> file = exactq::FileByteSource::Open(path);
  if (!file.ok()) {
    std::fprintf(stderr, "%s\n", std::string(file.status().message()).c_str());
    return -1;
  }
  absl::StatusOr<std::unique_ptr<exactq::VideoDecoder>> decoder = exactq::VideoDecoder::Open(*std::move(file), options);
  if (!decoder.ok()) {
    std::fprintf(stderr, "%s\n", std::string(decoder.status().message()).c_str());
    return -1;
  }
  *decoder_name = (*decoder)->info().codec;
  *kept = keep && (*decoder)->KeepPicturesOnDevice();
  exactq::Frame frame;
  while (true) {
    absl::StatusOr<bool> more = (*decoder)->ReadFrame(&frame);
    if (!more.ok()) {
      std::fprintf(stderr, "%s\n", std::string(more.status().message()).c_str());
      return -1;
    }
    if (!*more) break;
  }
  return static_cast<long long>((*decoder)->frames_read());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: decode_rate FILE [THREADS] [cpu|gpu|auto] [STREAMS] [keep]\n");
    return 2;
  }
  exactq::DecoderOptions options;
  options.threads = argc > 2 ? std::atoi(argv[2]) : 1;
  if (argc > 3) {
    absl::StatusOr<exactq::DecodeDevice> device = exactq::ParseDecodeDevice(argv[3]);
    if (!device.ok()) {
      std::fprintf(stderr, "%s\n", std::string(device.status().message()).c_str());
      return 2;
    }
    options.device = *device;
  }
  const int streams = argc > 4 ? std::max(1, std::atoi(argv[4])) : 1;
  const bool keep = argc > 5 && std::string(argv[5]) == "keep";
  const auto start = std::chrono::steady_clock::now();
  std::vector<long long> frames(streams, 0);
  std::vector<std::string> names(streams);
  std::vector<char> kept(streams, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < streams; ++i) {
    threads.emplace_back([&, i] {
      bool k = false;
      frames[i] = DecodeFile(argv[1], options, keep, &names[i], &k);
      kept[i] = k;
    });
  }
  for (std::thread& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  long long total = 0;
  for (long long f : frames) {
    if (f < 0) return 1;
    total += f;
  }
  std::printf(
      "{\"frames\": %lld, \"seconds\": %.6f, \"frames_per_second\": %.3f, \"streams\": %d, "
      "\"decoder\": \"%s\", \"kept_on_device\": %s}\n",
      total, seconds, total / seconds, streams, names[0].c_str(), kept[0] ? "true" : "false");
  return 0;
}
