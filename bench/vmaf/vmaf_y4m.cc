// Scores a Y4M pair with vmaf on one thread, streaming, the way libvmaf's `vmaf` CLI does
// with --threads 1: read a frame pair, compute its features (motion against the previous
// reference), feed the finisher, next. For the side-by-side run in compare_libvmaf.sh,
// which times this whole process against libvmaf's.
//
//   bazel-bin/bench/vmaf/vmaf_y4m REF.y4m DIS.y4m
//
// Prints: frames, the mean of the per-frame vmaf and of each feature (%.6f, libvmaf's
// JSON precision), and the process CPU time.

#include <cstdio>
#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "bench/common/cpu_bench.h"
#include "engine/io/y4m_reader.h"
#include "engine/metrics/vmaf/vmaf_features.h"
#include "engine/metrics/vmaf/vmaf_sequence.h"

namespace exactq {
namespace {

int Main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s REF.y4m DIS.y4m\n", argv[0]);
    return 2;
  }
  absl::StatusOr<Y4mReader> ref_reader = Y4mReader::Open(argv[1]);
  absl::StatusOr<Y4mReader> dis_reader = Y4mReader::Open(argv[2]);
  if (!ref_reader.ok() || !dis_reader.ok()) {
    std::fprintf(stderr, "cannot open the pair\n");
    return 1;
  }
  Frame prev, ref, dis;
  bool have_prev = false;
  int frames = 0;
  vmaf::VmafFinisher finisher;
  std::map<std::string, double> sums;
  auto add = [&](const std::optional<FrameScores>& scores) {
    if (!scores) return;
    for (const NamedScore& s : *scores) sums[s.name] += s.value;
  };
  for (;;) {
    absl::StatusOr<bool> a = ref_reader->ReadFrame(&ref);
    absl::StatusOr<bool> b = dis_reader->ReadFrame(&dis);
    if (!a.ok() || !b.ok()) {
      std::fprintf(stderr, "read error\n");
      return 1;
    }
    if (!*a || !*b) break;
    absl::StatusOr<vmaf::VmafFeatures> f = vmaf::ComputeVmafFeatures(ref, dis, have_prev ? &prev : nullptr);
    if (!f.ok()) {
      std::fprintf(stderr, "%s\n", std::string(f.status().message()).c_str());
      return 1;
    }
    add(finisher.Push(*f));
    std::swap(prev, ref);
    have_prev = true;
    ++frames;
  }
  add(finisher.Finish());
  std::printf("frames %d\n", frames);
  for (const std::string& name : vmaf::VmafOutputNames()) {
    std::printf("mean %s %.6f\n", name.c_str(), frames > 0 ? sums[name] / frames : 0.0);
  }
  std::printf("cpu_ms %.1f\n", bench::ProcessCpuMs());
  return 0;
}

}  // namespace
}  // namespace exactq

int main(int argc, char** argv) { return exactq::Main(argc, argv); }
