// Test frames for vmaf: a smooth pattern with texture as the reference, and a noisy,
// slightly blurred copy as the distorted frame, at any size, layout and depth. Seeded,
// deterministic.

#ifndef EXACTQ_ENGINE_METRICS_VMAF_VMAF_TEST_FRAMES_H_
#define EXACTQ_ENGINE_METRICS_VMAF_VMAF_TEST_FRAMES_H_

#include <algorithm>
#include <cstdint>

#include "engine/format/frame.h"
#include "engine/format/frame_geometry.h"

namespace exactq {
namespace vmaf {
namespace testing_frames {

inline uint32_t Mix(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

inline FrameGeometry Geometry(int width, int height, int depth, ChromaLayout layout = ChromaLayout::k420) {
  return FrameGeometry{width, height, PixelFormat{layout, depth}};
}

// The reference's luma at (x, y), shifted by `shift` pixels (a pan), in [0, 255] * 2^(depth-8)
// plus low bits of noise at higher depths.
inline uint32_t ReferenceSample(int x, int y, int shift, int depth, uint32_t seed) {
  const int xs = x + shift;
  const uint32_t base = static_cast<uint32_t>(((xs * 3 + y * 2) % 160) + 40 + ((xs / 7 + y / 5) % 2) * 30);
  const uint32_t noise = Mix(static_cast<uint32_t>(xs) * 9176u ^ static_cast<uint32_t>(y) * 31u ^ seed) % 9;
  const uint32_t v8 = base + noise;
  const uint32_t low = depth > 8 ? Mix(static_cast<uint32_t>(xs + 7 * y) ^ seed) % (1u << (depth - 8)) : 0;
  return (v8 << (depth - 8)) + low;
}

// distortion 0 returns the reference itself.
inline Frame MakeFrame(const FrameGeometry& geometry, int shift, int distortion, uint32_t seed = 1) {
  Frame frame = *Frame::Create(geometry);
  const int depth = geometry.format.bit_depth;
  const int max_value = (1 << depth) - 1;
  for (int plane = 0; plane < geometry.plane_count(); ++plane) {
    for (int y = 0; y < geometry.plane_height(plane); ++y) {
      for (int x = 0; x < geometry.plane_width(plane); ++x) {
        uint32_t value = uint32_t{1} << (depth - 1);
        if (plane == 0) {
          int v = static_cast<int>(ReferenceSample(x, y, shift, depth, seed));
          if (distortion > 0) {
            // A horizontal blur plus noise.
            const int right =
                static_cast<int>(ReferenceSample(std::min(x + 1, geometry.width - 1), y, shift, depth, seed));
            const int noise =
                static_cast<int>(Mix(static_cast<uint32_t>(x * 131 + y * 7919) ^ (seed * 7)) % (2 * distortion + 1)) -
                distortion;
            v = (v + right) / 2 + noise * (1 << (depth - 8));
          }
          value = static_cast<uint32_t>(std::clamp(v, 0, max_value));
        }
        frame.set_sample(plane, x, y, value);
      }
    }
  }
  return frame;
}

}  // namespace testing_frames
}  // namespace vmaf
}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_VMAF_VMAF_TEST_FRAMES_H_
