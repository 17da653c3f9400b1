// runtime_bench: sustained throughput of the engine runtime (FramePipeline over
// FrameScorer) for psnr, ssim and ssimulacra2 at 1920x1080 and 3840x2160
// (8-bit 4:2:0), with 1, 4 and 16 concurrent streams: one feeding thread per stream,
// all scoring for --seconds, frames per second over all streams (median of --reps).
//
// GPU (when one is visible, --gpu=1):
//   engine   a FramePipeline per stream with --frames_in_flight frames in flight (K,
//            default 2, as exactqd's default) of FrameScorers under `auto`, frames in
//            ordinary (pageable) host memory: what a server session does;
//   kernels  the metric twins directly (CreateGpuScorer), frames in pinned host memory
//            (cudaHostRegister): the kernels' own throughput with their copies (the
//            psnr twin sees the pages are locked and copies them to the device
//            directly, without its staging);
//   engine_pinned
//            the same engine, frames allocated from PinnedFrameMemory() (page-locked,
//            engine/runtime/pinned_frame_memory.h) as exactqd's frame assembler
//            receives a GPU stream's pictures: the twins copy them to the device
//            directly, no pageable->pinned copy;
//   ratio    engine / kernels (the floor is >= 0.85); p_ratio engine_pinned / kernels;
//   direct   at 1 stream also the direct scorer on the pageable frames (one frame at
//            a time), so that engine / direct is what the runtime adds or costs over
//            the backend;
//   gpu_idle the GPU's idle share while the engine ran (p_idle: engine_pinned) (1 - NVML's utilization: the
//            share of time with no kernel running, as nvidia-smi and DCGM report it;
//            "-" where NVML is missing or the run was shorter than its sampling).
// CPU (--cpu=1): FrameScorer under `cpu` (the server's CPU pool runs one such scorer
//   per stream), at --cpu_sizes with --cpu_streams.
// Every score of every frame is compared with the CPU reference's bits; a difference
// exits 1.
//
//   runtime_bench [--gpu=1] [--cpu=1] [--metrics=psnr,ssim,ssimulacra2] [--sizes=1080p,4k]
//                 [--streams=1,4,16] [--cpu_sizes=1080p] [--cpu_streams=1,4] [--seconds=0.5]
//                 [--cpu_seconds=2] [--reps=3] [--frames_in_flight=2] [--json=FILE]
//                 [--resident=BOOL] [--upload_traffic=BOOL] [--upload_modes=BOOL]
//                 [--resident_in_flight=N,...] [--gpu_wait=spin|yield|block]
//                 [--commit=SHA] [--dirty=BOOL]
//
// --metrics entries may join several metrics with '+' (psnr+ssim+ssimulacra2: one
// request, one device frame). Each GPU row also prints the host-to-device bytes per
// frame, counted by the device frame where it copies. --resident=1 adds, per row, each
// metric of the request alone on a pair already on the device (streams x K twins at
// once) and the engine's time per frame against the sum of theirs, then the request's
// metrics together on resident pairs (no uploads); --upload_traffic=1 then times those
// again beside the engine's upload traffic alone (one pair's bytes copied as often as
// the engine scored a frame, no kernels reading them); --resident_in_flight times the
// request on resident pairs with other numbers of frames at once; --upload_modes times
// it uploading the pair from page-locked memory every frame, before the frame's kernels
// (as the runtime's scorer does) and beside the previous frame's. --gpu_wait sets how
// threads wait for the device (engine/runtime/runtime_config.h; CUDA's default: spin).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/common/cpu_bench.h"
#include "bench/common/gpu_utilization.h"
#include "bench/runtime/host_pinning.h"
#include "bench/runtime/resident_twin.h"
#include "bench/runtime/upload_traffic.h"
#include "engine/format/frame.h"
#include "engine/runtime/frame_pipeline.h"
#include "engine/runtime/frame_scorer.h"
#include "engine/runtime/gpu_scorer.h"
#include "engine/runtime/pinned_frame_memory.h"

namespace exactq {
namespace {

using Clock = std::chrono::steady_clock;

struct Size {
  std::string name;
  int width, height;
};

// Textured content and a noisy copy (a mid-quality encode), the same on every run.
void MakePair(const FrameGeometry& g, Frame* ref, Frame* dis) {
  *ref = *Frame::Create(g);
  *dis = *Frame::Create(g);
  for (int p = 0; p < g.plane_count(); ++p) {
    uint8_t* r = ref->mutable_plane8(p);
    uint8_t* d = dis->mutable_plane8(p);
    const int w = g.plane_width(p), h = g.plane_height(p);
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        const uint32_t hash = (static_cast<uint32_t>(x) * 73856093u) ^ (static_cast<uint32_t>(y) * 19349663u) ^
                              (static_cast<uint32_t>(p) * 83492791u);
        const int v = 16 + (x / 3 + y / 2 + 40 * p) % 200;
        r[static_cast<size_t>(y) * w + x] = static_cast<uint8_t>(v);
        d[static_cast<size_t>(y) * w + x] = static_cast<uint8_t>(std::min(235, v + static_cast<int>(hash % 13)));
      }
    }
  }
}

bool SameBits(const FrameScores& a, const FrameScores& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i].value, &b[i].value, sizeof(double)) != 0) return false;
  }
  return true;
}

// A request's metrics: "psnr" or several joined by '+' ("psnr+ssim+ssimulacra2").
std::vector<MetricSpec> Specs(const std::string& metrics) {
  std::vector<MetricSpec> specs;
  for (absl::string_view name : absl::StrSplit(metrics, '+', absl::SkipEmpty()))
    specs.push_back({std::string(name), {}});
  return specs;
}

std::vector<GpuMetricRequest> Requests(const std::string& metrics) {
  std::vector<GpuMetricRequest> requests;
  for (const MetricSpec& spec : Specs(metrics)) requests.push_back({spec.name, spec.options});
  return requests;
}

// One stream's work: scores the pair once (or hands it to the stream's pipeline);
// false on an error or other bits.
using Worker = std::function<bool()>;
// Waits for a stream's frames still in flight; false when one failed.
using Drain = std::function<bool()>;

// Frames per second of `workers` running at once for `seconds` (each thread finishes
// the frame it is on, and drains its frames in flight when `drains` are given),
// median over `reps`. *ok turns false on any failed frame.
double Throughput(std::vector<Worker>& workers, double seconds, int reps, bool* ok,
                  const std::vector<Drain>* drains = nullptr) {
  std::vector<double> fps;
  for (int rep = 0; rep < reps; ++rep) {
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    std::atomic<int64_t> frames{0};
    std::atomic<bool> failed{false};
    Clock::time_point start, deadline;
    std::vector<Clock::time_point> finished(workers.size());
    std::vector<std::thread> threads;
    for (size_t i = 0; i < workers.size(); ++i) {
      threads.emplace_back([&, i] {
        ready.fetch_add(1);
        while (!go.load()) std::this_thread::yield();
        int64_t n = 0;
        while (Clock::now() < deadline) {
          if (!workers[i]()) failed.store(true);
          ++n;
        }
        if (drains != nullptr && !(*drains)[i]()) failed.store(true);
        finished[i] = Clock::now();
        frames.fetch_add(n);
      });
    }
    while (ready.load() < static_cast<int>(workers.size())) std::this_thread::yield();
    start = Clock::now();
    deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    go.store(true);
    for (std::thread& t : threads) t.join();
    Clock::time_point end = start;
    for (const Clock::time_point& f : finished) end = std::max(end, f);
    fps.push_back(static_cast<double>(frames.load()) / std::chrono::duration<double>(end - start).count());
    if (failed.load()) *ok = false;
  }
  return bench::Median(fps);
}

struct Options {
  bool gpu = true, cpu = true;
  std::vector<std::string> metrics = {"psnr", "ssim", "ssimulacra2"};
  std::vector<Size> sizes = {{"1080p", 1920, 1080}, {"4k", 3840, 2160}};
  std::vector<Size> cpu_sizes = {{"1080p", 1920, 1080}};
  std::vector<int> streams = {1, 4, 16};
  std::vector<int> cpu_streams = {1, 4};
  double seconds = 0.5, cpu_seconds = 2.0;
  int reps = 3;
  int frames_in_flight = 2;             // K of the engine's pipeline per stream
  bool resident = false;                // also each metric alone on frames already on the device
  bool upload_traffic = false;          // and again beside the engine's upload traffic
  bool upload_modes = false;            // and the request uploading every frame, before or beside the kernels
  std::vector<int> resident_in_flight;  // and the request on resident frames with these many at once
  GpuWait gpu_wait = GpuWait::kSpin;
  std::string json, commit;
  int dirty = -1;
};

bool ParseSizes(const std::string& text, std::vector<Size>* out) {
  out->clear();
  for (absl::string_view s : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    if (s == "1080p")
      out->push_back({"1080p", 1920, 1080});
    else if (s == "4k")
      out->push_back({"4k", 3840, 2160});
    else
      return false;
  }
  return true;
}

bool ParseInts(const std::string& text, std::vector<int>* out) {
  out->clear();
  for (absl::string_view s : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    int v;
    if (!absl::SimpleAtoi(s, &v) || v < 1) return false;
    out->push_back(v);
  }
  return true;
}

bool ParseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    std::string v;
    bool good = true;
    if (bench::Flag(argv[i], "--gpu", &v))
      o->gpu = bench::ParseBool(v) == 1;
    else if (bench::Flag(argv[i], "--cpu", &v))
      o->cpu = bench::ParseBool(v) == 1;
    else if (bench::Flag(argv[i], "--metrics", &v))
      o->metrics = absl::StrSplit(v, ',', absl::SkipEmpty());
    else if (bench::Flag(argv[i], "--sizes", &v))
      good = ParseSizes(v, &o->sizes);
    else if (bench::Flag(argv[i], "--cpu_sizes", &v))
      good = ParseSizes(v, &o->cpu_sizes);
    else if (bench::Flag(argv[i], "--streams", &v))
      good = ParseInts(v, &o->streams);
    else if (bench::Flag(argv[i], "--cpu_streams", &v))
      good = ParseInts(v, &o->cpu_streams);
    else if (bench::Flag(argv[i], "--seconds", &v))
      good = absl::SimpleAtod(v, &o->seconds);
    else if (bench::Flag(argv[i], "--cpu_seconds", &v))
      good = absl::SimpleAtod(v, &o->cpu_seconds);
    else if (bench::Flag(argv[i], "--reps", &v))
      good = absl::SimpleAtoi(v, &o->reps) && o->reps > 0;
    else if (bench::Flag(argv[i], "--frames_in_flight", &v))
      good = absl::SimpleAtoi(v, &o->frames_in_flight) && o->frames_in_flight > 0;
    else if (bench::Flag(argv[i], "--resident", &v))
      o->resident = bench::ParseBool(v) == 1;
    else if (bench::Flag(argv[i], "--upload_traffic", &v))
      o->upload_traffic = bench::ParseBool(v) == 1;
    else if (bench::Flag(argv[i], "--upload_modes", &v))
      o->upload_modes = bench::ParseBool(v) == 1;
    else if (bench::Flag(argv[i], "--resident_in_flight", &v))
      good = ParseInts(v, &o->resident_in_flight);
    else if (bench::Flag(argv[i], "--gpu_wait", &v)) {
      absl::StatusOr<GpuWait> wait = ParseGpuWait(v);
      good = wait.ok();
      if (good) o->gpu_wait = *wait;
    } else if (bench::Flag(argv[i], "--json", &v))
      o->json = v;
    else if (bench::Flag(argv[i], "--commit", &v))
      o->commit = v;
    else if (bench::Flag(argv[i], "--dirty", &v))
      o->dirty = bench::ParseBool(v);
    else
      good = false;
    if (!good) {
      std::fprintf(stderr, "runtime_bench: bad argument %s (see the comment at the top of runtime_bench.cc)\n",
                   argv[i]);
      return false;
    }
  }
  return true;
}

struct Row {
  std::string name;
  double value;
  std::string unit;
};

class Bench {
 public:
  explicit Bench(Options o) : o_(std::move(o)) {}

  int Run() {
    if (absl::Status s = ApplyGpuWait(o_.gpu_wait); !s.ok()) {
      std::fprintf(stderr, "runtime_bench: %s\n", std::string(s.message()).c_str());
      return 1;
    }
    absl::StatusOr<std::vector<GpuDevice>> devices = ListGpuDevices();
    std::string device = bench::CpuDescription();
    if (o_.gpu && devices.ok()) {
      device = absl::StrCat((*devices)[0].name, " (cuda:0 of ", devices->size(), ", compute ",
                            (*devices)[0].compute_capability, "); host ", device);
      std::printf(
          "GPU: engine (FramePipeline, %d frames in flight per stream, auto; pageable frames, and "
          "engine_pinned: frames from PinnedFrameMemory) vs kernels (direct twins, pinned frames); "
          "threads wait for the GPU: %s\n",
          o_.frames_in_flight, GpuWaitName(o_.gpu_wait));
      std::printf("%-12s %-6s %7s %12s %17s %12s %7s %7s %12s %9s %9s %9s\n", "metric", "size", "streams", "engine_fps",
                  "engine_pinned_fps", "kernel_fps", "ratio", "p_ratio", "direct_fps", "auto_cost", "gpu_idle",
                  "p_idle");
      for (const Size& size : o_.sizes) {
        for (const std::string& metric : o_.metrics) Gpu(metric, size);
      }
    } else if (o_.gpu) {
      std::printf("GPU part skipped: %s\n", std::string(devices.status().message()).c_str());
    }
    if (o_.cpu) {
      std::printf("\nCPU placement (FrameScorer, cpu): %s\n", bench::CpuDescription().c_str());
      std::printf("%-12s %-6s %7s %12s %14s\n", "metric", "size", "streams", "fps", "ms_per_frame");
      for (const Size& size : o_.cpu_sizes) {
        for (const std::string& metric : o_.metrics) Cpu(metric, size);
      }
    }
    std::printf("\nbits: every frame == CPU reference: %s\n", all_ok_ ? "yes" : "NO");
    if (!o_.json.empty() && !WriteJson(device)) {
      std::fprintf(stderr, "cannot write %s\n", o_.json.c_str());
      return 1;
    }
    return all_ok_ ? 0 : 1;
  }

 private:
  struct Inputs {
    FrameGeometry geometry;
    Frame ref, dis;
    FrameScores expected;  // the CPU path's scores
  };

  Inputs MakeInputs(const std::string& metric, const Size& size) {
    Inputs in;
    in.geometry = FrameGeometry{size.width, size.height, PixelFormat{ChromaLayout::k420, 8}};
    MakePair(in.geometry, &in.ref, &in.dis);
    auto cpu = FrameScorer::Create(in.geometry, Specs(metric), BackendPreference::kCpu);
    in.expected = (*cpu)->Score(in.ref, in.dis)->scores;
    return in;
  }

  void Add(const std::string& name, double value, const std::string& unit) { rows_.push_back({name, value, unit}); }

  void Gpu(const std::string& metric, const Size& size) {
    Inputs in = MakeInputs(metric, size);
    Frame pinned_ref = in.ref, pinned_dis = in.dis;
    bench::PinnedHost pin_ref(pinned_ref.mutable_bytes(), pinned_ref.size_bytes());
    bench::PinnedHost pin_dis(pinned_dis.mutable_bytes(), pinned_dis.size_bytes());
    // As exactqd's frame assembler allocates a GPU stream's pictures (copy assignment
    // keeps the target's memory resource).
    Frame memory_ref = *Frame::Create(in.geometry, PinnedFrameMemory());
    Frame memory_dis = *Frame::Create(in.geometry, PinnedFrameMemory());
    memory_ref = in.ref;
    memory_dis = in.dis;
    for (int streams : o_.streams) {
      bool ok = true;
      bench::GpuUtilization busy, pinned_busy;
      uploaded_bytes_ = 0;
      uploaded_frames_ = 0;
      const double engine = EngineThroughput(in, metric, size, streams, in.ref, in.dis, &ok, &busy);
      if (engine < 0) return;
      const uint64_t frames_before = uploaded_frames_.load();
      upload_ns_ = 0;
      scoring_ns_ = 0;
      order_wait_ns_ = 0;
      const double engine_pinned =
          EngineThroughput(in, metric, size, streams, memory_ref, memory_dis, &ok, &pinned_busy);
      if (engine_pinned < 0) return;
      const double pinned_frames = static_cast<double>(uploaded_frames_.load() - frames_before);
      // Counted by the device frame where it copies, over every answered frame of both runs.
      const double bytes_per_frame =
          uploaded_frames_ > 0 ? static_cast<double>(uploaded_bytes_) / static_cast<double>(uploaded_frames_) : 0;
      const double kernels = DirectThroughput(in, metric, streams, pinned_ref, pinned_dis, &ok);
      double direct = 0;
      if (streams == 1) direct = DirectThroughput(in, metric, streams, in.ref, in.dis, &ok);
      all_ok_ = all_ok_ && ok;
      const std::string key = absl::StrCat(metric, "/", size.name, "/streams_", streams, "/");
      Add(key + "engine_fps", engine, "frames/s");
      Add(key + "engine_pinned_fps", engine_pinned, "frames/s");
      Add(key + "kernel_fps", kernels, "frames/s");
      Add(key + "engine_vs_kernel", engine / kernels, "ratio");
      Add(key + "engine_pinned_vs_kernel", engine_pinned / kernels, "ratio");
      if (streams == 1) {
        Add(key + "direct_pageable_fps", direct, "frames/s");
        Add(key + "engine_vs_direct_pageable", engine / direct, "ratio");
      }
      Add(key + "host_to_device_bytes_per_frame", bytes_per_frame, "bytes");
      Add(key + "pair_bytes", 2.0 * static_cast<double>(in.geometry.frame_bytes()), "bytes");
      Add(key + "bits_equal_cpu", ok ? 1 : 0, "bool");
      if (busy.samples > 0) {
        Add(key + "engine_gpu_idle_share", 1.0 - busy.busy_fraction, "ratio");
        Add(key + "engine_gpu_busy_samples", busy.samples, "count");
      }
      if (pinned_busy.samples > 0) {
        Add(key + "engine_pinned_gpu_idle_share", 1.0 - pinned_busy.busy_fraction, "ratio");
        Add(key + "engine_pinned_gpu_busy_samples", pinned_busy.samples, "count");
      }
      auto idle = [](const bench::GpuUtilization& u) {
        return u.samples > 0 ? absl::StrCat(static_cast<int>((1.0 - u.busy_fraction) * 100 + 0.5), "%") : "-";
      };
      std::printf("%-12s %-6s %7d %12.1f %17.1f %12.1f %7.3f %7.3f %12s %9s %9s %9s%s\n", metric.c_str(),
                  size.name.c_str(), streams, engine, engine_pinned, kernels, engine / kernels, engine_pinned / kernels,
                  streams == 1 ? absl::StrCat(static_cast<int>(direct * 10) / 10.0).c_str() : "",
                  streams == 1 ? absl::StrCat(static_cast<int>(engine / direct * 1000) / 1000.0).c_str() : "",
                  idle(busy).c_str(), idle(pinned_busy).c_str(), ok ? "" : "  BITS DIFFER");
      std::printf("%-12s %-6s %7d host-to-device bytes per frame %.0f (one pair: %zu)\n", "", size.name.c_str(),
                  streams, bytes_per_frame, 2 * in.geometry.frame_bytes());
      if (pinned_frames > 0) {
        const double upload_ms = static_cast<double>(upload_ns_.load()) / pinned_frames / 1e6;
        const double scoring_ms = static_cast<double>(scoring_ns_.load()) / pinned_frames / 1e6;
        const double order_ms = static_cast<double>(order_wait_ns_.load()) / pinned_frames / 1e6;
        Add(key + "engine_pinned_upload_ms", upload_ms, "ms");
        Add(key + "engine_pinned_scoring_ms", scoring_ms, "ms");
        Add(key + "engine_pinned_order_wait_ms", order_ms, "ms");
        std::printf("%-12s %-6s %7d engine_pinned per frame: upload %.3f ms of scoring %.3f ms; %.3f ms to its turn\n",
                    "", size.name.c_str(), streams, upload_ms, scoring_ms, order_ms);
      }
      if (o_.resident) Resident(metric, size, streams, engine_pinned, key);
      std::fflush(stdout);
    }
  }

  // Each metric of the request alone on frames already on the device, with as many
  // frames in flight as the engine had (streams x K): the sum of their times per frame
  // against the engine's time per frame for the whole request (page-locked frames). Then
  // the whole request on resident frames, as the runtime enqueues it: what the request
  // costs beyond the sum without its uploads. With --upload_traffic, each is timed again,
  // on the same twins, beside the engine's upload traffic (ResidentFps).
  void Resident(const std::string& metrics, const Size& size, int streams, double engine_fps, const std::string& key) {
    const double traffic = o_.upload_traffic ? engine_fps : 0;
    double sum_ms = 0, traffic_sum_ms = 0;
    std::string parts;
    for (const MetricSpec& spec : Specs(metrics)) {
      const ResidentRates r = ResidentFps({{spec.name, spec.options}}, spec.name, size, streams, traffic);
      if (r.fps <= 0) return;
      sum_ms += 1000.0 / r.fps;
      traffic_sum_ms += 1000.0 / r.fps_beside_uploads;
      parts += absl::StrCat(parts.empty() ? "" : " + ", spec.name, " ", static_cast<int>(1e5 / r.fps) / 100.0, " ms");
      Add(absl::StrCat(key, "resident_", spec.name, "_fps"), r.fps, "frames/s");
    }
    const double engine_ms = 1000.0 / engine_fps;
    Add(key + "resident_sum_ms_per_frame", sum_ms, "ms");
    Add(key + "engine_pinned_ms_per_frame", engine_ms, "ms");
    Add(key + "engine_pinned_vs_resident_sum", engine_ms / sum_ms, "ratio");
    std::printf("%-12s %-6s %7d resident, %d in flight: %s = %.3f ms per frame; engine_pinned %.3f ms: %.3fx\n", "",
                size.name.c_str(), streams, streams * o_.frames_in_flight, parts.c_str(), sum_ms, engine_ms,
                engine_ms / sum_ms);
    if (Specs(metrics).size() < 2) return;
    std::vector<bench::ResidentMetric> request;
    for (const MetricSpec& spec : Specs(metrics)) request.push_back({spec.name, spec.options});
    const ResidentRates r = ResidentFps(request, metrics, size, streams, traffic);
    if (r.fps <= 0) return;
    const double request_ms = 1000.0 / r.fps;
    Add(key + "resident_request_ms_per_frame", request_ms, "ms");
    Add(key + "resident_request_vs_resident_sum", request_ms / sum_ms, "ratio");
    std::printf(
        "%-12s %-6s %7d resident request (no uploads): %.3f ms per frame: %.3fx the sum; engine_pinned %.3fx it\n", "",
        size.name.c_str(), streams, request_ms, request_ms / sum_ms, engine_ms / request_ms);
    for (int at_once : o_.resident_in_flight) {
      const ResidentRates n = ResidentFps(request, metrics, size, streams, 0, at_once);
      if (n.fps <= 0) return;
      Add(absl::StrCat(key, "resident_request_", at_once, "_at_once_ms_per_frame"), 1000.0 / n.fps, "ms");
      std::printf("%-12s %-6s %7d resident request, %d at once: %.3f ms per frame (%.3fx at %d)\n", "",
                  size.name.c_str(), streams, at_once, 1000.0 / n.fps, r.fps / n.fps, streams * o_.frames_in_flight);
    }
    if (o_.upload_modes) {
      const struct {
        bench::PairUpload mode;
        const char* name;
      } modes[] = {{bench::PairUpload::kEachFrame, "upload_then_kernels"},
                   {bench::PairUpload::kAhead, "upload_beside_kernels"}};
      for (const auto& m : modes) {
        const ResidentRates u = ResidentFps(request, metrics, size, streams, 0, 0, m.mode);
        if (u.fps <= 0) return;
        Add(absl::StrCat(key, m.name, "_ms_per_frame"), 1000.0 / u.fps, "ms");
        std::printf("%-12s %-6s %7d request, pair uploaded every frame (%s): %.3f ms per frame: %.3fx the sum\n", "",
                    size.name.c_str(), streams, m.name, 1000.0 / u.fps, 1000.0 / u.fps / sum_ms);
      }
    }
    if (traffic <= 0) return;
    const double traffic_request_ms = 1000.0 / r.fps_beside_uploads;
    Add(key + "upload_traffic_resident_sum_ms_per_frame", traffic_sum_ms, "ms");
    Add(key + "upload_traffic_resident_request_ms_per_frame", traffic_request_ms, "ms");
    Add(key + "upload_traffic_copies_per_second", r.copies_per_second, "copies/s");
    std::printf(
        "%-12s %-6s %7d with %.0f pair uploads/s beside them (no kernels): sum %.3f ms (%.3fx without), request "
        "%.3f ms (%.3fx without)\n",
        "", size.name.c_str(), streams, r.copies_per_second, traffic_sum_ms, traffic_sum_ms / sum_ms,
        traffic_request_ms, traffic_request_ms / request_ms);
  }

  struct ResidentRates {
    double fps = -1;                 // -1 after a failure that Fail reported
    double fps_beside_uploads = -1;  // with the upload traffic beside the twins
    double copies_per_second = 0;    // the traffic's pairs copied per second, as measured
  };

  // Frames per second of streams x K resident twins of `metrics` scoring at once, every
  // frame checked against the CPU's bits; with `traffic` > 0, then the same twins again
  // while one pair's bytes are copied to the device `traffic` times a second, no kernels
  // reading them (bench/runtime/upload_traffic.h).
  ResidentRates ResidentFps(const std::vector<bench::ResidentMetric>& metrics, const std::string& label,
                            const Size& size, int streams, double traffic, int at_once = 0,
                            bench::PairUpload upload = bench::PairUpload::kOnce) {
    ResidentRates rates;
    std::string names;
    for (const bench::ResidentMetric& m : metrics) names += absl::StrCat(names.empty() ? "" : "+", m.name);
    Inputs in = MakeInputs(names, size);
    // The upload modes copy from page-locked frames, as the engine_pinned rows do.
    std::optional<bench::PinnedHost> pin_ref, pin_dis;
    if (upload != bench::PairUpload::kOnce) {
      pin_ref.emplace(in.ref.mutable_bytes(), in.ref.size_bytes());
      pin_dis.emplace(in.dis.mutable_bytes(), in.dis.size_bytes());
    }
    if (at_once <= 0) at_once = streams * o_.frames_in_flight;
    std::vector<std::unique_ptr<bench::ResidentTwin>> resident;
    std::vector<Worker> workers;
    for (int t = 0; t < at_once; ++t) {
      absl::StatusOr<std::unique_ptr<bench::ResidentTwin>> twin =
          bench::CreateResidentTwin(0, metrics, in.ref, in.dis, upload);
      if (!twin.ok()) {
        Fail(label, size, absl::StrCat("resident: ", twin.status().ToString()));
        return rates;
      }
      bench::ResidentTwin* p = twin->get();
      resident.push_back(std::move(*twin));
      workers.push_back([p, &in] {
        absl::StatusOr<FrameScores> f = p->Score();
        return f.ok() && SameBits(*f, in.expected);
      });
    }
    if (!Warm(workers, label, size, "resident")) return rates;
    bool ok = true;
    rates.fps = Throughput(workers, o_.seconds, o_.reps, &ok);
    if (traffic > 0) {
      absl::StatusOr<std::unique_ptr<bench::UploadTraffic>> uploads =
          bench::StartUploadTraffic(0, in.ref.size_bytes() + in.dis.size_bytes(), traffic);
      if (!uploads.ok()) {
        Fail(label, size, absl::StrCat("upload traffic: ", uploads.status().ToString()));
        rates.fps = -1;
        return rates;
      }
      const auto begin = std::chrono::steady_clock::now();
      rates.fps_beside_uploads = Throughput(workers, o_.seconds, o_.reps, &ok);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      rates.copies_per_second = static_cast<double>((*uploads)->copies()) / seconds;
    }
    all_ok_ = all_ok_ && ok;
    return rates;
  }

  // The engine's throughput on `ref`/`dis` (pageable or page-locked), or -1 after a
  // failure that Fail reported. *busy: the GPU's busy share meanwhile.
  double EngineThroughput(const Inputs& in, const std::string& metric, const Size& size, int streams, const Frame& ref,
                          const Frame& dis, bool* ok, bench::GpuUtilization* busy) {
    // Per stream: a pipeline fed the same pair, and a flag its answers raise on a
    // frame that failed, left the GPU or differs from the CPU reference.
    std::vector<std::unique_ptr<std::atomic<bool>>> bad;  // outlives the pipelines' answers
    std::vector<std::unique_ptr<FramePipeline>> pipelines;
    std::vector<Worker> workers;
    std::vector<Drain> drains;
    for (int s = 0; s < streams; ++s) {
      auto scorer = FrameScorer::Create(in.geometry, Specs(metric), BackendPreference::kAuto);
      if (!scorer.ok()) {
        Fail(metric, size, scorer.status().ToString());
        return -1;
      }
      pipelines.push_back(
          std::make_unique<FramePipeline>(std::move(*scorer), FramePipeline::Options{o_.frames_in_flight}));
      FramePipeline* p = pipelines.back().get();
      if (p->frames_in_flight() != o_.frames_in_flight) {
        Fail(metric, size,
             absl::StrCat("only ", p->frames_in_flight(), " frames in flight: ", p->sibling_error().ToString()));
        return -1;
      }
      bad.push_back(std::make_unique<std::atomic<bool>>(false));
      std::atomic<bool>* b = bad.back().get();
      workers.push_back([this, p, b, &in, &ref, &dis] {
        const absl::Status submitted = p->Submit(ref, dis, [this, b, &in](FramePipeline::Result r) {
          if (!r.scored.ok() || r.scored->backend != Backend::kCuda || !SameBits(r.scored->scores, in.expected)) {
            b->store(true);
            return;
          }
          uploaded_bytes_.fetch_add(r.scored->host_to_device_bytes);
          uploaded_frames_.fetch_add(1);
          upload_ns_.fetch_add(r.scored->durations.host_to_device.count());
          scoring_ns_.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(r.done - r.started).count());
          order_wait_ns_.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - r.done).count());
        });
        return submitted.ok() && !b->load();
      });
      drains.push_back([p, b] {
        p->Drain();
        return !b->load();
      });
    }
    // Warm K frames per stream, so that every scorer of the pipeline has run once.
    for (int k = 0; k < o_.frames_in_flight; ++k) {
      if (!Warm(workers, metric, size, "engine")) return -1;
    }
    for (size_t s = 0; s < drains.size(); ++s) {
      if (!drains[s]()) {
        Fail(metric, size, "engine: a warm-up frame failed or differs from the CPU reference");
        return -1;
      }
    }
    // The GPU's busy share over the engine's runs (NVML: time with a kernel running).
    std::string why_no_nvml;
    auto window = bench::GpuUtilizationWindow::Start(bench::CudaPciBusId(0), &why_no_nvml);
    const double fps = Throughput(workers, o_.seconds, o_.reps, ok, &drains);
    if (window != nullptr) *busy = window->Finish();
    if (window == nullptr && !nvml_reported_) {
      std::printf("(GPU idle time not measured: %s)\n", why_no_nvml.c_str());
      nvml_reported_ = true;
    }
    return fps;
  }

  double DirectThroughput(const Inputs& in, const std::string& metric, int streams, const Frame& ref, const Frame& dis,
                          bool* ok) {
    std::vector<std::unique_ptr<GpuScorer>> scorers;
    std::vector<Worker> workers;
    for (int s = 0; s < streams; ++s) {
      absl::StatusOr<std::unique_ptr<GpuScorer>> gpu = CreateGpuScorer(0, in.geometry, Requests(metric));
      if (!gpu.ok()) {
        std::fprintf(stderr, "CreateGpuScorer: %s\n", gpu.status().ToString().c_str());
        *ok = false;
        return 0;
      }
      GpuScorer* p = gpu->get();
      scorers.push_back(std::move(*gpu));
      workers.push_back([p, &ref, &dis, &in] {
        absl::StatusOr<GpuFrameScores> f = p->Score(ref, dis, nullptr, nullptr);
        return f.ok() && SameBits(f->scores, in.expected);
      });
    }
    if (!Warm(workers, metric, {}, "kernels")) {
      *ok = false;
      return 0;
    }
    return Throughput(workers, o_.seconds, o_.reps, ok);
  }

  void Cpu(const std::string& metric, const Size& size) {
    Inputs in = MakeInputs(metric, size);
    for (int streams : o_.cpu_streams) {
      bool ok = true;
      std::vector<std::unique_ptr<FrameScorer>> scorers;
      std::vector<Worker> workers;
      for (int s = 0; s < streams; ++s) {
        scorers.push_back(std::move(*FrameScorer::Create(in.geometry, Specs(metric), BackendPreference::kCpu)));
        FrameScorer* p = scorers.back().get();
        workers.push_back([p, &in] {
          absl::StatusOr<ScoredFrame> f = p->Score(in.ref, in.dis);
          return f.ok() && f->backend == Backend::kCpu && SameBits(f->scores, in.expected);
        });
      }
      const double fps = Throughput(workers, o_.cpu_seconds, o_.reps, &ok);
      all_ok_ = all_ok_ && ok;
      const std::string key = absl::StrCat("cpu/", metric, "/", size.name, "/streams_", streams, "/");
      Add(key + "fps", fps, "frames/s");
      Add(key + "bits_equal_reference", ok ? 1 : 0, "bool");
      std::printf("%-12s %-6s %7d %12.2f %14.1f%s\n", metric.c_str(), size.name.c_str(), streams, fps, 1000.0 / fps,
                  ok ? "" : "  BITS DIFFER");
      std::fflush(stdout);
    }
  }

  // One frame per stream before timing: allocations, first launches, a bits check.
  bool Warm(std::vector<Worker>& workers, const std::string& metric, const Size& size, const char* what) {
    for (Worker& w : workers) {
      if (!w()) {
        Fail(metric, size, absl::StrCat(what, ": the first frame failed or differs from the CPU reference"));
        return false;
      }
    }
    return true;
  }

  void Fail(const std::string& metric, const Size& size, const std::string& why) {
    std::fprintf(stderr, "%s %s: %s\n", metric.c_str(), size.name.c_str(), why.c_str());
    all_ok_ = false;
  }

  bool WriteJson(const std::string& device) const {
    const bench::Commit commit = bench::FindCommit(o_.commit, o_.dirty);
    FILE* f = std::fopen(bench::UserPath(o_.json).c_str(), "w");
    if (f == nullptr) return false;
    std::fprintf(f, "{\n  \"benchmark\": \"runtime\",\n  \"device\": %s,\n  \"commit\": %s,\n  \"dirty\": %s,\n",
                 bench::JsonString(device).c_str(), bench::JsonString(commit.sha).c_str(),
                 commit.dirty ? "true" : "false");
    std::fprintf(f, "  \"frames_in_flight\": %d,\n  \"gpu_wait\": \"%s\",\n", o_.frames_in_flight,
                 GpuWaitName(o_.gpu_wait));
    std::fprintf(
        f, "  \"input\": %s,\n  \"results\": [\n",
        bench::JsonString(absl::StrCat("synthetic textured pair with noise, 8-bit 4:2:0; engine: ", o_.frames_in_flight,
                                       " frames in flight per stream; ", o_.seconds, " s per GPU measurement, ",
                                       o_.cpu_seconds, " s per CPU one, median of ", o_.reps))
            .c_str());
    for (size_t i = 0; i < rows_.size(); ++i) {
      std::fprintf(f, "    {\"name\": %s, \"value\": %.9g, \"unit\": %s}%s\n", bench::JsonString(rows_[i].name).c_str(),
                   rows_[i].value, bench::JsonString(rows_[i].unit).c_str(), i + 1 < rows_.size() ? "," : "");
    }
    std::fprintf(f, "  ]\n}\n");
    return std::fclose(f) == 0;
  }

  std::atomic<uint64_t> uploaded_bytes_{0};  // the engine's answers: bytes uploaded, frames
  std::atomic<uint64_t> uploaded_frames_{0};
  // The engine's answers: time from the upload's start to its end on the device, in the
  // scorer (start to scored), and from scored to answered (in order).
  std::atomic<int64_t> upload_ns_{0}, scoring_ns_{0}, order_wait_ns_{0};
  Options o_;
  std::vector<Row> rows_;
  bool all_ok_ = true;
  bool nvml_reported_ = false;
};

}  // namespace
}  // namespace exactq

int main(int argc, char** argv) {
  exactq::Options options;
  if (!exactq::ParseArgs(argc, argv, &options)) return 2;
  return exactq::Bench(options).Run();
}
