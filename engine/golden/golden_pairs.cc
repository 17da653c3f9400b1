#include "engine/golden/golden_pairs.h"

#include <cstring>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace exactq::golden {

namespace {

FrameGeometry Geometry(int width, int height, ChromaLayout layout, int bit_depth) {
  FrameGeometry g;
  g.width = width;
  g.height = height;
  g.format.layout = layout;
  g.format.bit_depth = bit_depth;
  return g;
}

// A fixed integer recipe: a gradient with a pattern of ripples over the whole range,
// and for the distorted picture a deterministic noise of a few code values, clamped.
uint32_t Sample(const GoldenPair& pair, int plane, int x, int y, bool distorted, uint32_t seed) {
  const uint32_t max = pair.geometry.max_sample_value();
  const uint64_t w = static_cast<uint64_t>(pair.geometry.plane_width(plane));
  const uint64_t h = static_cast<uint64_t>(pair.geometry.plane_height(plane));
  uint64_t v = (static_cast<uint64_t>(x) * max) / (w > 1 ? w - 1 : 1) / 2 +
               (static_cast<uint64_t>(y) * max) / (h > 1 ? h - 1 : 1) / 3 +
               ((static_cast<uint64_t>(x * 7 + y * 13 + plane * 29) % 17) * (max / 64));
  v %= (static_cast<uint64_t>(max) + 1);
  if (!distorted) return static_cast<uint32_t>(v);
  // xorshift32 per sample position: noise in -4..4 code values (scaled above 8 bits).
  uint32_t s = seed ^ (static_cast<uint32_t>(x) * 0x9E3779B1u) ^ (static_cast<uint32_t>(y) * 0x85EBCA77u) ^
               (static_cast<uint32_t>(plane) * 0xC2B2AE3Du);
  s ^= s << 13;
  s ^= s >> 17;
  s ^= s << 5;
  const int64_t noise = (static_cast<int64_t>(s % 9) - 4) * (1 << (pair.geometry.format.bit_depth - 8));
  int64_t d = static_cast<int64_t>(v) + noise;
  if (d < 0) d = 0;
  if (d > max) d = max;
  return static_cast<uint32_t>(d);
}

}  // namespace

const std::vector<GoldenPair>& GoldenPairs() {
  static const std::vector<GoldenPair>* pairs = new std::vector<GoldenPair>{
      {"yuv420p_64x64",
       Geometry(64, 64, ChromaLayout::k420, 8),
       {{"psnr", {}}, {"ssim", {{"enable_db", "true"}}}, {"ssimulacra2", {}}}},
      {"yuv422p10_48x32",
       Geometry(48, 32, ChromaLayout::k422, 10),
       {{"psnr", {{"enable_mse", "true"}}}, {"ssim", {}}, {"ssimulacra2", {{"yuv_matrix", "1"}}}}},
      {"yuv444p12_33x21", Geometry(33, 21, ChromaLayout::k444, 12), {{"psnr", {}}, {"ssim", {}}, {"ssimulacra2", {}}}},
      {"gray16_24x16", Geometry(24, 16, ChromaLayout::k400, 16), {{"psnr", {}}, {"ssim", {}}}},
  };
  return *pairs;
}

Frame MakePicture(const GoldenPair& pair, bool distorted) {
  absl::StatusOr<Frame> frame = Frame::Create(pair.geometry);
  // A seed from the name (FNV-1a), the same on every platform.
  uint32_t stable = 2166136261u;
  for (char c : pair.name) stable = (stable ^ static_cast<uint8_t>(c)) * 16777619u;
  stable |= 1u;
  for (int p = 0; p < pair.geometry.plane_count(); ++p) {
    const int w = pair.geometry.plane_width(p);
    const int h = pair.geometry.plane_height(p);
    uint8_t* out = frame->mutable_plane_bytes(p);
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        const uint32_t v = Sample(pair, p, x, y, distorted, stable);
        const size_t i = static_cast<size_t>(y) * w + x;
        if (pair.geometry.bytes_per_sample() == 1) {
          out[i] = static_cast<uint8_t>(v);
        } else {
          out[2 * i] = static_cast<uint8_t>(v & 0xFF);  // little endian on the wire
          out[2 * i + 1] = static_cast<uint8_t>(v >> 8);
        }
      }
    }
  }
  return std::move(*frame);
}

const std::vector<GoldenValue>& GoldenValues() {
  static const std::vector<GoldenValue>* values = new std::vector<GoldenValue>{
#include "engine/golden/golden_values.inc"
  };
  return *values;
}

uint64_t Bits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

double FromBits(uint64_t bits) {
  double value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

namespace {
std::string Show(double value) { return absl::StrFormat("%.17g (0x%016x)", value, Bits(value)); }
}  // namespace

int Compare(const GoldenPair& pair, const std::string& metric, int definition_version,
            const std::vector<NamedScore>& scores, const std::string& where, std::vector<Difference>* differences) {
  std::map<std::string, uint64_t> golden;
  for (const GoldenValue& v : GoldenValues()) {
    if (pair.name == v.pair && metric == v.metric && v.definition_version == definition_version) {
      golden[v.output] = v.bits;
    }
  }
  if (golden.empty()) {
    differences->push_back({pair.name, metric, "", where,
                            absl::StrCat("no golden values for ", metric, " definition version ", definition_version,
                                         " (regenerate golden_values.inc)")});
    return 0;
  }
  int compared = 0;
  std::set<std::string> seen;
  for (const NamedScore& s : scores) {
    seen.insert(s.name);
    auto it = golden.find(s.name);
    if (it == golden.end()) {
      differences->push_back({pair.name, metric, s.name, where, "an output the golden set does not have"});
      continue;
    }
    ++compared;
    if (Bits(s.value) != it->second) {
      differences->push_back({pair.name, metric, s.name, where,
                              absl::StrCat("got ", Show(s.value), ", golden ", Show(FromBits(it->second)))});
    }
  }
  for (const auto& [output, bits] : golden) {
    if (seen.count(output) == 0) {
      differences->push_back({pair.name, metric, output, where, "missing from the answer"});
    }
  }
  return compared;
}

std::string Describe(const Difference& d) {
  return absl::StrCat(d.where, ": ", d.pair, " ", d.metric, d.output.empty() ? "" : " ", d.output, ": ", d.detail);
}

}  // namespace exactq::golden
