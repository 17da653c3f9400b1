#include "tools/make_sample/sample_pair.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "engine/io/y4m_writer.h"

namespace exactq {
namespace {

// Limited ("tv") range bounds at 8 bits.
constexpr int kLumaMin = 16;
constexpr int kLumaMax = 235;
constexpr int kChromaMin = 16;
constexpr int kChromaMax = 240;

constexpr int kDomeRadius = 30;
constexpr uint64_t kNoiseSeed = 0x5eed'e8ac'7000'0001ull;

// SplitMix64 (Steele, Lea, Flood 2014): a few integer operations, identical output on
// every platform.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in -amplitude..amplitude (the modulo bias of 2^64 % n is irrelevant here).
  int Symmetric(int amplitude) {
    return static_cast<int>(Next() % static_cast<uint64_t>(2 * amplitude + 1)) - amplitude;
  }

 private:
  uint64_t state_;
};

// A parabolic dome: `height` at the centre, 0 at kDomeRadius and beyond.
int Dome(int dx, int dy, int height) {
  const int r2 = kDomeRadius * kDomeRadius;
  const int d2 = dx * dx + dy * dy;
  return d2 >= r2 ? 0 : height * (r2 - d2) / r2;
}

int Clamp(int value, int low, int high) { return std::min(std::max(value, low), high); }

}  // namespace

Y4mHeader SampleHeader() {
  Y4mHeader header;
  header.geometry = {176, 144, {ChromaLayout::k420, 8}};
  header.frame_rate = {25, 1};
  header.pixel_aspect = {1, 1};
  header.interlace = 'p';
  header.color_range = ColorRange::kLimited;
  return header;
}

Frame MakeSampleReference(int frame_index) {
  const FrameGeometry geometry = SampleHeader().geometry;
  Frame frame = *Frame::Create(geometry);
  // The dome travels right and slightly up; the ripple drifts right.
  const int dome_x = 48 + 40 * frame_index;
  const int dome_y = 80 - 8 * frame_index;
  const int w = geometry.width;
  const int h = geometry.height;

  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const int ramp = kLumaMin + (x * 3 + y * 2) * 150 / ((w - 1) * 3 + (h - 1) * 2);
      const int ripple = std::abs((x + 4 * frame_index) % 32 - 16) / 2;  // 0..8
      const int luma = ramp + ripple + Dome(x - dome_x, y - dome_y, 60);
      frame.set_sample(0, x, y, static_cast<uint32_t>(Clamp(luma, kLumaMin, kLumaMax)));
    }
  }
  const int cw = geometry.plane_width(1);
  const int ch = geometry.plane_height(1);
  for (int y = 0; y < ch; ++y) {
    for (int x = 0; x < cw; ++x) {
      // Chroma sample (x, y) sits over luma (2x, 2y): the dome is measured there.
      const int tint = Dome(2 * x - dome_x, 2 * y - dome_y, 24);
      const int cb = 128 + (x - cw / 2) * 40 / cw - tint;
      const int cr = 128 + (y - ch / 2) * 40 / ch + tint;
      frame.set_sample(1, x, y, static_cast<uint32_t>(Clamp(cb, kChromaMin, kChromaMax)));
      frame.set_sample(2, x, y, static_cast<uint32_t>(Clamp(cr, kChromaMin, kChromaMax)));
    }
  }
  return frame;
}

Frame MakeSampleDistorted(const Frame& reference, int frame_index) {
  const FrameGeometry& geometry = reference.geometry();
  Frame frame = reference;
  SplitMix64 noise(kNoiseSeed + static_cast<uint64_t>(frame_index));

  // Luma: 3x3 box blur (edges clamped, rounded to nearest), then noise in -3..3.
  const int w = geometry.width;
  const int h = geometry.height;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      int sum = 0;
      for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
          sum += static_cast<int>(reference.sample(0, Clamp(x + dx, 0, w - 1), Clamp(y + dy, 0, h - 1)));
        }
      }
      const int luma = (sum + 4) / 9 + noise.Symmetric(3);
      frame.set_sample(0, x, y, static_cast<uint32_t>(Clamp(luma, kLumaMin, kLumaMax)));
    }
  }
  // Chroma: noise in -2..2.
  for (int plane = 1; plane <= 2; ++plane) {
    for (int y = 0; y < geometry.plane_height(plane); ++y) {
      for (int x = 0; x < geometry.plane_width(plane); ++x) {
        const int value = static_cast<int>(reference.sample(plane, x, y)) + noise.Symmetric(2);
        frame.set_sample(plane, x, y, static_cast<uint32_t>(Clamp(value, kChromaMin, kChromaMax)));
      }
    }
  }
  return frame;
}

absl::Status WriteSamplePair(const std::string& ref_path, const std::string& dist_path) {
  absl::StatusOr<Y4mWriter> ref_writer = Y4mWriter::Create(ref_path, SampleHeader());
  if (!ref_writer.ok()) return ref_writer.status();
  absl::StatusOr<Y4mWriter> dist_writer = Y4mWriter::Create(dist_path, SampleHeader());
  if (!dist_writer.ok()) return dist_writer.status();
  for (int i = 0; i < kSampleFrames; ++i) {
    const Frame reference = MakeSampleReference(i);
    if (absl::Status s = ref_writer->WriteFrame(reference); !s.ok()) return s;
    if (absl::Status s = dist_writer->WriteFrame(MakeSampleDistorted(reference, i)); !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = ref_writer->Close(); !s.ok()) return s;
  return dist_writer->Close();
}

}  // namespace exactq
