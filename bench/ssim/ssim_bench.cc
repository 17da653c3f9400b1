// ssim_bench: milliseconds per 3840x2160 frame for the ssim CPU paths.
//
// Scores one 4K frame pair repeatedly with the reference and with SsimThreads at 1 and
// 2 threads (both frame sums, both vector widths; --max_threads=N adds 4, 8, ... up to
// N) and prints the median and best wall time of each, the median CPU time of the
// calling thread (for one thread, steadier than wall time on a shared machine), and
// whether every run returned the reference's bits. The pair is the corpus's p4k (x265 CRF 26) when $EXACTQ_CORPUS or
// --corpus=DIR names the corpus, else a synthetic pair (a ramp and its noisy copy).
//
//   bazel run //bench/ssim:ssim_bench -- --reps=9 --corpus=/work/shared/corpus
// (-O2 and -ffp-contract=off come from .bazelrc; -c opt is not needed.)
//
// The anchor: the fork's CPU extractor takes 558 ms per 4K frame on one core of a
// 2-core machine like the one this was written on (corpus README).

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/format/frame.h"
#include "engine/io/y4m_reader.h"
#include "engine/metrics/ssim/ssim_reference.h"
#include "engine/metrics/ssim/ssim_threads.h"

namespace exactq {
namespace ssim {
namespace {

double ThreadCpuMs() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

bool ReadFirstFrame(const std::string& path, Frame* frame) {
  absl::StatusOr<Y4mReader> reader = Y4mReader::Open(path);
  if (!reader.ok()) return false;
  absl::StatusOr<bool> more = reader->ReadFrame(frame);
  return more.ok() && *more;
}

void MakeSynthetic(Frame* ref, Frame* dis) {
  const FrameGeometry g{3840, 2160, PixelFormat{ChromaLayout::k420, 8}};
  *ref = *Frame::Create(g);
  *dis = *Frame::Create(g);
  uint8_t* r = ref->mutable_plane8(0);
  uint8_t* d = dis->mutable_plane8(0);
  for (int y = 0; y < g.height; ++y) {
    for (int x = 0; x < g.width; ++x) {
      const uint32_t h = (static_cast<uint32_t>(x) * 73856093u) ^ (static_cast<uint32_t>(y) * 19349663u);
      const int v = (x / 3 + y / 2) % 200 + 20;
      r[static_cast<size_t>(y) * g.width + x] = static_cast<uint8_t>(v);
      d[static_cast<size_t>(y) * g.width + x] = static_cast<uint8_t>(v + h % 23);
    }
  }
}

struct Result {
  std::string name;
  double median_ms;
  double best_ms;
  double median_cpu_ms;  // calling thread only
  bool exact;
};

Result Time(const std::string& name, int reps, const SsimSums& want,
            const std::function<absl::StatusOr<SsimSums>()>& run) {
  std::vector<double> wall;
  std::vector<double> cpu;
  bool exact = true;
  for (int i = 0; i < reps; ++i) {
    const double c0 = ThreadCpuMs();
    const auto t0 = std::chrono::steady_clock::now();
    absl::StatusOr<SsimSums> got = run();
    const auto t1 = std::chrono::steady_clock::now();
    cpu.push_back(ThreadCpuMs() - c0);
    wall.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    exact = exact && got.ok() &&
            std::memcmp(&got->term_sum, &want.term_sum, sizeof(double)) == 0 &&
            std::memcmp(&got->weight_sum, &want.weight_sum, sizeof(double)) == 0;
  }
  return {name, Median(wall), *std::min_element(wall.begin(), wall.end()), Median(cpu), exact};
}

int Main(int argc, char** argv) {
  int reps = 7;
  int max_threads = 2;
  std::string corpus = std::getenv("EXACTQ_CORPUS") ? std::getenv("EXACTQ_CORPUS") : "";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--reps=", 0) == 0) reps = std::max(1, std::atoi(arg.c_str() + 7));
    if (arg.rfind("--corpus=", 0) == 0) corpus = arg.substr(9);
    if (arg.rfind("--max_threads=", 0) == 0) max_threads = std::atoi(arg.c_str() + 14);
  }
  Frame ref;
  Frame dis;
  std::string source = "synthetic 3840x2160 8-bit pair";
  if (!corpus.empty() && ReadFirstFrame(corpus + "/p4k.ref.y4m", &ref) &&
      ReadFirstFrame(corpus + "/p4k_x265_crf26.dist.y4m", &dis)) {
    source = "corpus p4k_x265_crf26 (3840x2160 8-bit)";
  } else {
    MakeSynthetic(&ref, &dis);
  }
  absl::StatusOr<SsimSums> want = ReferenceSums(ref, dis);
  if (!want.ok()) {
    std::fprintf(stderr, "%s\n", std::string(want.status().message()).c_str());
    return 1;
  }
  std::printf("ssim_bench: %s, %d runs each, ssim %.17g\n", source.c_str(), reps,
              want->term_sum / want->weight_sum);

  std::vector<Result> results;
  results.push_back(Time("reference", std::min(reps, 5), *want, [&] { return ReferenceSums(ref, dis); }));
  std::vector<int> thread_counts = {1, 2};
  for (int t = 4; t <= max_threads; t *= 2) thread_counts.push_back(t);
  for (SsimIsa isa : {SsimIsa::kAuto, SsimIsa::kSse2}) {
    for (int threads : thread_counts) {
      if (isa == SsimIsa::kSse2 && threads > 2) continue;
      for (SsimFrameSum frame_sum : {SsimFrameSum::kOrderedSum, SsimFrameSum::kRasterLoop}) {
        if (threads == 1 && frame_sum == SsimFrameSum::kRasterLoop) continue;  // same path
        SsimThreads fast(threads, frame_sum, isa);
        const std::string name =
            "threads=" + std::to_string(threads) + " " + SsimIsaName(fast.isa()) +
            (threads == 1 ? "" : std::string(" ") + SsimFrameSumName(frame_sum));
        fast.Sums(ref, dis).IgnoreError();  // warm-up: first-touch of the scratch
        results.push_back(Time(name, reps, *want, [&] { return fast.Sums(ref, dis); }));
      }
    }
  }
  std::printf("%-34s %12s %10s %16s %6s\n", "path", "median ms", "best ms", "cpu ms (caller)",
              "exact");
  for (const Result& r : results) {
    std::printf("%-34s %12.1f %10.1f %16.1f %6s\n", r.name.c_str(), r.median_ms, r.best_ms,
                r.median_cpu_ms, r.exact ? "yes" : "NO");
  }
  std::printf("fork CPU extractor anchor: 558 ms per 4K frame on one core\n");
  for (const Result& r : results) {
    if (!r.exact) return 1;
  }
  return 0;
}

}  // namespace
}  // namespace ssim
}  // namespace exactq

int main(int argc, char** argv) { return exactq::ssim::Main(argc, argv); }
