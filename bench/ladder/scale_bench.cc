// scale_bench: milliseconds to scale one picture with the exact scaler at the sizes a
// ladder scales to (a rung up to its reference; one case down), one thread.
//
//   bazel run --config=nocuda //bench/ladder:scale_bench -- [--reps=7] [--reference_reps=2]
//       [--json=FILE] [--commit=SHA] [--dirty=true|false]
//
// Paths, for each case:
//   reference        ScaleBicubicReference: the definition as a plain loop (clamped indices
//                    per sample, whole-plane passes into int64);
//   ScaleBicubic     one call: taps computed, a picture allocated, then scaled;
//   scaler avx2      BicubicScaler::Scale, taps made once, the output buffer reused (what a
//   scaler baseline  ladder's decoding thread runs), in each build of the kernels this CPU runs.
// Every repetition runs every path once in turn after one warm-up round; the reference
// runs in the first --reference_reps rounds only. Printed per path: median and best wall
// ms, and whether its bytes equal the reference's (exits 1 if not). Pictures are
// synthetic (integer arithmetic: the time does not depend on the content).

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "bench/common/cpu_bench.h"
#include "engine/format/frame.h"
#include "engine/scale/bicubic_scaler.h"
#include "engine/scale/bicubic_scaler_reference.h"

namespace exactq {
namespace scale {
namespace {

struct Case {
  int from_width, from_height, to_width, to_height, depth;
};

const Case kCases[] = {
    {1920, 1080, 3840, 2160, 8},  {1280, 720, 3840, 2160, 8}, {2560, 1440, 3840, 2160, 8},
    {1920, 1080, 3840, 2160, 10}, {960, 540, 1920, 1080, 8},  {3840, 2160, 1920, 1080, 8},
};

Frame Synthetic(const FrameGeometry& g) {
  Frame f = *Frame::Create(g);
  const uint32_t max_value = g.max_sample_value();
  for (int p = 0; p < g.plane_count(); ++p) {
    for (int y = 0; y < g.plane_height(p); ++y) {
      for (int x = 0; x < g.plane_width(p); ++x) {
        const uint32_t h = (static_cast<uint32_t>(x) * 73856093u) ^ (static_cast<uint32_t>(y) * 19349663u);
        f.set_sample(p, x, y, ((x / 3 + y / 2) * 7 + h % 29) % (max_value + 1));
      }
    }
  }
  return f;
}

struct Path {
  std::string label;
  std::function<const Frame*()> run;  // the picture it made
  bench::Samples samples;
  bool exact = true;
  bool reference = false;
};

bool RunCase(const Case& c, int reps, int reference_reps, bench::Results* results) {
  const PixelFormat format{ChromaLayout::k420, c.depth};
  const FrameGeometry from{c.from_width, c.from_height, format}, to{c.to_width, c.to_height, format};
  const Frame source = Synthetic(from);
  const std::string name = absl::StrCat(c.from_width, "x", c.from_height, "_to_", c.to_width, "x", c.to_height, "_",
                                        PixelFormatName(format));
  std::printf("%s -> %s\n", GeometryDescription(from).c_str(), GeometryDescription(to).c_str());

  absl::StatusOr<Frame> want = ScaleBicubicReference(source, to);
  if (!want.ok()) {
    std::fprintf(stderr, "%s\n", want.status().ToString().c_str());
    return false;
  }
  Frame reference_out, call_out, avx2_out, baseline_out;
  absl::StatusOr<BicubicScaler> avx2 = BicubicScaler::Create(from, to, ScalerIsa::kAvx2);
  absl::StatusOr<BicubicScaler> baseline = BicubicScaler::Create(from, to, ScalerIsa::kBaseline);
  if (!avx2.ok() || !baseline.ok()) return false;

  std::vector<Path> paths;
  paths.push_back({"reference", [&] {
                     reference_out = *ScaleBicubicReference(source, to);
                     return &reference_out;
                   }});
  paths.back().reference = true;
  paths.push_back({"ScaleBicubic", [&] {
                     call_out = *ScaleBicubic(source, to);
                     return &call_out;
                   }});
  if (avx2->isa() == ScalerIsa::kAvx2) {
    paths.push_back({"scaler avx2", [&] {
                       (void)avx2->Scale(source, &avx2_out);
                       return &avx2_out;
                     }});
  }
  paths.push_back({"scaler baseline", [&] {
                     (void)baseline->Scale(source, &baseline_out);
                     return &baseline_out;
                   }});

  for (int round = -1; round < reps; ++round) {  // round -1: warm-up, not timed
    for (Path& path : paths) {
      if (path.reference && round >= reference_reps) continue;
      const Frame* out = nullptr;
      const bench::Timing t = bench::Time([&] { out = path.run(); });
      if (out->size_bytes() != want->size_bytes() ||
          std::memcmp(out->bytes(), want->bytes(), want->size_bytes()) != 0) {
        path.exact = false;
      }
      if (round >= 0) path.samples.Add(t);
    }
  }
  bool all_exact = true;
  for (const Path& path : paths) {
    std::printf("  %-16s median %8.2f ms  best %8.2f ms  %s\n", path.label.c_str(), path.samples.median(),
                path.samples.best(), path.exact ? "bytes = reference" : "BYTES DIFFER");
    std::string key = path.label;
    for (char& ch : key) ch = ch == ' ' ? '_' : ch;
    results->Add(absl::StrCat(name, "/", key, "_ms"), path.samples.median(), "ms");
    all_exact = all_exact && path.exact;
  }
  return all_exact;
}

}  // namespace
}  // namespace scale
}  // namespace exactq

int main(int argc, char** argv) {
  using namespace exactq;
  int reps = 7, reference_reps = 2, dirty = -1;
  std::string json, commit;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* flag) -> const char* {
      const size_t n = std::strlen(flag);
      return arg.compare(0, n, flag) == 0 ? argv[i] + n : nullptr;
    };
    if (const char* v = value("--reps=")) {
      if (!absl::SimpleAtoi(v, &reps) || reps < 1) return 2;
    } else if (const char* v = value("--reference_reps=")) {
      if (!absl::SimpleAtoi(v, &reference_reps) || reference_reps < 1) return 2;
    } else if (const char* v = value("--json=")) {
      json = v;
    } else if (const char* v = value("--commit=")) {
      commit = v;
    } else if (const char* v = value("--dirty=")) {
      dirty = std::string(v) == "true" ? 1 : 0;
    } else {
      std::fprintf(stderr, "unknown flag %s (see the top of scale_bench.cc)\n", arg.c_str());
      return 2;
    }
  }
  std::printf("%s; load average %s\n", bench::CpuDescription().c_str(), bench::LoadAverage().c_str());
  bench::Results results("scale");
  results.set_input("synthetic 4:2:0 pictures, one thread");
  bool exact = true;
  for (const scale::Case& c : scale::kCases) exact = scale::RunCase(c, reps, reference_reps, &results) && exact;
  std::printf("load average after: %s\n", bench::LoadAverage().c_str());
  if (!json.empty() && !results.WriteJson(json, bench::FindCommit(commit, dirty))) {
    std::fprintf(stderr, "cannot write %s\n", json.c_str());
    return 1;
  }
  return exact ? 0 : 1;
}
