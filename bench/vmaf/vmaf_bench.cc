// Frames per second of VMAF's per-frame features (vmaf_v0.6.1: VIF, ADM2, motion) on the
// CPU at 1920x1080, 8-bit: the reference (one band) and VmafThreads at 1..N threads.
// Input: the corpus's p1080 pair, frame 1 with frame 0 as the previous reference (so
// motion does its full work). Prints one line per path; the SVM and the finisher are
// a few microseconds a frame and are left out.
//
//   EXACTQ_CORPUS=/work/shared/corpus bazel-bin/bench/vmaf/vmaf_bench --threads=2 --reps=5

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/status/statusor.h"
#include "bench/common/cpu_bench.h"
#include "engine/io/y4m_reader.h"
#include "engine/metrics/vmaf/vmaf_features.h"
#include "engine/metrics/vmaf/vmaf_threads.h"

namespace exactq {
namespace {

bool ReadFrames(const std::string& path, Frame* first, Frame* second) {
  absl::StatusOr<Y4mReader> reader = Y4mReader::Open(path);
  if (!reader.ok()) return false;
  absl::StatusOr<bool> a = reader->ReadFrame(first);
  absl::StatusOr<bool> b = reader->ReadFrame(second);
  return a.ok() && *a && b.ok() && *b;
}

int Main(int argc, char** argv) {
  std::string dir = std::getenv("EXACTQ_CORPUS") ? std::getenv("EXACTQ_CORPUS") : "";
  int max_threads = bench::HardwareThreads();
  int reps = 5;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) == 0) max_threads = std::atoi(argv[i] + 10);
    if (std::strncmp(argv[i], "--reps=", 7) == 0) reps = std::atoi(argv[i] + 7);
    if (std::strncmp(argv[i], "--corpus=", 9) == 0) dir = argv[i] + 9;
  }
  Frame ref0, ref1, dis0, dis1;
  if (dir.empty() || !ReadFrames(dir + "/p1080.ref.y4m", &ref0, &ref1) ||
      !ReadFrames(dir + "/p1080_x264_crf27.dist.y4m", &dis0, &dis1)) {
    std::fprintf(stderr, "cannot read the p1080 pair (set EXACTQ_CORPUS or --corpus=DIR)\n");
    return 1;
  }
  std::printf("vmaf features, 1920x1080 8-bit, %s, load %s, median of %d\n", bench::CpuDescription().c_str(),
              bench::LoadAverage().c_str(), reps);

  bench::Samples reference;
  for (int r = 0; r < reps; ++r) {
    reference.Add(bench::Time([&] { (void)vmaf::ComputeVmafFeatures(ref1, dis1, &ref0); }));
  }
  std::printf("reference        %8.1f ms/frame  %6.2f frames/s  (cpu %.1f ms)\n", reference.median(),
              1000.0 / reference.median(), reference.median_cpu());
  for (int t = 1; t <= max_threads; ++t) {
    vmaf::VmafThreads threads(t);
    bench::Samples samples;
    for (int r = 0; r < reps; ++r) {
      samples.Add(bench::Time([&] { (void)threads.ComputeFeatures(ref1, dis1, &ref0); }));
    }
    std::printf("threads %-2d       %8.1f ms/frame  %6.2f frames/s  (cpu %.1f ms)\n", t, samples.median(),
                1000.0 / samples.median(), samples.median_cpu());
  }
  return 0;
}

}  // namespace
}  // namespace exactq

int main(int argc, char** argv) { return exactq::Main(argc, argv); }
