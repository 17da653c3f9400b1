// ordered_sum_cpu_bench: the host's exact ordered sum on one 4K plane of terms, without a
// GPU. ordered_sum_bench.cu measures the same host paths but is a CUDA program that exits
// without a GPU; this one runs anywhere.
//
//   bazel build //bench/exact:ordered_sum_cpu_bench
//   bazel-bin/bench/exact/ordered_sum_cpu_bench [--n=8294400] [--reps=51] [--threads=1,2]
//       [--kernels=auto|generic|scalar] [--json=FILE] [--commit=SHA] [--dirty=true|false]
//
// Fixtures (engine/exact/testing/ordered_sum_fixtures.h, seed 1): `uniform` (unsigned terms in
// [0,1), SSIMULACRA2-like) and `ssim_like_crossing_zero` (signed SSIM-like terms whose
// total crosses zero). Paths, run in turn within every repetition (so that a change of
// machine load hits all of them alike), after one warm-up round:
//   loop       OrderedSumReference::Loop, the definition (one thread);
//   threads=N  OrderedSumThreads(N), for each N of --threads (default 1 and every
//              hardware thread), with the host kernels of --kernels (default auto: AVX2
//              where the CPU has it; generic = the SSE2 build; scalar = one chunk at a
//              time, the kernels' definition). Every choice gives the same bits and stats.
// Printed per path: median and best wall ms, median process CPU ms, its speedup over the
// loop (loop ms / path ms; below 1: slower) and over OrderedSumThreads(1), and whether
// every result had the loop's bits (it exits 1 if any did not). The ordered sum's stats
// (terms added one by one) show how much of the plane took the slow way.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/common/cpu_bench.h"
#include "engine/exact/ordered_sum.h"
#include "engine/exact/testing/ordered_sum_fixtures.h"

namespace exactq {
namespace {

bool RunFixture(exact::FixtureKind kind, size_t n, int reps, const std::vector<int>& threads,
                const exact::OrderedSumOptions& options, bench::Results* results) {
  const std::string fixture = exact::FixtureName(kind);
  const std::vector<double> terms = exact::MakeFixture(kind, n, 1);
  const double want = exact::OrderedSumReference::Loop(terms.data(), n);

  std::vector<exact::OrderedSumThreads> sums;
  for (int t : threads) sums.emplace_back(t, options);
  bench::Samples loop;
  std::vector<bench::Samples> timed(threads.size());
  std::vector<exact::OrderedSumStats> stats(threads.size());
  bool loop_same = true;
  std::vector<bool> same(threads.size(), true);
  for (int rep = -1; rep < reps; ++rep) {  // rep -1: warm-up
    double got = 0;
    const bench::Timing t = bench::Time([&] { got = exact::OrderedSumReference::Loop(terms.data(), n); });
    loop_same = loop_same && exact::SameBitsOrBothNaN(got, want);
    if (rep >= 0) loop.Add(t);
    for (size_t i = 0; i < sums.size(); ++i) {
      absl::StatusOr<double> r;
      exact::OrderedSumStats s;
      const bench::Timing ti = bench::Time([&] { r = sums[i].Sum(terms.data(), n, &s); });
      same[i] = same[i] && r.ok() && exact::SameBitsOrBothNaN(*r, want);
      stats[i] = s;
      if (rep >= 0) timed[i].Add(ti);
    }
  }

  std::printf("\nfixture %s: %zu terms, loop total %.17g\n", fixture.c_str(), n, want);
  std::printf("  %-12s %10s %10s %10s %14s %14s %12s %s\n", "path", "median ms", "best ms", "cpu ms", "vs loop",
              "vs threads=1", "one-by-one", "bits");
  std::printf("  %-12s %10.3f %10.3f %10.3f %14.2f %14s %12s %s\n", "loop", loop.median(), loop.best(),
              loop.median_cpu(), 1.0, "", "", loop_same ? "= loop" : "DIFFER");
  const std::string p = fixture + "/";
  results->Add(p + "loop_ms", loop.median(), "ms");
  double one_thread_ms = 0;
  for (size_t i = 0; i < threads.size(); ++i) {
    if (threads[i] == 1) one_thread_ms = timed[i].median();
  }
  bool ok = loop_same;
  for (size_t i = 0; i < threads.size(); ++i) {
    const std::string name = "threads_" + std::to_string(threads[i]);
    const double ms = timed[i].median();
    char vs_one[32] = "";
    if (one_thread_ms > 0) std::snprintf(vs_one, sizeof vs_one, "%.2f", one_thread_ms / ms);
    std::printf("  %-12s %10.3f %10.3f %10.3f %14.2f %14s %12lld %s\n",
                ("threads=" + std::to_string(threads[i])).c_str(), ms, timed[i].best(), timed[i].median_cpu(),
                loop.median() / ms, vs_one, static_cast<long long>(stats[i].terms_one_by_one),
                same[i] ? "= loop" : "DIFFER");
    results->Add(p + name + "_ms", ms, "ms");
    results->Add(p + name + "_cpu_ms", timed[i].median_cpu(), "ms");
    results->Add(p + name + "_speedup_vs_loop", loop.median() / ms, "ratio");
    if (one_thread_ms > 0 && threads[i] != 1) {
      results->Add(p + name + "_speedup_vs_threads_1", one_thread_ms / ms, "ratio");
    }
    results->Add(p + name + "_terms_one_by_one", static_cast<double>(stats[i].terms_one_by_one), "terms");
    results->Add(p + name + "_bits_equal_loop", same[i] ? 1 : 0, "bool");
    ok = ok && same[i];
  }
  return ok;
}

int Main(int argc, char** argv) {
  size_t n = size_t{3840} * 2160;
  int reps = 51;
  std::vector<int> threads = {1, bench::HardwareThreads()};
  exact::OrderedSumOptions options;
  std::string kernels = "auto";
  if (threads[1] == 1) threads.pop_back();
  bench::OutputFlags output;
  for (int i = 1; i < argc; ++i) {
    std::string v;
    if (bench::Flag(argv[i], "--n", &v)) {
      n = std::strtoull(v.c_str(), nullptr, 10);
    } else if (bench::Flag(argv[i], "--reps", &v)) {
      reps = std::atoi(v.c_str());
    } else if (bench::Flag(argv[i], "--threads", &v)) {
      threads.clear();
      for (size_t pos = 0; pos <= v.size();) {
        const size_t comma = std::min(v.find(',', pos), v.size());
        const int t = std::atoi(v.substr(pos, comma - pos).c_str());
        if (t < 1) {
          std::fprintf(stderr, "bad --threads\n");
          return 2;
        }
        threads.push_back(t);
        pos = comma + 1;
      }
    } else if (bench::Flag(argv[i], "--kernels", &v)) {
      kernels = v;
      if (v == "auto") {
        options.host_kernels = exact::OrderedSumOptions::HostKernels::kAuto;
      } else if (v == "generic") {
        options.host_kernels = exact::OrderedSumOptions::HostKernels::kGeneric;
      } else if (v == "scalar") {
        options.host_kernels = exact::OrderedSumOptions::HostKernels::kScalar;
      } else {
        std::fprintf(stderr, "bad --kernels (auto, generic or scalar)\n");
        return 2;
      }
    } else if (output.Parse(argv[i])) {
    } else {
      std::fprintf(stderr,
                   "usage: %s [--n=8294400] [--reps=51] [--threads=1,2] "
                   "[--kernels=auto|generic|scalar] [--json=FILE] "
                   "[--commit=SHA] [--dirty=true|false]\n",
                   argv[0]);
      return 2;
    }
  }
  if (n == 0 || reps < 1 || threads.empty()) return 2;
  const bench::Commit c = bench::FindCommit(output.commit, output.dirty);
  const char* kernels_used = exact::OrderedSumThreads(1, options).kernels();
  std::printf(
      "ordered_sum_cpu_bench: %s\ncommit %s%s, %d repetitions (median), paths run in turn\nhost kernels: %s "
      "(--kernels=%s)\nload average (1, 5, 15 min) at the start: %s\n",
      bench::CpuDescription().c_str(), c.sha.c_str(), c.dirty ? " (dirty)" : "", reps, kernels_used, kernels.c_str(),
      bench::LoadAverage().c_str());
  bench::Results results("ordered_sum_cpu");
  results.set_input(std::to_string(n) +
                    " terms (a 3840x2160 plane), ordered_sum_fixtures.h seed 1: "
                    "uniform (unsigned) and ssim_like_crossing_zero (signed); host kernels " +
                    kernels_used);
  bool ok = true;
  for (exact::FixtureKind kind : {exact::FixtureKind::kUniform, exact::FixtureKind::kSsimLikeCrossingZero}) {
    ok = RunFixture(kind, n, reps, threads, options, &results) && ok;
  }
  return bench::Finish(results, output, c, ok, "loop");
}

}  // namespace
}  // namespace exactq

int main(int argc, char** argv) { return exactq::Main(argc, argv); }
