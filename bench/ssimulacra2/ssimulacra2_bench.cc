// ssimulacra2_bench: milliseconds per frame pair of ssimulacra2 on the CPU, at 1920x1080
// and 3840x2160 8-bit 4:2:0: the reference (the definition) and the threaded path at 1
// thread and at every hardware thread (or the counts given).
//
//   bazel build //bench/ssimulacra2:ssimulacra2_bench
//   EXACTQ_CORPUS=/work/shared/corpus bazel-bin/bench/ssimulacra2/ssimulacra2_bench
//       [--reps=9] [--reference_reps=3] [--threads=1,2] [--sizes=1080,2160]
//       [--isa=auto|generic|avx2] [--corpus=DIR] [--json=FILE] [--commit=SHA]
//       [--dirty=true|false]
//
// Frames: the corpus's pairs p1080 (x264 CRF 27) and p4k (x265 CRF 26), frame 0, when
// $EXACTQ_CORPUS or --corpus names the corpus; else the tests' synthetic frames
// (MakeTestFrame, a ramp with hashed texture, and a noisy copy). Every repetition runs
// every path once, in turn, after a warm-up round (the threaded paths keep their buffers
// between frames); the reference runs in the first --reference_reps rounds only. Printed
// per path: median and best wall ms, median process CPU ms (all threads), the path's
// speedup over threads=1 (one-thread ms / path ms), and whether every score had the
// reference's bits (exits 1 if not). Anchor: the VMAF fork's CPU extractor took 340 ms at
// 1080p and 1637 ms at 4K per frame on one core of a 2-core machine like this (corpus
// README); the floor for one thread is 2x faster (<= 818 ms at 4K).

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "bench/common/bench_frames.h"
#include "bench/common/cpu_bench.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_reference.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_test_frames.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_threads.h"

namespace exactq {
namespace ssimulacra2 {
namespace {

uint64_t Bits(double v) {
  uint64_t u;
  std::memcpy(&u, &v, sizeof(u));
  return u;
}

struct Size {
  int height;
  int width;
  const char* ref_name;
  const char* dis_name;
  double fork_one_core_ms;  // corpus README
};

const Size kSizes[] = {
    {1080, 1920, "p1080.ref.y4m", "p1080_x264_crf27.dist.y4m", 340.0},
    {2160, 3840, "p4k.ref.y4m", "p4k_x265_crf26.dist.y4m", 1637.0},
};

struct Path {
  std::string label;
  std::string key;
  std::function<double()> run;
  bench::Samples samples;
  bool exact = true;
  bool reference = false;
};

bool RunSize(const Size& size, const std::string& corpus, int reps, int reference_reps, const std::vector<int>& threads,
             Ssimulacra2Isa isa, bench::Results* results, std::string* inputs) {
  Frame ref;
  Frame dis;
  std::string source;
  std::string why;
  if (bench::ReadCorpusPair(corpus, size.ref_name, size.dis_name, &ref, &dis, &why)) {
    source = std::string("corpus ") + size.ref_name + " / " + size.dis_name + ", frame 0";
  } else {
    const FrameGeometry geometry{size.width, size.height, {ChromaLayout::k420, 8}};
    ref = testing_frames::MakeTestFrame(geometry, 1);
    dis = testing_frames::MakeTestFrame(geometry, 1, {12, 0});
    source = "synthetic (MakeTestFrame seed 1, noise 12) because " + why;
  }
  const FrameGeometry& g = ref.geometry();
  source = std::to_string(g.width) + "x" + std::to_string(g.height) + " 8-bit 4:2:0: " + source;
  *inputs += (inputs->empty() ? "" : "; ") + source;

  const double want = ReferenceScore(ref, dis, YuvMatrix::kBt709Limited).value();
  std::vector<std::unique_ptr<Ssimulacra2Threads>> engines;
  std::vector<Path> paths;
  paths.push_back(
      {"reference", "reference", [&] { return ReferenceScore(ref, dis, YuvMatrix::kBt709Limited).value(); }});
  paths.back().reference = true;
  for (int t : threads) {
    engines.push_back(std::make_unique<Ssimulacra2Threads>(t, isa));
    Ssimulacra2Threads* e = engines.back().get();
    paths.push_back({"threads=" + std::to_string(t) + " (" + e->isa_name() + ")", "threads_" + std::to_string(t),
                     [&ref, &dis, e] { return e->Score(ref, dis, YuvMatrix::kBt709Limited).value(); }});
  }
  for (int rep = -1; rep < reps; ++rep) {  // -1: warm-up (the reference already ran once)
    for (Path& p : paths) {
      if (p.reference && (rep < 0 || rep >= reference_reps)) continue;
      double score = 0;
      const bench::Timing t = bench::Time([&] { score = p.run(); });
      p.exact = p.exact && Bits(score) == Bits(want);
      if (rep >= 0) p.samples.Add(t);
    }
  }

  double one_ms = 0;
  for (const Path& p : paths) {
    if (p.key == "threads_1") one_ms = p.samples.median();
  }
  std::printf("\n%s\n  ssimulacra2 %.17g\n", source.c_str(), want);
  std::printf("  %-22s %5s %10s %10s %10s %13s %s\n", "path", "runs", "median ms", "best ms", "cpu ms", "vs threads=1",
              "bits");
  const std::string k = std::to_string(g.height) + "p/";
  bool ok = true;
  for (const Path& p : paths) {
    const double ms = p.samples.median();
    char vs_one[32] = "";
    if (one_ms > 0) std::snprintf(vs_one, sizeof vs_one, "%.2f", one_ms / ms);
    std::printf("  %-22s %5zu %10.1f %10.1f %10.1f %13s %s\n", p.label.c_str(), p.samples.wall_ms.size(), ms,
                p.samples.best(), p.samples.median_cpu(), vs_one, p.exact ? "= reference" : "DIFFER");
    results->Add(k + p.key + "_ms", ms, "ms");
    results->Add(k + p.key + "_cpu_ms", p.samples.median_cpu(), "ms");
    if (one_ms > 0 && p.key != "threads_1") {
      results->Add(k + p.key + "_speedup_vs_threads_1", one_ms / ms, "ratio");
    }
    results->Add(k + p.key + "_bits_equal_reference", p.exact ? 1 : 0, "bool");
    ok = ok && p.exact;
  }
  if (one_ms > 0) {
    results->Add(k + "threads_1_speedup_vs_reference", paths[0].samples.median() / one_ms, "ratio");
    const bool fork_size = g.width == size.width && g.height == size.height;
    if (fork_size) {
      std::printf(
          "  fork CPU extractor: %.0f ms per frame on one core; threads=1 is %.2fx faster "
          "(floor 2x: <= %.0f ms): %s\n",
          size.fork_one_core_ms, size.fork_one_core_ms / one_ms, size.fork_one_core_ms / 2,
          one_ms <= size.fork_one_core_ms / 2 ? "met" : "NOT MET");
      char name[64];
      std::snprintf(name, sizeof name, "threads_1_speedup_vs_fork_cpu_%.0fms", size.fork_one_core_ms);
      results->Add(k + name, size.fork_one_core_ms / one_ms, "ratio");
    }
  }
  return ok;
}

int Main(int argc, char** argv) {
  int reps = 9;
  int reference_reps = 3;
  std::vector<int> threads = {1};
  if (bench::HardwareThreads() > 1) threads.push_back(bench::HardwareThreads());
  std::vector<int> sizes = {1080, 2160};
  Ssimulacra2Isa isa = Ssimulacra2Isa::kAuto;
  std::string corpus = std::getenv("EXACTQ_CORPUS") ? std::getenv("EXACTQ_CORPUS") : "";
  bench::OutputFlags output;
  auto parse_list = [](const std::string& v, std::vector<int>* out) {
    out->clear();
    for (absl::string_view t : absl::StrSplit(v, ',')) {
      int n;
      if (!absl::SimpleAtoi(t, &n) || n < 1) return false;
      out->push_back(n);
    }
    return !out->empty();
  };
  for (int i = 1; i < argc; ++i) {
    std::string v;
    bool good = true;
    if (bench::Flag(argv[i], "--reps", &v)) {
      good = absl::SimpleAtoi(v, &reps) && reps >= 1;
    } else if (bench::Flag(argv[i], "--reference_reps", &v)) {
      good = absl::SimpleAtoi(v, &reference_reps) && reference_reps >= 1;
    } else if (bench::Flag(argv[i], "--threads", &v)) {
      good = parse_list(v, &threads);
    } else if (bench::Flag(argv[i], "--sizes", &v)) {
      good = parse_list(v, &sizes);
    } else if (bench::Flag(argv[i], "--isa", &v)) {
      if (v == "auto")
        isa = Ssimulacra2Isa::kAuto;
      else if (v == "generic")
        isa = Ssimulacra2Isa::kGeneric;
      else if (v == "avx2")
        isa = Ssimulacra2Isa::kAvx2;
      else
        good = false;
    } else if (bench::Flag(argv[i], "--corpus", &v)) {
      corpus = v;
    } else if (output.Parse(argv[i])) {
    } else {
      good = false;
    }
    if (!good) {
      std::fprintf(stderr,
                   "usage: %s [--reps=9] [--reference_reps=3] [--threads=1,2] [--sizes=1080,2160] "
                   "[--isa=auto|generic|avx2] [--corpus=DIR] [--json=FILE] [--commit=SHA] "
                   "[--dirty=true|false]\n",
                   argv[0]);
      return 2;
    }
  }
  const bench::Commit c = bench::FindCommit(output.commit, output.dirty);
  std::printf(
      "ssimulacra2_bench: %s\ncommit %s%s, medians of %d runs (reference %d), paths run in turn\nload average (1, 5, "
      "15 min) at the start: %s\n",
      bench::CpuDescription().c_str(), c.sha.c_str(), c.dirty ? " (dirty)" : "", reps, std::min(reps, reference_reps),
      bench::LoadAverage().c_str());
  bench::Results results("ssimulacra2_cpu");
  std::string inputs;
  bool ok = true;
  for (int h : sizes) {
    const Size* size = nullptr;
    for (const Size& s : kSizes) {
      if (s.height == h) size = &s;
    }
    if (size == nullptr) {
      std::fprintf(stderr, "--sizes: 1080 or 2160\n");
      return 2;
    }
    ok = RunSize(*size, corpus, reps, std::min(reps, reference_reps), threads, isa, &results, &inputs) && ok;
  }
  results.set_input(inputs);
  return bench::Finish(results, output, c, ok, "reference");
}

}  // namespace
}  // namespace ssimulacra2
}  // namespace exactq

int main(int argc, char** argv) { return exactq::ssimulacra2::Main(argc, argv); }
