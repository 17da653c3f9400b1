// Benchmark: the exact ordered sum on the GPU against an inexact CUB DeviceReduce::Sum
// baseline, in the same run, on 4K-frame-sized term arrays already in device memory; and
// the host's threaded exact sum is measured by ordered_sum_cpu_bench (a CPU program).
//
//   ordered_sum_bench [--n=8294400] [--reps=50] [--json=FILE] [--commit=SHA] [--dirty=true|false]
//
// For each fixture it prints medians over --reps repetitions (after warm-up) of:
//   exact_ms     OrderedSumCuda::Sum, host wall time: launches + device work + the small
//                result copy + stream sync (what a caller waits for); the default pipeline:
//                segments, and the event walk only where a check refuses them; one plane
//                summed again and again, each sum planned afresh (reuse_plan off);
//   exact_plain_launches_ms  the same with every kernel launched plainly (no programmatic
//                dependent launch);
//   exact_index_order_ms  the same with the chunk stage taking chunks in index order
//                (crossings_first off);
//   exact_tile_chunks_ms  the same with every chunk summarised lane by lane in the tile
//                (strided_chunks off: the chunk stage before strided chunks), for the ratio;
//   event_walk_ms  the same with the event walk alone (the previous pipeline, the fallback);
//   cub_ms       cub::DeviceReduce::Sum + result copy + sync, timed the same way (INEXACT:
//                a tree order, other bits than the loop);
//   the same two with L2 flushed before each repetition (outside the timing);
//   stage times  each pipeline's kernels alone, from CUDA events;
//   streams      (the two floor fixtures) one instance summing frames in turn: similar
//                frames (seeds 1-4) and scene cuts (two fixtures in turn), with the
//                previous frame's plan reused (reuse_plan) and with a fresh plan each,
//                and the reusing pipeline's stages;
// and whether each result has the loop's bits. Then the host: the plain loop, and
// OrderedSumThreads with 1 and with all hardware threads (same bits, checked).
// --json=FILE also writes {"benchmark", "device", "commit", "dirty", "results": [{"name",
// "value", "unit"}]}, with ratio_exact_over_cub_unsigned (the uniform fixture) and
// ratio_exact_over_cub_signed (ssim_like_crossing_zero), and ratio_stream_exact_over_cub_*
// (the similar-frame stream with its plan reused). Needs a GPU; exits 2 without one.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cub/device/device_reduce.cuh>

#include "bench/common/cpu_bench.h"
#include "engine/exact/device_sum.cuh"
#include "engine/exact/ordered_sum.h"
#include "engine/exact/ordered_sum_cuda.h"
#include "engine/exact/testing/ordered_sum_fixtures.h"

namespace exactq {
namespace exact {
namespace {

using exactq::bench::Median;

#define CHECK_CUDA(call)                                                                            \
  do {                                                                                              \
    const cudaError_t err_ = (call);                                                                \
    if (err_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); \
      std::exit(1);                                                                                 \
    }                                                                                               \
  } while (0)

template <class Fn>
double HostMs(const Fn& fn) {
  const auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

const char* BitsVerdict(double got, double want) { return SameBitsOrBothNaN(got, want) ? "loop bits" : "OTHER BITS"; }

exactq::bench::Results g_results("ordered_sum");

// Evicts the terms from L2 (50 MB on an H200) by writing a larger buffer, then waits; used
// before each "cold" repetition, outside its timing, so that neither the exact sum nor CUB
// starts with terms that the previous repetition left in L2.
class L2Flusher {
 public:
  L2Flusher() { CHECK_CUDA(cudaMalloc(&buffer_, kBytes)); }
  ~L2Flusher() { cudaFree(buffer_); }
  void Flush(cudaStream_t stream) {
    CHECK_CUDA(cudaMemsetAsync(buffer_, ++value_ & 0xff, kBytes, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));
  }

 private:
  static constexpr size_t kBytes = size_t{256} << 20;
  void* buffer_ = nullptr;
  int value_ = 0;
};

void Add(const std::string& name, double value, const char* unit) { g_results.Add(name, value, unit); }

constexpr int kStages = 5;
const char* const kStageNames[kStages] = {"approximate_sums", "plan", "summaries", "prepare", "walk"};
constexpr int kSegmentStages = 4;
const char* const kSegmentStageNames[kSegmentStages] = {"approximate_sums", "chunk_segments", "group_steps",
                                                        "segment_walk"};

// Median stage times (and their total) of a pipeline enqueued by `enqueue(stages)`.
template <int kCount, class Enqueue>
void TimeStages(cudaStream_t stream, int reps, const Enqueue& enqueue, std::vector<double> (&stage_ms)[kCount],
                std::vector<double>& total_ms) {
  cudaEvent_t start;
  CHECK_CUDA(cudaEventCreate(&start));
  gpu::StageEvents stage_events;
  for (cudaEvent_t& e : stage_events.after) CHECK_CUDA(cudaEventCreate(&e));
  for (int r = -3; r < reps; ++r) {
    CHECK_CUDA(cudaEventRecord(start, stream));
    CHECK_CUDA(enqueue(&stage_events));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    if (r < 0) continue;
    cudaEvent_t before = start;
    for (int s = 0; s < kCount; ++s) {
      float ms = 0;
      CHECK_CUDA(cudaEventElapsedTime(&ms, before, stage_events.after[s]));
      stage_ms[s].push_back(ms);
      before = stage_events.after[s];
    }
    float total = 0;
    CHECK_CUDA(cudaEventElapsedTime(&total, start, stage_events.after[kCount - 1]));
    total_ms.push_back(total);
  }
  CHECK_CUDA(cudaEventDestroy(start));
  for (cudaEvent_t& e : stage_events.after) cudaEventDestroy(e);
}

// The segment pipeline's stage medians under `options` (TimeStages over EnqueueSegmentedSum),
// printed as one line and added to the results as PREFIX_stage_NAME_ms and
// PREFIX_device_total_ms.
struct SegmentStageMedians {
  double stage_ms[kSegmentStages];
  double total_ms;
};
SegmentStageMedians TimeSegmentStages(cudaStream_t stream, int reps, const gpu::DeviceArrayTerms& source, size_t n,
                                      const gpu::SegmentWorkspace& seg, const gpu::PlanOptions& options) {
  std::vector<double> stage_ms[kSegmentStages];
  std::vector<double> total_ms;
  TimeStages(
      stream, reps,
      [&](const gpu::StageEvents* e) { return gpu::EnqueueSegmentedSum(source, n, seg, options, stream, e); }, stage_ms,
      total_ms);
  SegmentStageMedians medians;
  for (int s = 0; s < kSegmentStages; ++s) medians.stage_ms[s] = Median(stage_ms[s]);
  medians.total_ms = Median(total_ms);
  return medians;
}
void PrintSegmentStages(const char* label, const SegmentStageMedians& m) {
  std::printf("%s", label);
  for (int s = 0; s < kSegmentStages; ++s) std::printf(" %s %.4f ", kSegmentStageNames[s], m.stage_ms[s]);
  std::printf(" (device total %.4f)\n", m.total_ms);
}
void AddSegmentStages(const std::string& prefix, const SegmentStageMedians& m) {
  for (int s = 0; s < kSegmentStages; ++s) Add(prefix + "_stage_" + kSegmentStageNames[s] + "_ms", m.stage_ms[s], "ms");
  Add(prefix + "_device_total_ms", m.total_ms, "ms");
}

// The default options with one change made by `change` (for the variants timed beside
// the default).
template <class Change>
OrderedSumOptions OptionsWith(const Change& change) {
  OrderedSumOptions options;
  change(options);
  return options;
}

// One variant's timing: the median host wall time, whether every result had the loop's
// bits, and the last sum's stats.
struct ClassTiming {
  double ms = 0;
  bool same_bits = true;
  OrderedSumStats stats;
};

// Host wall time of OrderedSumCuda::Sum with `options`, median of reps; checks the bits.
// `flusher` given: L2 flushed before each repetition (cold); else back to back (warm).
ClassTiming TimeClass(cudaStream_t stream, OrderedSumOptions options, const double* d_terms, size_t n, double want,
                      int reps, L2Flusher* flusher = nullptr) {
  options.reuse_plan = false;  // one plane summed again and again: each sum plans afresh
  OrderedSumCuda exact(stream, options);
  ClassTiming timing;
  std::vector<double> ms_list;
  for (int r = -3; r < reps; ++r) {
    double result = 0;
    if (flusher != nullptr) flusher->Flush(stream);
    const double ms = HostMs([&] {
      absl::StatusOr<double> got = exact.Sum(d_terms, n, &timing.stats);
      if (!got.ok()) {
        std::fprintf(stderr, "OrderedSumCuda: %s\n", std::string(got.status().message()).c_str());
        std::exit(1);
      }
      result = *got;
    });
    timing.same_bits = timing.same_bits && SameBitsOrBothNaN(result, want);
    if (r >= 0) ms_list.push_back(ms);
  }
  timing.ms = Median(ms_list);
  return timing;
}

// A stream of frames: the exact sum of frame r % K at repetition r through one instance,
// host wall time as TimeClass; with reuse_plan, each frame starts under the previous
// frame's plan. `replanned` gets the median of the chunks summarised again.
struct StreamFrames {
  std::vector<double*> device;
  std::vector<double> want;
};
double TimeStream(cudaStream_t stream, const StreamFrames& frames, size_t n, int reps, bool reuse_plan, bool& same_bits,
                  double& replanned, double& reused) {
  OrderedSumOptions options;
  options.reuse_plan = reuse_plan;
  OrderedSumCuda exact(stream, options);
  same_bits = true;
  std::vector<double> ms_list, replanned_list, reused_list;
  const int k = static_cast<int>(frames.device.size());
  for (int r = -3; r < reps; ++r) {
    const int f = (r + 3) % k;
    OrderedSumStats stats;
    double result = 0;
    const double ms = HostMs([&] {
      absl::StatusOr<double> got = exact.Sum(frames.device[f], n, &stats);
      if (!got.ok()) {
        std::fprintf(stderr, "OrderedSumCuda: %s\n", std::string(got.status().message()).c_str());
        std::exit(1);
      }
      result = *got;
    });
    same_bits = same_bits && SameBitsOrBothNaN(result, frames.want[f]);
    if (r >= 0) {
      ms_list.push_back(ms);
      replanned_list.push_back(static_cast<double>(stats.segment_replanned_chunks));
      reused_list.push_back(static_cast<double>(stats.segment_plan_reused));
    }
  }
  replanned = Median(replanned_list);
  reused = Median(reused_list);
  return Median(ms_list);
}

// Frames for a stream: device copies of `kinds[i]` with `seeds[i]`, and the loop's sums.
StreamFrames MakeStreamFrames(const std::vector<FixtureKind>& kinds, const std::vector<uint64_t>& seeds, size_t n) {
  StreamFrames frames;
  for (size_t i = 0; i < kinds.size(); ++i) {
    const std::vector<double> terms = MakeFixture(kinds[i], n, seeds[i]);
    double* d = nullptr;
    CHECK_CUDA(cudaMalloc(&d, n * sizeof(double)));
    CHECK_CUDA(cudaMemcpy(d, terms.data(), n * sizeof(double), cudaMemcpyHostToDevice));
    frames.device.push_back(d);
    frames.want.push_back(OrderedSumReference::Loop(terms.data(), n));
  }
  return frames;
}

void FreeStreamFrames(StreamFrames& frames) {
  for (double* d : frames.device) cudaFree(d);
  frames.device.clear();
}

// The reused plan on a stream of similar frames (the fixture with seeds 1..4: the same
// distribution, other values, as consecutive frames of a video) and on a stream of scene
// cuts (the fixture and `other` in turn: the plan never holds), each against a fresh plan
// for every frame in the same run; and the reusing pipeline's five stages on the similar
// frames. Returns the similar stream's time with reuse (for the ratio).
double RunStreams(FixtureKind kind, FixtureKind other, size_t n, int reps, cudaStream_t stream, double cub_median) {
  const std::string fixture = FixtureName(kind);
  StreamFrames similar = MakeStreamFrames({kind, kind, kind, kind}, {1, 2, 3, 4}, n);
  StreamFrames cuts = MakeStreamFrames({kind, other}, {1, 5}, n);
  bool bits[4];
  double replanned[4], reused[4];
  const double similar_reuse = TimeStream(stream, similar, n, reps, true, bits[0], replanned[0], reused[0]);
  const double similar_fresh = TimeStream(stream, similar, n, reps, false, bits[1], replanned[1], reused[1]);
  const double cuts_reuse = TimeStream(stream, cuts, n, reps, true, bits[2], replanned[2], reused[2]);
  const double cuts_fresh = TimeStream(stream, cuts, n, reps, false, bits[3], replanned[3], reused[3]);

  // Stage times of the reusing pipeline on the similar frames, in turn.
  const int64_t chunks = gpu::ChunkCount(n);
  void* d_seg = nullptr;
  CHECK_CUDA(cudaMalloc(&d_seg, gpu::SegmentWorkspaceBytes(chunks)));
  const gpu::SegmentWorkspace seg = gpu::CarveSegmentWorkspace(d_seg, chunks);
  CHECK_CUDA(gpu::ZeroSegmentState(seg, stream));
  CHECK_CUDA(gpu::EnqueueSegmentedSum(gpu::DeviceArrayTerms{similar.device[0]}, n, seg, gpu::PlanOptions{}, stream));
  int next = 1;
  std::vector<double> reuse_stage_ms[5];
  std::vector<double> reuse_total_ms;
  TimeStages(
      stream, reps,
      [&](const gpu::StageEvents* e) {
        const gpu::DeviceArrayTerms source{similar.device[next++ % similar.device.size()]};
        return gpu::EnqueueSegmentedSumReusingPlan(source, n, seg, gpu::PlanOptions{}, stream, e);
      },
      reuse_stage_ms, reuse_total_ms);
  const char* const kReuseStageNames[5] = {"chunks_under_previous_plan", "run_sums_prefix", "confirm_plan",
                                           "group_steps", "segment_walk"};
  cudaFree(d_seg);
  FreeStreamFrames(similar);
  FreeStreamFrames(cuts);

  std::printf(
      "  stream of similar frames (seeds 1-4): reused plan %.4f ms (%s, replanned %.0f of %lld chunks), "
      "fresh plan %.4f ms (%s); ratio over cub %.2f\n",
      similar_reuse, bits[0] ? "loop bits" : "OTHER BITS", replanned[0], static_cast<long long>(chunks), similar_fresh,
      bits[1] ? "loop bits" : "OTHER BITS", similar_reuse / cub_median);
  std::printf(
      "  stream of scene cuts (%s and %s in turn): reused plan %.4f ms (%s, replanned %.0f), fresh plan %.4f ms (%s)\n",
      fixture.c_str(), FixtureName(other), cuts_reuse, bits[2] ? "loop bits" : "OTHER BITS", replanned[2], cuts_fresh,
      bits[3] ? "loop bits" : "OTHER BITS");
  std::printf("  reused-plan stages_ms");
  for (int s = 0; s < 5; ++s) std::printf(" %s %.4f ", kReuseStageNames[s], Median(reuse_stage_ms[s]));
  std::printf(" (device total %.4f)\n", Median(reuse_total_ms));

  Add(fixture + "/stream_reused_plan_ms", similar_reuse, "ms");
  Add(fixture + "/stream_reused_plan_bits_equal_loop", bits[0] ? 1 : 0, "bool");
  Add(fixture + "/stream_reused_plan_replanned_chunks", replanned[0], "count");
  Add(fixture + "/stream_reused_plan_reused", reused[0], "bool");
  Add(fixture + "/stream_fresh_plan_ms", similar_fresh, "ms");
  Add(fixture + "/stream_fresh_plan_bits_equal_loop", bits[1] ? 1 : 0, "bool");
  Add(fixture + "/ratio_stream_reused_over_fresh", similar_reuse / similar_fresh, "ratio");
  Add(fixture + "/ratio_stream_reused_over_cub", similar_reuse / cub_median, "ratio");
  Add(fixture + "/scene_cuts_reused_plan_ms", cuts_reuse, "ms");
  Add(fixture + "/scene_cuts_reused_plan_bits_equal_loop", bits[2] ? 1 : 0, "bool");
  Add(fixture + "/scene_cuts_reused_plan_replanned_chunks", replanned[2], "count");
  Add(fixture + "/scene_cuts_fresh_plan_ms", cuts_fresh, "ms");
  Add(fixture + "/scene_cuts_fresh_plan_bits_equal_loop", bits[3] ? 1 : 0, "bool");
  for (int s = 0; s < 5; ++s)
    Add(fixture + "/reuse_stage_" + kReuseStageNames[s] + "_ms", Median(reuse_stage_ms[s]), "ms");
  Add(fixture + "/reuse_device_total_ms", Median(reuse_total_ms), "ms");
  return similar_reuse;
}

void RunFixture(FixtureKind kind, size_t n, int reps) {
  const std::string fixture = FixtureName(kind);
  const std::vector<double> terms = MakeFixture(kind, n, 1);
  double want = 0;
  const double loop_ms = HostMs([&] { want = OrderedSumReference::Loop(terms.data(), n); });

  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  double* d_terms = nullptr;
  CHECK_CUDA(cudaMalloc(&d_terms, n * sizeof(double)));
  CHECK_CUDA(cudaMemcpy(d_terms, terms.data(), n * sizeof(double), cudaMemcpyHostToDevice));

  // The exact sum through its public class: the default pipeline, then the event walk alone.
  using Pipeline = OrderedSumOptions::DevicePipeline;
  const ClassTiming exact = TimeClass(stream, OrderedSumOptions{}, d_terms, n, want, reps);
  // The same with every kernel launched plainly (no programmatic dependent launch).
  const ClassTiming plain = TimeClass(stream, OptionsWith([](OrderedSumOptions& o) { o.programmatic_launch = false; }),
                                      d_terms, n, want, reps);
  // The same with every chunk summarised lane by lane in the tile (no strided chunks).
  const ClassTiming tile =
      TimeClass(stream, OptionsWith([](OrderedSumOptions& o) { o.strided_chunks = false; }), d_terms, n, want, reps);
  // The same with the chunk stage in index order.
  const ClassTiming index_order =
      TimeClass(stream, OptionsWith([](OrderedSumOptions& o) { o.crossings_first = false; }), d_terms, n, want, reps);
  const ClassTiming walk =
      TimeClass(stream, OptionsWith([](OrderedSumOptions& o) { o.device_pipeline = Pipeline::kEventWalkOnly; }),
                d_terms, n, want, reps);

  // The inexact baseline.
  double* d_out = nullptr;
  double* h_out = nullptr;
  CHECK_CUDA(cudaMalloc(&d_out, sizeof(double)));
  CHECK_CUDA(cudaMallocHost(&h_out, sizeof(double)));
  size_t temp_bytes = 0;
  CHECK_CUDA(cub::DeviceReduce::Sum(nullptr, temp_bytes, d_terms, d_out, n, stream));
  void* d_temp = nullptr;
  CHECK_CUDA(cudaMalloc(&d_temp, temp_bytes));
  const auto time_cub = [&](L2Flusher* flusher) {
    std::vector<double> ms_list;
    for (int r = -3; r < reps; ++r) {
      if (flusher != nullptr) flusher->Flush(stream);
      const double ms = HostMs([&] {
        CHECK_CUDA(cub::DeviceReduce::Sum(d_temp, temp_bytes, d_terms, d_out, n, stream));
        CHECK_CUDA(cudaMemcpyAsync(h_out, d_out, sizeof(double), cudaMemcpyDeviceToHost, stream));
        CHECK_CUDA(cudaStreamSynchronize(stream));
      });
      if (r >= 0) ms_list.push_back(ms);
    }
    return ms_list;
  };
  const std::vector<double> cub_ms = time_cub(nullptr);

  // The same two with L2 flushed before each repetition (a sum whose terms were not just
  // touched): the exact sum's second pass reads chunks in reverse to reuse what its first
  // pass left in L2, and back to back it may also find what its previous run left there.
  L2Flusher flusher;
  const ClassTiming cold = TimeClass(stream, OrderedSumOptions{}, d_terms, n, want, reps, &flusher);
  const double cub_cold_median = Median(time_cub(&flusher));

  // Each pipeline's stages, each bracketed by events.
  const int64_t chunks = gpu::ChunkCount(n);
  void* d_ws = nullptr;
  CHECK_CUDA(cudaMalloc(&d_ws, gpu::WorkspaceBytes(chunks)));
  const gpu::Workspace ws = gpu::CarveWorkspace(d_ws, chunks);
  void* d_seg = nullptr;
  CHECK_CUDA(cudaMalloc(&d_seg, gpu::SegmentWorkspaceBytes(chunks)));
  const gpu::SegmentWorkspace seg = gpu::CarveSegmentWorkspace(d_seg, chunks);
  CHECK_CUDA(gpu::ZeroSegmentState(seg, stream));
  const gpu::DeviceArrayTerms source{d_terms};
  std::vector<double> stage_ms[kStages];
  std::vector<double> device_total_ms;
  TimeStages(
      stream, reps,
      [&](const gpu::StageEvents* e) { return gpu::EnqueueOrderedSum(source, n, ws, gpu::PlanOptions{}, stream, e); },
      stage_ms, device_total_ms);
  gpu::PlanOptions tile_options;
  tile_options.strided_chunks = false;
  const SegmentStageMedians tile_stages = TimeSegmentStages(stream, reps, source, n, seg, tile_options);
  gpu::PlanOptions index_options;
  index_options.crossings_first = false;
  const SegmentStageMedians index_stages = TimeSegmentStages(stream, reps, source, n, seg, index_options);
  const SegmentStageMedians seg_stages = TimeSegmentStages(stream, reps, source, n, seg, gpu::PlanOptions{});
  // Where the segment walk's thread spent its time in the last run.
  gpu::SegmentOutput walk_out;
  CHECK_CUDA(cudaMemcpy(&walk_out, seg.output, sizeof walk_out, cudaMemcpyDeviceToHost));
  int clock_khz = 0;
  CHECK_CUDA(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  const double us_per_cycle = 1e3 / clock_khz;

  const double cub_median = Median(cub_ms);
  std::printf("%-24s n=%zu reps=%d\n", fixture.c_str(), n, reps);
  std::printf("  exact_ms  %8.4f  (%s)  segments %s: steps %lld, crossing lanes %lld\n", exact.ms,
              exact.same_bits ? "loop bits" : "OTHER BITS",
              exact.stats.segment_accepted ? "accepted" : "REFUSED (event walk ran)",
              static_cast<long long>(exact.stats.segment_steps),
              static_cast<long long>(exact.stats.segment_crossing_lanes));
  std::printf("  exact_plain_launches_ms %8.4f  (%s)  without programmatic dependent launch\n", plain.ms,
              plain.same_bits ? "loop bits" : "OTHER BITS");
  std::printf("  exact_index_order_ms %8.4f  (%s)  the chunk stage in index order (crossings_first off)\n",
              index_order.ms, index_order.same_bits ? "loop bits" : "OTHER BITS");
  std::printf(
      "  exact_tile_chunks_ms %8.4f  (%s)  every chunk lane by lane in the tile (before strided chunks); "
      "strided: %lld of %lld chunks through the tile\n",
      tile.ms, tile.same_bits ? "loop bits" : "OTHER BITS", static_cast<long long>(exact.stats.segment_tile_chunks),
      static_cast<long long>(exact.stats.chunks));
  std::printf(
      "  event_walk_ms %8.4f  (%s)  refused chunks %lld, sub-chunks %lld, terms one by one %lld, walk windows %lld\n",
      walk.ms, walk.same_bits ? "loop bits" : "OTHER BITS", static_cast<long long>(walk.stats.chunks_rejected),
      static_cast<long long>(walk.stats.subchunks_rejected), static_cast<long long>(walk.stats.terms_one_by_one),
      static_cast<long long>(walk.stats.walk_windows));
  std::printf("  cub_ms    %8.4f  (%s; inexact baseline)\n", cub_median, BitsVerdict(*h_out, want));
  std::printf("  ratio     %8.2f\n", exact.ms / cub_median);
  std::printf("  L2 flushed before each: exact_ms %.4f (%s), cub_ms %.4f, ratio %.2f\n", cold.ms,
              cold.same_bits ? "loop bits" : "OTHER BITS", cub_cold_median, cold.ms / cub_cold_median);
  PrintSegmentStages("  segment stages_ms", seg_stages);
  PrintSegmentStages("  the same, index order  ", index_stages);
  PrintSegmentStages("  the same, tile chunks  ", tile_stages);
  std::printf("  segment walk thread: %.2f us for %d steps (%d crossing lanes, %d terms one by one)\n",
              walk_out.cycles_total * us_per_cycle, walk_out.steps, walk_out.crossing_lanes, walk_out.terms_one_by_one);
  std::printf("  event walk stages_ms");
  for (int s = 0; s < kStages; ++s) std::printf(" %s %.4f ", kStageNames[s], Median(stage_ms[s]));
  std::printf(" (device total %.4f)\n", Median(device_total_ms));
  std::printf("  host loop (one thread, this machine): %.3f ms\n", loop_ms);

  Add(fixture + "/exact_ms", exact.ms, "ms");
  Add(fixture + "/cub_ms", cub_median, "ms");
  Add(fixture + "/ratio_exact_over_cub", exact.ms / cub_median, "ratio");
  Add(fixture + "/exact_bits_equal_loop", exact.same_bits ? 1 : 0, "bool");
  Add(fixture + "/exact_plain_launches_ms", plain.ms, "ms");
  Add(fixture + "/exact_plain_launches_bits_equal_loop", plain.same_bits ? 1 : 0, "bool");
  Add(fixture + "/exact_index_order_ms", index_order.ms, "ms");
  Add(fixture + "/exact_index_order_bits_equal_loop", index_order.same_bits ? 1 : 0, "bool");
  Add(fixture + "/ratio_exact_over_exact_index_order", exact.ms / index_order.ms, "ratio");
  Add(fixture + "/exact_tile_chunks_ms", tile.ms, "ms");
  Add(fixture + "/exact_tile_chunks_bits_equal_loop", tile.same_bits ? 1 : 0, "bool");
  Add(fixture + "/ratio_exact_over_exact_tile_chunks", exact.ms / tile.ms, "ratio");
  Add(fixture + "/segment_tile_chunks", static_cast<double>(exact.stats.segment_tile_chunks), "count");
  Add(fixture + "/exact_l2_flushed_ms", cold.ms, "ms");
  Add(fixture + "/cub_l2_flushed_ms", cub_cold_median, "ms");
  Add(fixture + "/ratio_exact_over_cub_l2_flushed", cold.ms / cub_cold_median, "ratio");
  Add(fixture + "/exact_l2_flushed_bits_equal_loop", cold.same_bits ? 1 : 0, "bool");
  Add(fixture + "/segments_accepted", static_cast<double>(exact.stats.segment_accepted), "bool");
  Add(fixture + "/segment_steps", static_cast<double>(exact.stats.segment_steps), "count");
  Add(fixture + "/segment_crossing_lanes", static_cast<double>(exact.stats.segment_crossing_lanes), "count");
  AddSegmentStages(fixture + "/segment", seg_stages);
  AddSegmentStages(fixture + "/index_order", index_stages);
  AddSegmentStages(fixture + "/tile_chunks", tile_stages);
  Add(fixture + "/segment_walk_thread_us", walk_out.cycles_total * us_per_cycle, "us");
  Add(fixture + "/segment_terms_one_by_one", walk_out.terms_one_by_one, "count");
  Add(fixture + "/event_walk_ms", walk.ms, "ms");
  Add(fixture + "/event_walk_bits_equal_loop", walk.same_bits ? 1 : 0, "bool");
  for (int s = 0; s < kStages; ++s) {
    Add(fixture + "/event_walk_stage_" + kStageNames[s] + "_ms", Median(stage_ms[s]), "ms");
  }
  Add(fixture + "/event_walk_device_total_ms", Median(device_total_ms), "ms");
  Add(fixture + "/chunks", static_cast<double>(walk.stats.chunks), "count");
  Add(fixture + "/event_walk_chunks_rejected", static_cast<double>(walk.stats.chunks_rejected), "count");
  Add(fixture + "/event_walk_subchunks_rejected", static_cast<double>(walk.stats.subchunks_rejected), "count");
  Add(fixture + "/event_walk_terms_one_by_one", static_cast<double>(walk.stats.terms_one_by_one), "count");
  Add(fixture + "/event_walk_windows", static_cast<double>(walk.stats.walk_windows), "count");
  if (kind == FixtureKind::kUniform) Add("ratio_exact_over_cub_unsigned", exact.ms / cub_median, "ratio");
  if (kind == FixtureKind::kSsimLikeCrossingZero) Add("ratio_exact_over_cub_signed", exact.ms / cub_median, "ratio");
  // The floor fixtures as streams of frames, with and without reuse_plan.
  if (kind == FixtureKind::kUniform || kind == FixtureKind::kSsimLikeCrossingZero) {
    const FixtureKind other =
        kind == FixtureKind::kUniform ? FixtureKind::kSsimLikeCrossingZero : FixtureKind::kUniform;
    const double stream_ms = RunStreams(kind, other, n, reps, stream, cub_median);
    Add(kind == FixtureKind::kUniform ? "ratio_stream_exact_over_cub_unsigned" : "ratio_stream_exact_over_cub_signed",
        stream_ms / cub_median, "ratio");
  }

  cudaFree(d_seg);
  cudaFree(d_ws);
  cudaFree(d_temp);
  cudaFreeHost(h_out);
  cudaFree(d_out);
  cudaFree(d_terms);
  cudaStreamDestroy(stream);
}

int Main(int argc, char** argv) {
  size_t n = 3840 * 2160;
  int reps = 50;
  exactq::bench::OutputFlags output;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--n=", 4) == 0)
      n = std::strtoull(argv[i] + 4, nullptr, 10);
    else if (std::strncmp(argv[i], "--reps=", 7) == 0)
      reps = std::atoi(argv[i] + 7);
    else if (!output.Parse(argv[i])) {
      std::fprintf(stderr, "usage: %s [--n=8294400] [--reps=50] [--json=FILE] [--commit=SHA] [--dirty=true|false]\n",
                   argv[0]);
      return 2;
    }
  }
  std::string reason;
  if (!CudaDeviceAvailable(&reason)) {
    std::fprintf(stderr, "ordered_sum_bench: %s\n", reason.c_str());
    return 2;
  }
  if (n == 0 || reps < 1) return 2;
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
  g_results.set_device(prop.name);
  for (FixtureKind kind : {FixtureKind::kSsimLikeCrossingZero, FixtureKind::kUniform, FixtureKind::kTieHeavy,
                           FixtureKind::kFourthPowers, FixtureKind::kMixedWalk}) {
    RunFixture(kind, n, reps);
  }
  const exactq::bench::Commit commit = exactq::bench::FindCommit(output.commit, output.dirty);
  if (!output.json.empty()) {
    if (!g_results.WriteJson(output.json, commit)) {
      std::fprintf(stderr, "ordered_sum_bench: cannot write %s\n", output.json.c_str());
      return 1;
    }
    std::printf("wrote %s\n", output.json.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace exact
}  // namespace exactq

int main(int argc, char** argv) { return exactq::exact::Main(argc, argv); }
