// Frames for the CPU benchmarks: a corpus pair read from Y4M, and a deeper copy of an
// 8-bit frame.
//
//   Frame ref, dis;
//   std::string why;
//   if (bench::ReadCorpusPair(dir, "p4k.ref.y4m", "p4k_x265_crf26.dist.y4m", &ref, &dis, &why)) ...
//   Frame ref10 = bench::Deepen(ref, 10, /*seed=*/1);
#ifndef EXACTQ_BENCH_COMMON_BENCH_FRAMES_H_
#define EXACTQ_BENCH_COMMON_BENCH_FRAMES_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "engine/format/frame.h"
#include "engine/io/y4m_reader.h"

namespace exactq {
namespace bench {

// The first frame of `path`; false with `why` set when it cannot be read.
inline bool ReadFirstFrame(const std::string& path, Frame* frame, std::string* why) {
  absl::StatusOr<Y4mReader> reader = Y4mReader::Open(path);
  if (!reader.ok()) {
    *why = std::string(reader.status().message());
    return false;
  }
  absl::StatusOr<bool> more = reader->ReadFrame(frame);
  if (!more.ok() || !*more) {
    *why = more.ok() ? path + ": no frame" : std::string(more.status().message());
    return false;
  }
  return true;
}

inline bool ReadCorpusPair(const std::string& dir, const std::string& ref_name, const std::string& dis_name, Frame* ref,
                           Frame* dis, std::string* why) {
  if (dir.empty()) {
    *why = "no corpus (set EXACTQ_CORPUS or --corpus=DIR)";
    return false;
  }
  return ReadFirstFrame(dir + "/" + ref_name, ref, why) && ReadFirstFrame(dir + "/" + dis_name, dis, why);
}

// An 8-bit frame at `depth` bits: every sample v becomes v << (depth - 8) with hashed low
// bits (a function of x, y, plane and seed), so the deeper frame keeps the picture and
// its low bits are not all zero.
inline Frame Deepen(const Frame& in, int depth, uint32_t seed) {
  FrameGeometry g = in.geometry();
  g.format.bit_depth = depth;
  Frame out = *Frame::Create(g);
  const int shift = depth - 8;
  for (int p = 0; p < g.plane_count(); ++p) {
    const int w = g.plane_width(p);
    const int h = g.plane_height(p);
    const uint8_t* src = in.plane8(p);
    uint16_t* dst = out.mutable_plane16(p);
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        const uint32_t hash = (static_cast<uint32_t>(x) * 73856093u) ^ (static_cast<uint32_t>(y) * 19349663u) ^
                              ((seed * 4u + static_cast<uint32_t>(p)) * 83492791u);
        const size_t i = static_cast<size_t>(y) * w + x;
        dst[i] = static_cast<uint16_t>((uint32_t{src[i]} << shift) | (hash % (uint32_t{1} << shift)));
      }
    }
  }
  return out;
}

}  // namespace bench
}  // namespace exactq

#endif  // EXACTQ_BENCH_COMMON_BENCH_FRAMES_H_
