// Synthetic frame pairs for the ssim tests, defined by formulas that
// testdata/ssim_oracle.py repeats, so that the oracle can derive their scores.

#ifndef EXACTQ_ENGINE_METRICS_SSIM_SSIM_TEST_FRAMES_H_
#define EXACTQ_ENGINE_METRICS_SSIM_SSIM_TEST_FRAMES_H_

#include <cstdint>

#include "engine/format/frame.h"
#include "engine/format/frame_geometry.h"

namespace exactq {
namespace ssim {
namespace testing_frames {

enum class Kind {
  kRamp,      // (7x + 5y) mod 200 + 20, scaled to the depth
  kNoisy,     // the ramp plus hash mod 23
  kInverted,  // 255 - ramp, scaled: negative covariance with kRamp
  kRandom,    // hash mod 2^depth
  kBlack,     // 0
  kWhite,     // 2^depth - 1
};

inline uint32_t Hash32(uint32_t x, uint32_t y, uint32_t seed) {
  return (x * 73856093u) ^ (y * 19349663u) ^ (seed * 83492791u);
}

inline uint32_t SampleOf(Kind kind, int x, int y, int depth, uint32_t seed) {
  const int shift = depth - 8;
  const uint32_t ramp = static_cast<uint32_t>((x * 7 + y * 5) % 200 + 20);
  const uint32_t hash = Hash32(static_cast<uint32_t>(x), static_cast<uint32_t>(y), seed);
  switch (kind) {
    case Kind::kRamp:
      return ramp << shift;
    case Kind::kNoisy:
      return (ramp + hash % 23) << shift;
    case Kind::kInverted:
      return (255 - ramp) << shift;
    case Kind::kRandom:
      return hash % (uint32_t{1} << depth);
    case Kind::kBlack:
      return 0;
    case Kind::kWhite:
      return (uint32_t{1} << depth) - 1;
  }
  return 0;
}

// A frame of the given geometry whose luma follows `kind`; chroma is mid-grey (ssim
// never reads it).
inline Frame MakeFrame(const FrameGeometry& geometry, Kind kind, uint32_t seed = 1) {
  Frame frame = *Frame::Create(geometry);
  const int depth = geometry.format.bit_depth;
  for (int plane = 0; plane < geometry.plane_count(); ++plane) {
    for (int y = 0; y < geometry.plane_height(plane); ++y) {
      for (int x = 0; x < geometry.plane_width(plane); ++x) {
        frame.set_sample(plane, x, y, plane == 0 ? SampleOf(kind, x, y, depth, seed) : uint32_t{1} << (depth - 1));
      }
    }
  }
  return frame;
}

inline FrameGeometry Geometry(int width, int height, int depth, ChromaLayout layout = ChromaLayout::k420) {
  return FrameGeometry{width, height, PixelFormat{layout, depth}};
}

}  // namespace testing_frames
}  // namespace ssim
}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_SSIM_SSIM_TEST_FRAMES_H_
