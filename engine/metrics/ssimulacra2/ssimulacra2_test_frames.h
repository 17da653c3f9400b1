// Synthetic frame pairs for the ssimulacra2 tests, defined by integer formulas so that
// every test (and a later CUDA parity test) can rebuild them anywhere.
//
// A frame has a smooth ramp plus hashed texture in every plane, at any layout and
// depth; a distorted frame adds hashed noise of a given amplitude (in 8-bit steps,
// scaled to the depth) to the rows at and below `first_noisy_row` (in luma rows;
// chroma rows follow their luma rows), clamped to the sample range.
//
//   Frame ref = MakeTestFrame(geometry, /*seed=*/1);
//   Frame dis = MakeTestFrame(geometry, 1, {/*amplitude=*/12, /*first_noisy_row=*/0});

#ifndef EXACTQ_ENGINE_METRICS_SSIMULACRA2_SSIMULACRA2_TEST_FRAMES_H_
#define EXACTQ_ENGINE_METRICS_SSIMULACRA2_SSIMULACRA2_TEST_FRAMES_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "engine/format/frame.h"
#include "engine/format/frame_geometry.h"

namespace exactq {
namespace ssimulacra2 {
namespace testing_frames {

struct Noise {
  int amplitude = 0;        // 0: no noise (the reference frame)
  int first_noisy_row = 0;  // luma row from which the noise starts
};

inline uint32_t Hash32(uint32_t x, uint32_t y, uint32_t seed) {
  uint32_t h = x * 0x9E3779B1u ^ (y + 0x7F4A7C15u) * 0x85EBCA77u ^ seed * 0xC2B2AE3Du;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  return h;
}

// Sample of plane p at (x, y) in 8-bit units (may exceed 0..255 before scaling).
inline int BaseSample8(int plane, int x, int y, uint32_t seed) {
  const int ramp = (x * 3 + y * 2 + static_cast<int>(seed) * 17) % 160;
  const int texture = static_cast<int>(Hash32(x / 2, y / 2, seed + plane) % 40);
  return plane == 0 ? 30 + ramp + texture : 88 + ramp / 2 + texture;
}

inline Frame MakeTestFrame(const FrameGeometry& geometry, uint32_t seed, Noise noise = {}) {
  Frame frame = *Frame::Create(geometry);
  const int depth = geometry.format.bit_depth;
  const int64_t max_value = (int64_t{1} << depth) - 1;
  for (int plane = 0; plane < geometry.plane_count(); ++plane) {
    const int row_scale = geometry.plane_height(plane) == geometry.height ? 1 : 2;
    for (int y = 0; y < geometry.plane_height(plane); ++y) {
      for (int x = 0; x < geometry.plane_width(plane); ++x) {
        int64_t v = int64_t{BaseSample8(plane, x, y, seed)} << (depth - 8);
        // A little sub-8-bit detail at higher depths.
        v += Hash32(x, y, seed * 7 + plane) % (int64_t{1} << (depth - 8));
        if (noise.amplitude > 0 && y * row_scale >= noise.first_noisy_row) {
          const int span = 2 * noise.amplitude + 1;
          const int n = static_cast<int>(Hash32(x, y, seed * 31 + plane + 1000) % span) - noise.amplitude;
          v += int64_t{n} << (depth - 8);
        }
        v = v < 0 ? 0 : (v > max_value ? max_value : v);
        frame.set_sample(plane, x, y, static_cast<uint32_t>(v));
      }
    }
  }
  return frame;
}

// `f` with its content moved left by dx and up by dy luma samples (even where chroma is
// subsampled: whole chroma samples), the last column and row repeated where it runs out;
// then upside down if `flip`. A stream of these is a camera pan (or, flipped, a scene cut)
// over the same picture.
inline Frame MovedFrame(const Frame& f, int dx, int dy, bool flip = false) {
  Frame out = f;
  const FrameGeometry& g = f.geometry();
  const size_t bps = static_cast<size_t>(g.bytes_per_sample());
  for (int p = 0; p < g.plane_count(); ++p) {
    const int w = g.plane_width(p);
    const int h = g.plane_height(p);
    const int pdx = std::min(static_cast<int>(int64_t{dx} * w / g.width), w);
    const int pdy = static_cast<int>(int64_t{dy} * h / g.height);
    for (int y = 0; y < h; ++y) {
      int sy = y + pdy < h - 1 ? y + pdy : h - 1;
      if (flip) sy = h - 1 - sy;
      const uint8_t* row = f.plane_bytes(p) + static_cast<size_t>(sy) * static_cast<size_t>(w) * bps;
      uint8_t* o = out.mutable_plane_bytes(p) + static_cast<size_t>(y) * static_cast<size_t>(w) * bps;
      std::memcpy(o, row + static_cast<size_t>(pdx) * bps, static_cast<size_t>(w - pdx) * bps);
      const uint8_t* last = row + static_cast<size_t>(w - 1) * bps;
      for (int x = w - pdx; x < w; ++x) std::memcpy(o + static_cast<size_t>(x) * bps, last, bps);
    }
  }
  return out;
}

}  // namespace testing_frames
}  // namespace ssimulacra2
}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_SSIMULACRA2_SSIMULACRA2_TEST_FRAMES_H_
