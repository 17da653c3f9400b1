// scale_bench: milliseconds per picture of the exact scaler (engine/scale) for a ladder's
// rungs scaled up to 3840x2160 (8-bit 4:2:0), with no pool (the decoding thread alone,
// the baseline) and with pools of --threads threads, alternating within each repetition;
// medians over --reps. Every pooled result is checked against the baseline's bytes.
//
//   bazel run -c opt //bench/scale:scale_bench -- --threads=2,4 --reps=9
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "engine/format/frame.h"
#include "engine/platform/worker_pool.h"
#include "engine/scale/bicubic_scaler.h"

ABSL_FLAG(std::string, threads, "2,4", "pool sizes to compare with no pool");
ABSL_FLAG(int, reps, 7, "repetitions (medians)");
ABSL_FLAG(int, pictures, 8, "pictures per measurement");

namespace {

using exactq::Frame;
using exactq::FrameGeometry;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Milliseconds per picture.
double Time(exactq::scale::BicubicScaler& scaler, const Frame& in, Frame* out, exactq::WorkerPool* pool, int pictures) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < pictures; ++i) {
    if (!scaler.Scale(in, out, pool).ok()) std::abort();
  }
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / pictures;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  std::vector<int> thread_counts;
  for (absl::string_view t : absl::StrSplit(absl::GetFlag(FLAGS_threads), ',')) {
    int n = 0;
    if (!absl::SimpleAtoi(t, &n) || n < 1) return 2;
    thread_counts.push_back(n);
  }
  const exactq::PixelFormat format{exactq::ChromaLayout::k420, 8};
  const FrameGeometry target{3840, 2160, format};
  std::printf("exact scaler to 3840x2160 8-bit 4:2:0, %u hardware threads, %s build; ms per picture, medians of %d\n",
              std::thread::hardware_concurrency(), exactq::scale::ScalerIsaName(exactq::scale::BestScalerIsa()),
              absl::GetFlag(FLAGS_reps));
  std::printf("%-10s %10s", "rung", "no pool");
  for (int n : thread_counts) std::printf(" %7d thr %6s", n, "ratio");
  std::printf("\n");
  for (const FrameGeometry& source :
       {FrameGeometry{2560, 1440, format}, FrameGeometry{1920, 1080, format}, FrameGeometry{1280, 720, format}}) {
    Frame in = *Frame::Create(source);
    std::mt19937 rng(7);
    for (size_t i = 0; i < in.size_bytes(); ++i) in.mutable_bytes()[i] = static_cast<uint8_t>(rng());
    exactq::scale::BicubicScaler scaler = *exactq::scale::BicubicScaler::Create(source, target);
    Frame want, got;
    if (!scaler.Scale(in, &want).ok()) return 1;
    std::vector<std::unique_ptr<exactq::WorkerPool>> pools;
    for (int n : thread_counts) pools.push_back(std::make_unique<exactq::WorkerPool>(n));
    std::vector<double> base;
    std::vector<std::vector<double>> pooled(thread_counts.size());
    for (int r = 0; r < absl::GetFlag(FLAGS_reps); ++r) {
      base.push_back(Time(scaler, in, &got, nullptr, absl::GetFlag(FLAGS_pictures)));
      for (size_t k = 0; k < pools.size(); ++k) {
        pooled[k].push_back(Time(scaler, in, &got, pools[k].get(), absl::GetFlag(FLAGS_pictures)));
        if (std::memcmp(got.bytes(), want.bytes(), want.size_bytes()) != 0) {
          std::fprintf(stderr, "%d threads: bytes differ from no pool\n", thread_counts[k]);
          return 1;
        }
      }
    }
    const double b = Median(base);
    std::printf("%4dx%-5d %10.2f", source.width, source.height, b);
    for (const auto& p : pooled) std::printf(" %11.2f %6.2f", Median(p), b / Median(p));
    std::printf("\n");
  }
  std::printf("every pooled picture == the no-pool bytes\n");
  return 0;
}
