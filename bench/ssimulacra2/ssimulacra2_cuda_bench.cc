// Benchmark of the ssimulacra2 CUDA twin (engine/metrics/ssimulacra2/cuda) in each of its
// sum modes, at 1920x1080 and 3840x2160 8-bit 4:2:0 (and, with --sizes, 480x270 and
// 960x540, synthetic: with 1080p and 4K they split the cost of a frame into a part that
// grows with its area and a part that does not):
//   exact_segments    the default: the segment pipeline per sum, sums concurrent (exact);
//   exact_event_walk  the event walk per sum, same concurrency (exact);
//   inexact_tree      cub::DeviceReduce::Sum per sum, same concurrency (NOT exact: the
//                     cost baseline only).
// Each instance scores a stream of frame pairs (--stream): `same`, the one pair again and
// again; `pan` (default), the pair panned by 4 more columns and 2 more rows every frame,
// 8 frames in a cycle (a camera pan); `cut`, the pair and the pair upside down in turn (a
// scene cut at every frame).
// For each size and mode:
//   latency      one frame at a time through Sums (upload through pinned staging, the
//                graph, the read-back): median over --reps of the host wall time and of
//                the device time (CUDA events from the upload's start to the read-back's
//                end); the first frame (allocation, graph capture) is not timed; then the
//                same with both pictures in page-locked memory (cudaHostRegister), as
//                exactqd's receive buffers hold them: no staging copy; for
//                exact_segments, the chunks per frame the strided form refused (the
//                redo's tile path, stats().chunks_in_tile; a sum's first chunk is one of
//                them, formed there as one term);
//   throughput   N instances (N in --instances, default 1,2,4), each on its own host
//                thread with its own CUDA streams, each scoring --frames frames through
//                Score: frames/s over all of them (wall time from a common start to the
//                last frame);
// and the ratios exact/inexact (device latency and time per frame in flight, so > 1 is
// the price of exactness). Every exact result for the stream's first pair is compared
// with the CPU reference's bits (ReferenceSums, once per size; --check=0 skips it), the
// inexact one's largest relative difference printed. The 4K pair is the corpus's p4k_x265_crf26 frame and the 1080p
// pair its p1080_x264_crf27 frame when $EXACTQ_CORPUS (or --corpus=DIR) has them;
// synthetic textured pairs otherwise.
//
//   bazel build -c opt --config=static //bench/ssimulacra2:ssimulacra2_cuda_bench
//   bazel-bin/bench/ssimulacra2/ssimulacra2_cuda_bench [--reps=20] [--frames=60] [--instances=1,2,4]
//       [--modes=exact_segments,exact_event_walk,inexact_tree] [--sizes=270p,540p,1080p,4k]
//       [--stream=pan|same|cut] [--graph=1] [--channel_batch=1|3] [--stream_per_scale=0|1]
//       [--priority_rank=-1] [--advice=32|64] [--slab=128] [--evict_last=1] [--slab_min_in_flight=4]
//       [--check=1]
//       [--corpus=DIR] [--json=FILE] [--commit=SHA] [--dirty=true|false]
//
// Exits 2 without a GPU or on a bad flag, 1 when an exact result differs from the reference.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/common/bench_frames.h"
#include "bench/common/cpu_bench.h"
#include "engine/format/frame.h"
#include "engine/metrics/ssimulacra2/cuda/ssimulacra2_cuda.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_reference.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_score.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_test_frames.h"

namespace exactq {
namespace ssimulacra2 {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

bool SameBits(double a, double b) { return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0; }

struct Flags {
  int reps = 20;
  int frames = 60;
  bool graph = true;
  int channel_batch = 3;  // Ssimulacra2CudaOptions::channels_per_sum_batch
  int stream_rank = -1;   // Ssimulacra2CudaOptions::sum_stream_priority_rank (-1: the mode's default)
  bool stream_per_scale = Ssimulacra2CudaOptions{}.sum_stream_per_scale;
  bool binary32_advice = Ssimulacra2CudaOptions{}.binary32_advice;              // --advice=32|64
  int slab_chunks = Ssimulacra2CudaOptions{}.sum_slab_chunks;                   // --slab=N (0: whole scales)
  bool evict_last = Ssimulacra2CudaOptions{}.bases_evict_last;                  // --evict_last=0|1
  int slab_min_in_flight = Ssimulacra2CudaOptions{}.slab_min_frames_in_flight;  // --slab_min_in_flight=N
  bool check = true;
  std::string corpus;
  std::vector<int> instances = {1, 2, 4};
  std::vector<std::string> sizes = {"1080p", "4k"};
  std::vector<Ssimulacra2SumMode> modes = {Ssimulacra2SumMode::kExactSegments, Ssimulacra2SumMode::kExactEventWalk,
                                           Ssimulacra2SumMode::kInexactTree};
  std::string stream = "pan";
  bench::OutputFlags output;
};

// The sizes --sizes takes. 270p and 540p are synthetic (the corpus has no such pair): with
// 1080p and 4K they put the per-frame costs that do not grow with the frame's size beside
// those that do.
struct SizeSpec {
  const char* label;
  int width;
  int height;
  const char* ref_name;  // corpus files; "" for a synthetic pair
  const char* dis_name;
};
constexpr SizeSpec kSizes[] = {{"270p", 480, 270, "", ""},
                               {"540p", 960, 540, "", ""},
                               {"1080p", 1920, 1080, "p1080.ref.y4m", "p1080_x264_crf27.dist.y4m"},
                               {"4k", 3840, 2160, "p4k.ref.y4m", "p4k_x265_crf26.dist.y4m"}};

bool KnownSize(const std::string& label) {
  return std::any_of(std::begin(kSizes), std::end(kSizes), [&](const SizeSpec& s) { return label == s.label; });
}

std::string SizeLabels() {
  std::string out;
  for (const SizeSpec& s : kSizes) out += std::string(out.empty() ? "" : ", ") + s.label;
  return out;
}

bool ParseMode(const std::string& name, Ssimulacra2SumMode* mode) {
  for (Ssimulacra2SumMode m :
       {Ssimulacra2SumMode::kExactSegments, Ssimulacra2SumMode::kExactEventWalk, Ssimulacra2SumMode::kInexactTree}) {
    if (name == Ssimulacra2SumModeName(m)) {
      *mode = m;
      return true;
    }
  }
  return false;
}

std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t comma = s.find(',', start);
    const size_t end = comma == std::string::npos ? s.size() : comma;
    if (end > start) out.push_back(s.substr(start, end - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

bool ParseFlags(int argc, char** argv, Flags* f) {
  const char* env = std::getenv("EXACTQ_CORPUS");
  if (env != nullptr) f->corpus = env;
  for (int i = 1; i < argc; ++i) {
    std::string v;
    if (f->output.Parse(argv[i])) continue;
    if (bench::Flag(argv[i], "--reps", &v)) {
      f->reps = std::max(1, std::atoi(v.c_str()));
    } else if (bench::Flag(argv[i], "--frames", &v)) {
      f->frames = std::max(1, std::atoi(v.c_str()));
    } else if (bench::Flag(argv[i], "--graph", &v)) {
      f->graph = bench::ParseBool(v) != 0;
    } else if (bench::Flag(argv[i], "--channel_batch", &v)) {
      f->channel_batch = std::atoi(v.c_str());
      if (f->channel_batch != 1 && f->channel_batch != 3) {
        std::fprintf(stderr, "--channel_batch must be 1 or 3\n");
        return false;
      }
    } else if (bench::Flag(argv[i], "--stream_per_scale", &v)) {
      f->stream_per_scale = bench::ParseBool(v) != 0;
    } else if (bench::Flag(argv[i], "--advice", &v)) {
      if (v != "32" && v != "64") {
        std::fprintf(stderr, "--advice must be 32 or 64\n");
        return false;
      }
      f->binary32_advice = v == "32";
    } else if (bench::Flag(argv[i], "--slab", &v)) {
      f->slab_chunks = std::atoi(v.c_str());
      if (f->slab_chunks < 0 || f->slab_chunks % 32 != 0) {
        std::fprintf(stderr, "--slab must be 0 or a positive multiple of 32\n");
        return false;
      }
    } else if (bench::Flag(argv[i], "--evict_last", &v)) {
      f->evict_last = bench::ParseBool(v) != 0;
    } else if (bench::Flag(argv[i], "--slab_min_in_flight", &v)) {
      f->slab_min_in_flight = std::atoi(v.c_str());
      if (f->slab_min_in_flight < 1) {
        std::fprintf(stderr, "--slab_min_in_flight must be >= 1\n");
        return false;
      }
    } else if (bench::Flag(argv[i], "--priority_rank", &v)) {
      f->stream_rank = std::max(-1, std::atoi(v.c_str()));
    } else if (bench::Flag(argv[i], "--check", &v)) {
      f->check = bench::ParseBool(v) != 0;
    } else if (bench::Flag(argv[i], "--corpus", &v)) {
      f->corpus = v;
    } else if (bench::Flag(argv[i], "--instances", &v)) {
      f->instances.clear();
      for (const std::string& n : SplitComma(v)) f->instances.push_back(std::max(1, std::atoi(n.c_str())));
    } else if (bench::Flag(argv[i], "--stream", &v)) {
      if (v != "pan" && v != "same" && v != "cut") {
        std::fprintf(stderr, "unknown stream %s (pan, same, cut)\n", v.c_str());
        return false;
      }
      f->stream = v;
    } else if (bench::Flag(argv[i], "--sizes", &v)) {
      f->sizes = SplitComma(v);
      for (const std::string& size : f->sizes) {
        if (!KnownSize(size)) {
          std::fprintf(stderr, "unknown size %s (%s)\n", size.c_str(), SizeLabels().c_str());
          return false;
        }
      }
    } else if (bench::Flag(argv[i], "--modes", &v)) {
      f->modes.clear();
      for (const std::string& name : SplitComma(v)) {
        Ssimulacra2SumMode mode;
        if (!ParseMode(name, &mode)) {
          std::fprintf(stderr, "unknown mode %s (exact_segments, exact_event_walk, inexact_tree)\n", name.c_str());
          return false;
        }
        f->modes.push_back(mode);
      }
    } else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      return false;
    }
  }
  return true;
}

std::string DeviceName() {
  int device = 0;
  cudaDeviceProp prop;
  if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    return "unknown CUDA device";
  }
  int runtime = 0;
  int driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  return std::string(prop.name) + ", sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ", " +
         std::to_string(prop.multiProcessorCount) + " SMs, CUDA runtime " + std::to_string(runtime) + ", driver " +
         std::to_string(driver);
}

// The device's stream priorities, least to greatest (the ranks of --priority_rank count
// up from the least).
std::string PriorityRange() {
  int least = 0;
  int greatest = 0;
  if (cudaDeviceGetStreamPriorityRange(&least, &greatest) != cudaSuccess) return "unknown";
  return std::to_string(least) + " .. " + std::to_string(greatest);
}

struct FramePair {
  Frame ref;
  Frame dis;
};

struct Input {
  const char* label;  // kSizes' label
  int width;
  int height;
  const char* ref_name;
  const char* dis_name;
  Frame ref;
  Frame dis;
  std::string source;  // "corpus" or "synthetic"
  bool have_cpu = false;
  FrameSums cpu;  // of (ref, dis), the stream's first pair
  std::vector<FramePair> stream;
};

// The pairs each instance scores in turn (Flags::stream).
std::vector<FramePair> MakeStream(const Input& in, const std::string& kind) {
  std::vector<FramePair> stream;
  if (kind == "same") {
    stream.push_back({in.ref, in.dis});
  } else if (kind == "cut") {
    stream.push_back({in.ref, in.dis});
    stream.push_back({testing_frames::MovedFrame(in.ref, 0, 0, true), testing_frames::MovedFrame(in.dis, 0, 0, true)});
  } else {  // pan
    for (int i = 0; i < 8; ++i) {
      stream.push_back(
          {testing_frames::MovedFrame(in.ref, 4 * i, 2 * i), testing_frames::MovedFrame(in.dis, 4 * i, 2 * i)});
    }
  }
  return stream;
}

void LoadInput(const Flags& flags, Input* in) {
  std::string why;
  if (!flags.corpus.empty() && in->ref_name[0] != '\0' &&
      bench::ReadCorpusPair(flags.corpus, in->ref_name, in->dis_name, &in->ref, &in->dis, &why) &&
      in->ref.geometry().width == in->width && in->ref.geometry().height == in->height) {
    in->source = std::string("corpus ") + in->dis_name;
    return;
  }
  const FrameGeometry g{in->width, in->height, {ChromaLayout::k420, 8}};
  in->ref = testing_frames::MakeTestFrame(g, 1);
  in->dis = testing_frames::MakeTestFrame(g, 1, testing_frames::Noise{8, 0});
  in->source = "synthetic (MakeTestFrame seed 1, noise 8)";
}

std::unique_ptr<Ssimulacra2Cuda> MakeTwin(Ssimulacra2SumMode mode, const Flags& flags) {
  Ssimulacra2CudaOptions options;
  options.sum_stream_priority_rank = flags.stream_rank;
  options.channels_per_sum_batch = flags.channel_batch;
  options.sum_stream_per_scale = flags.stream_per_scale;
  options.binary32_advice = flags.binary32_advice;
  options.sum_slab_chunks = flags.slab_chunks;
  options.bases_evict_last = flags.evict_last && flags.slab_chunks > 0;
  options.slab_min_frames_in_flight = flags.slab_min_in_flight;
  options.use_graph = flags.graph;
  options.sum_mode = mode;
  absl::StatusOr<std::unique_ptr<Ssimulacra2Cuda>> twin = Ssimulacra2Cuda::Create(options);
  if (!twin.ok()) {
    std::fprintf(stderr, "Ssimulacra2Cuda::Create: %s\n", twin.status().ToString().c_str());
    std::exit(1);
  }
  return *std::move(twin);
}

struct ModeResult {
  bool ran = false;
  double tile_chunks_per_frame = 0;  // kExactSegments only
  double latency_wall_ms = 0;
  double latency_device_ms = 0;
  double locked_latency_wall_ms = 0;  // pictures in page-locked memory (no staging copy)
  double locked_latency_device_ms = 0;
  std::vector<double> fps;  // per flags.instances
};

// Compares a result with the reference: true when every bit is equal (exact modes must
// be); prints the largest relative difference otherwise.
bool CompareWithReference(const Input& in, const FrameSums& got, Ssimulacra2SumMode mode, bool quiet_if_equal = false) {
  if (!in.have_cpu) return true;
  int differ = 0;
  double max_rel = 0.0;
  for (int s = 0; s < kMaxScales; ++s) {
    for (int c = 0; c < kChannels; ++c) {
      for (int k = 0; k < kSumsPerChannel; ++k) {
        const double a = got.sums[s][c][k];
        const double b = in.cpu.sums[s][c][k];
        if (SameBits(a, b)) continue;
        ++differ;
        if (b != 0.0) max_rel = std::max(max_rel, std::fabs(a - b) / std::fabs(b));
      }
    }
  }
  const bool exact = mode != Ssimulacra2SumMode::kInexactTree;
  if (quiet_if_equal && differ == 0) return true;
  std::printf("  %-16s vs CPU reference: %d of 108 sums differ%s", Ssimulacra2SumModeName(mode), differ,
              differ > 0 ? "" : " (bit-identical)");
  if (differ > 0) std::printf(", largest relative difference %.3g", max_rel);
  std::printf("%s\n", exact && differ > 0 ? "  <-- EXACT MODE DIFFERS" : "");
  return !exact || differ == 0;
}

// Pair i of the stream (cyclic).
const FramePair& PairOf(const Input& in, int i) { return in.stream[static_cast<size_t>(i) % in.stream.size()]; }

// Whether `sums` (of pair i) must equal the CPU reference: the stream's first pair.
bool IsReferencePair(const Input& in, int i) { return static_cast<size_t>(i) % in.stream.size() == 0; }

// twin->Sums, or the error and exit 1.
FrameSums SumsOrExit(Ssimulacra2Cuda& twin, const FramePair& pair, const Input& in, const char* name) {
  absl::StatusOr<FrameSums> sums = twin.Sums(pair.ref, pair.dis);
  if (!sums.ok()) {
    std::fprintf(stderr, "%s %s: %s\n", in.label, name, sums.status().ToString().c_str());
    std::exit(1);
  }
  return *std::move(sums);
}

// One frame at a time, --reps frames: pairs 1, 2, ... of `stream` (in.stream or its
// page-locked copy); each exact result for the stream's first pair is checked against
// the CPU reference. The host wall time and device time of each frame, and the last sums.
struct LatencyRun {
  std::vector<double> wall;
  std::vector<double> device;
  FrameSums last;
};
LatencyRun TimeLatency(Ssimulacra2Cuda& twin, const std::vector<FramePair>& stream, const Flags& flags, const Input& in,
                       Ssimulacra2SumMode mode, bool* bits_ok) {
  LatencyRun run;
  for (int i = 1; i <= flags.reps; ++i) {
    const FramePair& pair = stream[static_cast<size_t>(i) % stream.size()];
    const Clock::time_point t0 = Clock::now();
    run.last = SumsOrExit(twin, pair, in, Ssimulacra2SumModeName(mode));
    run.wall.push_back(MsSince(t0));
    run.device.push_back(twin.last_device_ms());
    if (mode != Ssimulacra2SumMode::kInexactTree && IsReferencePair(in, i) &&
        !CompareWithReference(in, run.last, mode, /*quiet_if_equal=*/true)) {
      *bits_ok = false;
    }
  }
  return run;
}

ModeResult RunMode(const Flags& flags, const Input& in, Ssimulacra2SumMode mode, bool* bits_ok) {
  ModeResult r;
  const char* name = Ssimulacra2SumModeName(mode);
  {
    std::unique_ptr<Ssimulacra2Cuda> twin = MakeTwin(mode, flags);
    // The stream's first pair is (ref, dis); its first frame (allocation, graph capture) is not timed.
    const FrameSums first = SumsOrExit(*twin, in.stream[0], in, name);
    if (!CompareWithReference(in, first, mode)) *bits_ok = false;
    const LatencyRun run = TimeLatency(*twin, in.stream, flags, in, mode, bits_ok);
    r.latency_wall_ms = bench::Median(run.wall);
    r.latency_device_ms = bench::Median(run.device);
    absl::StatusOr<double> score = ScoreFromSums(run.last);
    std::printf(
        "  %-16s latency: wall %.3f ms (%.1f frames/s), device %.3f ms (median of %d; min wall %.3f); "
        "last score %.17g; %lld of %lld frames redone with the event walk\n",
        name, r.latency_wall_ms, 1000.0 / r.latency_wall_ms, r.latency_device_ms, flags.reps, bench::Min(run.wall),
        score.ok() ? *score : std::nan(""), static_cast<long long>(twin->stats().frames_redone_event_walk),
        static_cast<long long>(twin->stats().frames));
    if (mode == Ssimulacra2SumMode::kExactSegments && twin->stats().frames > 0) {
      // The chunks the strided form refused (the redo's work: a sum's first chunk and a few
      // per binade each sum crosses), per frame of all 108 sums.
      r.tile_chunks_per_frame =
          static_cast<double>(twin->stats().chunks_in_tile) / static_cast<double>(twin->stats().frames);
      std::printf("  %-16s %.1f chunks per frame through the redo's tile path\n", name, r.tile_chunks_per_frame);
    }
    // The same pairs from page-locked memory, as exactqd's receive buffers hold them: the
    // twin uploads them without the staging copy.
    std::vector<FramePair> locked_stream = in.stream;
    bool locked = true;
    for (FramePair& pair : locked_stream) {
      for (Frame* f : {&pair.ref, &pair.dis}) {
        locked =
            locked && cudaHostRegister(f->mutable_bytes(), f->size_bytes(), cudaHostRegisterDefault) == cudaSuccess;
      }
    }
    if (locked) {
      const LatencyRun locked_run = TimeLatency(*twin, locked_stream, flags, in, mode, bits_ok);
      r.locked_latency_wall_ms = bench::Median(locked_run.wall);
      r.locked_latency_device_ms = bench::Median(locked_run.device);
      std::printf("  %-16s latency, page-locked pictures: wall %.3f ms, device %.3f ms (median of %d)\n", name,
                  r.locked_latency_wall_ms, r.locked_latency_device_ms, flags.reps);
    } else {
      cudaGetLastError();
      std::printf("  %-16s latency, page-locked pictures: not measured (cudaHostRegister failed)\n", name);
    }
    for (FramePair& pair : locked_stream) {
      cudaHostUnregister(pair.ref.mutable_bytes());
      cudaHostUnregister(pair.dis.mutable_bytes());
    }
    cudaGetLastError();
  }
  for (int n : flags.instances) {
    std::vector<std::unique_ptr<Ssimulacra2Cuda>> twins;
    for (int i = 0; i < n; ++i) {
      twins.push_back(MakeTwin(mode, flags));
      absl::StatusOr<FrameScores> warm = twins.back()->Score(in.ref, in.dis);  // allocation, capture
      if (!warm.ok()) {
        std::fprintf(stderr, "%s %s x%d: %s\n", in.label, name, n, warm.status().ToString().c_str());
        std::exit(1);
      }
    }
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i) {
      threads.emplace_back([&, i] {
        ready.fetch_add(1);
        while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
        for (int f = 1; f <= flags.frames; ++f) {
          const FramePair& pair = PairOf(in, f);
          if (!twins[static_cast<size_t>(i)]->Score(pair.ref, pair.dis).ok()) failures.fetch_add(1);
        }
      });
    }
    while (ready.load() < n) std::this_thread::yield();
    const Clock::time_point t0 = Clock::now();
    go.store(true, std::memory_order_release);
    for (std::thread& t : threads) t.join();
    const double ms = MsSince(t0);
    if (failures.load() != 0) {
      std::fprintf(stderr, "%s %s x%d: %d frames failed\n", in.label, name, n, failures.load());
      std::exit(1);
    }
    const double fps = 1000.0 * n * flags.frames / ms;
    r.fps.push_back(fps);
    int64_t redone = 0;
    int64_t in_slabs = 0;
    for (const auto& t : twins) {
      redone += t->stats().frames_redone_event_walk;
      in_slabs += t->stats().frames_in_slabs;
    }
    std::printf(
        "  %-16s %d in flight (%d threads x %d frames): %.1f frames/s (%.3f ms per frame); %lld redone; "
        "%lld in slabs\n",
        name, n, n, flags.frames, fps, 1000.0 / fps, static_cast<long long>(redone), static_cast<long long>(in_slabs));
  }
  r.ran = true;
  return r;
}

int Main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, &flags)) return 2;
  std::string reason;
  if (!Ssimulacra2CudaAvailable(&reason)) {
    std::fprintf(stderr, "no usable GPU: %s\n", reason.c_str());
    return 2;
  }
  const std::string device = DeviceName();
  std::printf(
      "ssimulacra2_cuda_bench on %s; graph %d, channels per sum batch %d, sum stream per %s, sum stream priority "
      "rank %d (priorities %s), binary%d advice, slabs of %d chunks from %d frames in flight, bases evict_last %d, "
      "%d reps, %d frames per instance\n",
      device.c_str(), flags.graph ? 1 : 0, flags.channel_batch, flags.stream_per_scale ? "scale" : "parity",
      flags.stream_rank, PriorityRange().c_str(), flags.binary32_advice ? 32 : 64, flags.slab_chunks,
      flags.slab_min_in_flight, flags.evict_last && flags.slab_chunks > 0 ? 1 : 0, flags.reps, flags.frames);
  bench::Results results("ssimulacra2_cuda");
  results.set_device(device);
  bool bits_ok = true;
  std::vector<Input> inputs;
  for (const SizeSpec& s : kSizes) inputs.push_back({s.label, s.width, s.height, s.ref_name, s.dis_name});
  std::string input_description;
  for (Input& in : inputs) {
    if (std::find(flags.sizes.begin(), flags.sizes.end(), in.label) == flags.sizes.end()) continue;
    LoadInput(flags, &in);
    in.stream = MakeStream(in, flags.stream);
    input_description +=
        std::string(input_description.empty() ? "" : "; ") + in.label + ": " + in.source + ", stream " + flags.stream;
    std::printf("\n%dx%d 8-bit 4:2:0, %s; stream %s (%zu pairs in a cycle)\n", in.width, in.height, in.source.c_str(),
                flags.stream.c_str(), in.stream.size());
    if (flags.check) {
      const Clock::time_point t0 = Clock::now();
      absl::StatusOr<FrameSums> cpu = ReferenceSums(in.ref, in.dis, YuvMatrix::kBt709Limited);
      if (!cpu.ok()) {
        std::fprintf(stderr, "ReferenceSums: %s\n", cpu.status().ToString().c_str());
        return 1;
      }
      in.cpu = *cpu;
      in.have_cpu = true;
      std::printf("  CPU reference sums in %.0f ms\n", MsSince(t0));
    }
    ModeResult by_mode[3];  // by Ssimulacra2SumMode
    for (Ssimulacra2SumMode mode : flags.modes) {
      ModeResult r = RunMode(flags, in, mode, &bits_ok);
      const std::string prefix = std::string(in.label) + "/" + Ssimulacra2SumModeName(mode) + "/";
      results.Add(prefix + "latency_wall_ms", r.latency_wall_ms, "ms");
      results.Add(prefix + "latency_device_ms", r.latency_device_ms, "ms");
      if (mode == Ssimulacra2SumMode::kExactSegments) {
        results.Add(prefix + "tile_chunks_per_frame", r.tile_chunks_per_frame, "chunks");
      }
      if (r.locked_latency_wall_ms > 0) {
        results.Add(prefix + "latency_page_locked_wall_ms", r.locked_latency_wall_ms, "ms");
        results.Add(prefix + "latency_page_locked_device_ms", r.locked_latency_device_ms, "ms");
      }
      for (size_t i = 0; i < flags.instances.size(); ++i) {
        results.Add(prefix + "in_flight_" + std::to_string(flags.instances[i]) + "_fps", r.fps[i], "frames/s");
      }
      by_mode[static_cast<int>(mode)] = std::move(r);
    }
    const ModeResult& tree = by_mode[static_cast<int>(Ssimulacra2SumMode::kInexactTree)];
    for (Ssimulacra2SumMode mode : {Ssimulacra2SumMode::kExactSegments, Ssimulacra2SumMode::kExactEventWalk}) {
      const ModeResult& exact = by_mode[static_cast<int>(mode)];
      if (!exact.ran || !tree.ran) continue;
      const std::string prefix = std::string(in.label) + "/ratio_" + Ssimulacra2SumModeName(mode) + "_over_inexact/";
      const double device_ratio = exact.latency_device_ms / tree.latency_device_ms;
      const double wall_ratio = exact.latency_wall_ms / tree.latency_wall_ms;
      results.Add(prefix + "latency_device", device_ratio, "x");
      results.Add(prefix + "latency_wall", wall_ratio, "x");
      std::printf("  %s / inexact_tree: latency device %.2fx, wall %.2fx", Ssimulacra2SumModeName(mode), device_ratio,
                  wall_ratio);
      for (size_t i = 0; i < flags.instances.size(); ++i) {
        const double ratio = tree.fps[i] / exact.fps[i];  // time per frame, exact over inexact
        results.Add(prefix + "in_flight_" + std::to_string(flags.instances[i]), ratio, "x");
        std::printf(", %d in flight %.2fx", flags.instances[i], ratio);
      }
      std::printf("\n");
    }
  }
  results.set_input(input_description);
  const bench::Commit commit = bench::FindCommit(flags.output.commit, flags.output.dirty);
  return bench::Finish(results, flags.output, commit, bits_ok, "CPU reference (an exact mode)");
}

}  // namespace
}  // namespace ssimulacra2
}  // namespace exactq

int main(int argc, char** argv) { return exactq::ssimulacra2::Main(argc, argv); }
