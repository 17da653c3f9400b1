// ssim_bench: milliseconds per 3840x2160 frame for the ssim CPU paths, 8-bit and 10-bit.
//
//   bazel build //bench/ssim:ssim_bench
//   EXACTQ_CORPUS=/work/shared/corpus bazel-bin/bench/ssim/ssim_bench [--reps=11]
//       [--reference_reps=5] [--depths=8,10] [--max_threads=N] [--isa=auto|sse2|avx]
//       [--corpus=DIR] [--json=FILE] [--commit=SHA] [--dirty=true|false]
//
// Paths, for each depth:
//   reference                   ReferenceSums, the definition (one thread);
//   threads=1                   SsimThreads(1): the one-thread run the others are compared to;
//   threads=N ordered_sum       SsimThreads(N, kOrderedSum), N = 2, 4, ... up to
//   threads=N raster_loop       --max_threads (default: the hardware threads).
// Every repetition runs every path once, in turn (so a change of machine load hits them
// alike), after one warm-up round (first touch of the kept buffers); the reference runs in
// the first --reference_reps rounds only. Printed per path: median and best wall ms, the
// median process CPU ms, the path's speedup over threads=1 (= one-thread ms / path ms;
// below 1: slower), and whether every run returned the reference's two sums bit for bit (exits 1 if
// not). For threads=1 it also prints the fork's CPU extractor anchor (558 ms per 4K frame
// on one core of a 2-core machine like this, corpus README) and the floor (2x
// faster: <= 279 ms).
//
// Frames: 8-bit, the corpus's p4k pair (x265 CRF 26, 3840x2160 yuv420p, one frame); the
// corpus has no 10-bit 4K pair, so 10-bit is that pair deepened (v << 2 plus hashed low
// bits, bench_frames.h). Without the corpus, synthetic pairs (a ramp and its noisy copy).

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/common/bench_frames.h"
#include "bench/common/cpu_bench.h"
#include "engine/format/frame.h"
#include "engine/metrics/ssim/ssim_reference.h"
#include "engine/metrics/ssim/ssim_threads.h"

namespace exactq {
namespace ssim {
namespace {

constexpr double kForkOneCoreMs = 558.0;

// A ramp and its noisy copy at `depth` bits (the ssim tests' kRamp/kNoisy formulas).
void MakeSynthetic(int depth, Frame* ref, Frame* dis) {
  const FrameGeometry g{3840, 2160, PixelFormat{ChromaLayout::k420, depth}};
  *ref = *Frame::Create(g);
  *dis = *Frame::Create(g);
  const int shift = depth - 8;
  for (int p = 0; p < g.plane_count(); ++p) {
    for (int y = 0; y < g.plane_height(p); ++y) {
      for (int x = 0; x < g.plane_width(p); ++x) {
        const uint32_t h = (static_cast<uint32_t>(x) * 73856093u) ^ (static_cast<uint32_t>(y) * 19349663u);
        const uint32_t v = static_cast<uint32_t>((x / 3 + y / 2) % 200 + 20);
        ref->set_sample(p, x, y, v << shift);
        dis->set_sample(p, x, y, (v + h % 23) << shift);
      }
    }
  }
}

bool SameSums(const absl::StatusOr<SsimSums>& got, const SsimSums& want) {
  return got.ok() && std::memcmp(&got->term_sum, &want.term_sum, sizeof(double)) == 0 &&
         std::memcmp(&got->weight_sum, &want.weight_sum, sizeof(double)) == 0;
}

struct Path {
  std::string label;  // printed
  std::string key;    // in the JSON names
  std::function<absl::StatusOr<SsimSums>()> run;
  bench::Samples samples;
  bool exact = true;
  bool reference = false;
};

bool RunDepth(int depth, const Frame& ref, const Frame& dis, const std::string& source, int reps, int reference_reps,
              const std::vector<int>& thread_counts, SsimIsa isa, bench::Results* results) {
  const absl::StatusOr<SsimSums> want = ReferenceSums(ref, dis);
  if (!want.ok()) {
    std::fprintf(stderr, "%s\n", std::string(want.status().message()).c_str());
    return false;
  }
  std::vector<SsimThreads> engines;
  engines.reserve(thread_counts.size() * 2);
  std::vector<Path> paths;
  paths.push_back({"reference", "reference", [&] { return ReferenceSums(ref, dis); }});
  paths.back().reference = true;
  for (int t : thread_counts) {
    for (SsimFrameSum fs : {SsimFrameSum::kOrderedSum, SsimFrameSum::kRasterLoop}) {
      if (t == 1 && fs == SsimFrameSum::kRasterLoop) continue;  // the same path at one thread
      engines.emplace_back(t, fs, isa);
      SsimThreads* e = &engines.back();
      std::string label = "threads=" + std::to_string(t);
      std::string key = "threads_" + std::to_string(t);
      if (t > 1) {
        label += std::string(" ") + SsimFrameSumName(fs);
        key += std::string("_") + SsimFrameSumName(fs);
      }
      label += std::string(" (") + SsimIsaName(e->isa()) + ")";
      paths.push_back({label, key, [&ref, &dis, e] { return e->Sums(ref, dis); }});
    }
  }
  for (int rep = -1; rep < reps; ++rep) {  // -1: warm-up
    for (Path& p : paths) {
      if (p.reference && rep >= reference_reps) continue;
      absl::StatusOr<SsimSums> got;
      const bench::Timing t = bench::Time([&] { got = p.run(); });
      p.exact = p.exact && SameSums(got, *want);
      if (rep >= 0) p.samples.Add(t);
    }
  }

  const double one_ms = paths[1].samples.median();  // threads=1
  std::printf("\n%d-bit: %s\n  ssim %.17g (term_sum %.17g, weight_sum %.17g)\n", depth, source.c_str(),
              want->term_sum / want->weight_sum, want->term_sum, want->weight_sum);
  std::printf("  %-34s %6s %10s %10s %10s %16s %s\n", "path", "runs", "median ms", "best ms", "cpu ms", "vs threads=1",
              "bits");
  const std::string d = std::to_string(depth) + "bit/";
  results->Add(d + "threads_1_speedup_vs_reference", paths[0].samples.median() / one_ms, "ratio");
  bool ok = true;
  for (const Path& p : paths) {
    const double ms = p.samples.median();
    std::printf("  %-34s %6zu %10.1f %10.1f %10.1f %16.2f %s\n", p.label.c_str(), p.samples.wall_ms.size(), ms,
                p.samples.best(), p.samples.median_cpu(), one_ms / ms, p.exact ? "= reference" : "DIFFER");
    results->Add(d + p.key + "_ms", ms, "ms");
    results->Add(d + p.key + "_cpu_ms", p.samples.median_cpu(), "ms");
    if (p.key != "threads_1") results->Add(d + p.key + "_speedup_vs_threads_1", one_ms / ms, "ratio");
    results->Add(d + p.key + "_bits_equal_reference", p.exact ? 1 : 0, "bool");
    ok = ok && p.exact;
  }
  if (depth == 8) {
    std::printf(
        "  fork CPU extractor: %.0f ms per 4K frame on one core; threads=1 is %.2fx "
        "faster (floor 2x: <= %.0f ms): %s\n",
        kForkOneCoreMs, kForkOneCoreMs / one_ms, kForkOneCoreMs / 2, one_ms <= kForkOneCoreMs / 2 ? "met" : "NOT MET");
    results->Add(d + "threads_1_speedup_vs_fork_cpu_558ms", kForkOneCoreMs / one_ms, "ratio");
  }
  return ok;
}

int Main(int argc, char** argv) {
  int reps = 11;
  int reference_reps = 5;
  int max_threads = bench::HardwareThreads();
  std::vector<int> depths = {8, 10};
  SsimIsa isa = SsimIsa::kAuto;
  std::string corpus = std::getenv("EXACTQ_CORPUS") ? std::getenv("EXACTQ_CORPUS") : "";
  bench::OutputFlags output;
  for (int i = 1; i < argc; ++i) {
    std::string v;
    if (bench::Flag(argv[i], "--reps", &v)) {
      reps = std::max(1, std::atoi(v.c_str()));
    } else if (bench::Flag(argv[i], "--reference_reps", &v)) {
      reference_reps = std::max(1, std::atoi(v.c_str()));
    } else if (bench::Flag(argv[i], "--max_threads", &v)) {
      max_threads = std::max(1, std::atoi(v.c_str()));
    } else if (bench::Flag(argv[i], "--depths", &v)) {
      depths.clear();
      if (v.find("8") != std::string::npos) depths.push_back(8);
      if (v.find("10") != std::string::npos) depths.push_back(10);
    } else if (bench::Flag(argv[i], "--isa", &v)) {
      if (v == "auto")
        isa = SsimIsa::kAuto;
      else if (v == "sse2")
        isa = SsimIsa::kSse2;
      else if (v == "avx")
        isa = SsimIsa::kAvx;
      else
        return 2;
    } else if (bench::Flag(argv[i], "--corpus", &v)) {
      corpus = v;
    } else if (output.Parse(argv[i])) {
    } else {
      std::fprintf(stderr,
                   "usage: %s [--reps=11] [--reference_reps=5] [--depths=8,10] [--max_threads=N] "
                   "[--isa=auto|sse2|avx] [--corpus=DIR] [--json=FILE] [--commit=SHA] "
                   "[--dirty=true|false]\n",
                   argv[0]);
      return 2;
    }
  }
  std::vector<int> thread_counts = {1};
  for (int t = 2; t <= max_threads; t *= 2) thread_counts.push_back(t);
  if (thread_counts.back() != max_threads && max_threads > 1) thread_counts.push_back(max_threads);

  const bench::Commit c = bench::FindCommit(output.commit, output.dirty);
  std::printf(
      "ssim_bench: %s\ncommit %s%s, medians of %d runs (reference %d), paths run in turn\nload average (1, 5, 15 min) "
      "at the start: %s\n",
      bench::CpuDescription().c_str(), c.sha.c_str(), c.dirty ? " (dirty)" : "", reps, std::min(reps, reference_reps),
      bench::LoadAverage().c_str());

  Frame ref8;
  Frame dis8;
  std::string why;
  const bool have_corpus = bench::ReadCorpusPair(corpus, "p4k.ref.y4m", "p4k_x265_crf26.dist.y4m", &ref8, &dis8, &why);
  if (!have_corpus) std::printf("corpus pair not used: %s\n", why.c_str());
  bench::Results results("ssim_cpu");
  std::string inputs;
  bool ok = true;
  for (int depth : depths) {
    Frame ref;
    Frame dis;
    std::string source;
    if (have_corpus && depth == 8) {
      ref = ref8;
      dis = dis8;
      source = "corpus p4k.ref.y4m / p4k_x265_crf26.dist.y4m, 3840x2160 yuv420p, frame 0";
    } else if (have_corpus) {
      ref = bench::Deepen(ref8, depth, 1);
      dis = bench::Deepen(dis8, depth, 2);
      source = "corpus p4k pair deepened to " + std::to_string(depth) + " bits (v << " + std::to_string(depth - 8) +
               " plus hashed low bits; no 10-bit 4K pair in the corpus), 3840x2160 yuv420p";
    } else {
      MakeSynthetic(depth, &ref, &dis);
      source = "synthetic 3840x2160 yuv420p pair (a ramp and its noisy copy)";
    }
    inputs += (inputs.empty() ? "" : "; ") + std::to_string(depth) + "-bit: " + source;
    ok = RunDepth(depth, ref, dis, source, reps, std::min(reps, reference_reps), thread_counts, isa, &results) && ok;
  }
  results.set_input(inputs);
  return bench::Finish(results, output, c, ok, "reference");
}

}  // namespace
}  // namespace ssim
}  // namespace exactq

int main(int argc, char** argv) { return exactq::ssim::Main(argc, argv); }
