// ssim_cuda_bench: the ssim CUDA twin at 3840x2160, 8-bit and 10-bit, against an INEXACT
// baseline made of the same term kernels with a tree sum (bench/ssim/ssim_cuda_inexact.h),
// in the same run. For each depth it measures:
//   device time   the kernels alone, inputs already on the device: one frame at a time
//                 (CUDA events, median over --reps; the exact pipeline's four stages too),
//                 and per frame with 8 streams of frames in flight (wall time / frames);
//                 exact, inexact, and their ratios;
//   latency       one frame end to end, nothing else in flight (host wall time, median):
//                 upload from pinned memory, kernels, the result back;
//   throughput    frames per second with 1, 2, 4 and 8 frames in flight, each frame
//                 uploaded from pinned memory (--frames frames per measurement);
// once through a plain stream driver for both variants (the same driver, so the ratio
// compares only the sums) and once through the SsimCuda class (the product path; exact).
// It checks every exact result against the CPU reference's bits and prints the CPU
// paths' times for scale (--cpu=0 skips the threaded path).
//
//   ssim_cuda_bench [--reps=30] [--frames=400] [--json=FILE] [--commit=SHA] [--corpus=DIR] [--cpu=1]
//
// With --corpus (or $EXACTQ_CORPUS) the 8-bit pair is the corpus's p4k_x265_crf26 frame;
// otherwise, and always at 10 bits, a synthetic textured pair with noise. Exits 2 without
// a GPU, 1 when an exact result differs from the reference.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/ssim/ssim_cuda_inexact.h"
#include "engine/format/frame.h"
#include "engine/io/y4m_reader.h"
#include "engine/metrics/ssim/cuda/ssim_cuda.h"
#include "engine/metrics/ssim/cuda/ssim_cuda_pipeline.h"
#include "engine/metrics/ssim/ssim_reference.h"
#include "engine/metrics/ssim/ssim_threads.h"
#include "nlohmann/json.hpp"

namespace exactq {
namespace ssim {
namespace {

#define CHECK_CUDA(call)                                                                            \
  do {                                                                                              \
    const cudaError_t err_ = (call);                                                                \
    if (err_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); \
      std::exit(1);                                                                                 \
    }                                                                                               \
  } while (0)

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// ---------------------------------------------------------------------------------
// Inputs.

// Textured content and a noisy copy, like a mid-quality encode: SSIM about 0.9.
void MakeSynthetic(int depth, Frame* ref, Frame* dis) {
  const FrameGeometry g{3840, 2160, PixelFormat{ChromaLayout::k420, depth}};
  *ref = *Frame::Create(g);
  *dis = *Frame::Create(g);
  const uint32_t max = g.max_sample_value();
  for (int y = 0; y < g.height; ++y) {
    for (int x = 0; x < g.width; ++x) {
      const uint32_t h = (static_cast<uint32_t>(x) * 73856093u) ^ (static_cast<uint32_t>(y) * 19349663u);
      const uint32_t v = static_cast<uint32_t>((x / 3 + y / 2) % 200 + 20) << (depth - 8);
      ref->set_sample(0, x, y, v);
      dis->set_sample(0, x, y, std::min(max, v + ((h % 23) << (depth - 8))));
    }
  }
}

bool ReadFirstFrame(const std::string& path, Frame* frame) {
  absl::StatusOr<Y4mReader> reader = Y4mReader::Open(path);
  if (!reader.ok()) return false;
  absl::StatusOr<bool> more = reader->ReadFrame(frame);
  return more.ok() && *more;
}

// ---------------------------------------------------------------------------------
// A plain multi-stream driver, the same for both variants.

// kExact is the production pipeline (terms, then engine/exact's segment pipeline);
// kExactEventWalk the previous one (terms, plan, summaries, event walk); kExactFused the
// event walk with terms, plan and summaries in one kernel (ssim_cuda_pipeline.h).
enum class Variant { kExact, kExactEventWalk, kExactFused, kInexact };
const char* VariantName(Variant v) {
  switch (v) {
    case Variant::kExact:
      return "exact";
    case Variant::kExactEventWalk:
      return "exact_event_walk";
    case Variant::kExactFused:
      return "exact_fused";
    case Variant::kInexact:
      return "inexact";
  }
  return "?";
}
bool IsExact(Variant v) { return v != Variant::kInexact; }

gpu::SsimPipelineOptions PipelineOf(Variant v) {
  gpu::SsimPipelineOptions options;
  options.fused = v == Variant::kExactFused;
  options.segments = v == Variant::kExact;
  return options;
}

// Segment-pipeline results that needed the event walk (a refused check): counted, and
// printed, because they cost a synchronous second pass.
int64_t g_segment_refusals = 0;

struct DeviceSlot {
  cudaStream_t stream = nullptr;
  cudaEvent_t done = nullptr;
  void* planes = nullptr;
  gpu::SsimDeviceFrame frame;
  void* inexact_scratch = nullptr;
  double* inexact_out = nullptr;
  void* host_result = nullptr;  // pinned: SsimTermSumResult or one double
};

class Driver {
 public:
  Driver(const FrameGeometry& g, int slots) : g_(g), plane_(g.plane_bytes(0)) {
    const int64_t pixels = static_cast<int64_t>(g.width) * g.height;
    slots_.resize(static_cast<size_t>(slots));
    for (DeviceSlot& s : slots_) {
      CHECK_CUDA(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
      CHECK_CUDA(cudaEventCreateWithFlags(&s.done, cudaEventDisableTiming));
      CHECK_CUDA(cudaMalloc(&s.planes, 2 * plane_));
      void* terms = nullptr;
      CHECK_CUDA(cudaMalloc(&terms, gpu::SsimTermBytes(pixels)));
      CHECK_CUDA(cudaMalloc(&s.frame.workspace, gpu::SsimWorkspaceBytes(pixels)));
      CHECK_CUDA(cudaMalloc(&s.inexact_scratch, bench::SsimInexactScratchBytes(pixels)));
      CHECK_CUDA(cudaMemset(s.inexact_scratch, 0, bench::SsimInexactScratchBytes(pixels)));
      CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&s.inexact_out), sizeof(double)));
      CHECK_CUDA(cudaMallocHost(&s.host_result, sizeof(gpu::SsimTermSumResult)));
      s.frame.ref = s.planes;
      s.frame.dis = static_cast<char*>(s.planes) + plane_;
      s.frame.width = g.width;
      s.frame.height = g.height;
      s.frame.bit_depth = g.format.bit_depth;
      s.frame.terms = static_cast<double*>(terms);
    }
  }
  ~Driver() {
    for (DeviceSlot& s : slots_) {
      cudaStreamSynchronize(s.stream);
      cudaFree(s.planes);
      cudaFree(s.frame.terms);
      cudaFree(s.frame.workspace);
      cudaFree(s.inexact_scratch);
      cudaFree(s.inexact_out);
      cudaFreeHost(s.host_result);
      cudaEventDestroy(s.done);
      cudaStreamDestroy(s.stream);
    }
  }
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  DeviceSlot& slot(int i) { return slots_[static_cast<size_t>(i)]; }

  // Upload, kernels, result back, all on the slot's stream.
  void Enqueue(DeviceSlot& s, Variant v, const void* ref, const void* dis) {
    CHECK_CUDA(cudaMemcpyAsync(const_cast<void*>(s.frame.ref), ref, plane_, cudaMemcpyHostToDevice, s.stream));
    CHECK_CUDA(cudaMemcpyAsync(const_cast<void*>(s.frame.dis), dis, plane_, cudaMemcpyHostToDevice, s.stream));
    EnqueueKernels(s, v);
    if (IsExact(v)) {
      CHECK_CUDA(cudaMemcpyAsync(s.host_result, gpu::SsimTermSumResultOnDevice(s.frame), sizeof(gpu::SsimTermSumResult),
                                 cudaMemcpyDeviceToHost, s.stream));
    } else {
      CHECK_CUDA(cudaMemcpyAsync(s.host_result, s.inexact_out, sizeof(double), cudaMemcpyDeviceToHost, s.stream));
    }
    CHECK_CUDA(cudaEventRecord(s.done, s.stream));
  }

  void EnqueueKernels(DeviceSlot& s, Variant v, const gpu::SsimStageEvents* events = nullptr) {
    if (IsExact(v)) {
      CHECK_CUDA(gpu::EnqueueSsimTermSum(s.frame, PipelineOf(v), s.stream, events));
    } else {
      CHECK_CUDA(bench::EnqueueSsimInexactSum(s.frame, s.inexact_scratch, s.inexact_out, s.stream));
    }
  }

  // The slot's last result (after its `done` event). A refused segment pipeline gets the
  // event walk here, synchronously, as SsimCuda::Collect does.
  double Result(DeviceSlot& s, Variant v) const {
    if (IsExact(v)) {
      auto* r = static_cast<gpu::SsimTermSumResult*>(s.host_result);
      if (gpu::NeedsEventWalk(*r, PipelineOf(v))) {
        ++g_segment_refusals;
        CHECK_CUDA(gpu::EnqueueSsimEventWalk(s.frame, PipelineOf(v), s.stream));
        CHECK_CUDA(cudaMemcpyAsync(r, gpu::SsimTermSumResultOnDevice(s.frame), sizeof(gpu::SsimTermSumResult),
                                   cudaMemcpyDeviceToHost, s.stream));
        CHECK_CUDA(cudaStreamSynchronize(s.stream));
      }
      return gpu::SsimTermSum(*r, PipelineOf(v));
    }
    return *static_cast<const double*>(s.host_result);
  }
  const gpu::SsimTermSumResult& ExactResult(const DeviceSlot& s) const {
    return *static_cast<const gpu::SsimTermSumResult*>(s.host_result);
  }

  int size() const { return static_cast<int>(slots_.size()); }

 private:
  FrameGeometry g_;
  size_t plane_;
  std::vector<DeviceSlot> slots_;
};

// ---------------------------------------------------------------------------------
// Measurements.

struct Row {
  std::string name;
  double value;
  std::string unit;
};

class Report {
 public:
  void Add(const std::string& name, double value, const std::string& unit) { rows_.push_back({name, value, unit}); }
  const std::vector<Row>& rows() const { return rows_; }

 private:
  std::vector<Row> rows_;
};

struct Inputs {
  std::string label;  // "8bit", "10bit"
  std::string source;
  Frame ref;
  Frame dis;
  SsimSums want;  // the CPU reference's sums
  void* pinned_ref = nullptr;
  void* pinned_dis = nullptr;
};

struct Options {
  int reps = 30;
  int frames = 400;
  bool cpu = true;
};

bool g_all_exact = true;

void CheckExact(double got, const Inputs& in, const char* where) {
  if (!SameBits(got, in.want.term_sum)) {
    g_all_exact = false;
    std::fprintf(stderr, "NOT EXACT (%s, %s): %.17g, reference %.17g\n", where, in.label.c_str(), got,
                 in.want.term_sum);
  }
}

// One exact pipeline alone, inputs on the device: total and per-stage device time.
void ExactDeviceTime(Driver& d, const Inputs& in, const Options& o, Variant v, Report& report) {
  DeviceSlot& s = d.slot(0);
  cudaEvent_t ev[5];
  for (cudaEvent_t& e : ev) CHECK_CUDA(cudaEventCreate(&e));
  const gpu::SsimStageEvents stages{ev[1], ev[2], ev[3], ev[4]};
  std::vector<double> total_ms;
  std::vector<double> stage_ms[4];
  gpu::SsimTermSumResult last{};
  for (int r = -3; r < o.reps; ++r) {
    CHECK_CUDA(cudaEventRecord(ev[0], s.stream));
    d.EnqueueKernels(s, v, &stages);
    CHECK_CUDA(cudaMemcpyAsync(s.host_result, gpu::SsimTermSumResultOnDevice(s.frame), sizeof(gpu::SsimTermSumResult),
                               cudaMemcpyDeviceToHost, s.stream));
    CHECK_CUDA(cudaStreamSynchronize(s.stream));
    last = d.ExactResult(s);
    CheckExact(d.Result(s, v), in, "device-time run");
    if (r < 0) continue;
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, ev[0], ev[4]));
    total_ms.push_back(ms);
    for (int k = 0; k < 4; ++k) {
      CHECK_CUDA(cudaEventElapsedTime(&ms, ev[k], ev[k + 1]));
      stage_ms[k].push_back(ms);
    }
  }
  for (cudaEvent_t& e : ev) cudaEventDestroy(e);
  const std::string tag = std::string(VariantName(v)) + "_" + in.label;
  report.Add("device_ms_" + tag, Median(total_ms), "ms");
  if (v == Variant::kExactFused) {
    // Terms, plan and summaries are one kernel here.
    report.Add("device_ms_" + tag + "_stage_fused", Median(stage_ms[0]), "ms");
    report.Add("device_ms_" + tag + "_stage_walk", Median(stage_ms[3]), "ms");
  } else if (v == Variant::kExact) {
    // Terms, then the segment pipeline (no plan or summaries stages).
    report.Add("device_ms_" + tag + "_stage_terms", Median(stage_ms[0]), "ms");
    report.Add("device_ms_" + tag + "_stage_segment_sum", Median(stage_ms[3]), "ms");
    report.Add("segment_steps_" + in.label, static_cast<double>(last.segment_steps), "steps");
    report.Add("segment_crossing_lanes_" + in.label, static_cast<double>(last.segment_crossing_lanes), "lanes");
    report.Add("segment_accepted_" + in.label, last.segment_status == 0 ? 1 : 0, "bool");
  } else {
    const char* names[3] = {"terms", "plan", "summaries"};
    for (int k = 0; k < 3; ++k) report.Add("device_ms_" + tag + "_stage_" + names[k], Median(stage_ms[k]), "ms");
    report.Add("device_ms_" + tag + "_stage_walk", Median(stage_ms[3]), "ms");
  }
  if (v == Variant::kExactEventWalk) {
    report.Add("walk_chunks_refused_" + in.label, static_cast<double>(last.chunks_rejected), "chunks");
    report.Add("walk_subchunks_refused_" + in.label, static_cast<double>(last.subchunks_rejected), "subchunks");
    report.Add("walk_terms_one_by_one_" + in.label, static_cast<double>(last.terms_one_by_one), "terms");
    report.Add("walk_windows_" + in.label, static_cast<double>(last.walk_windows), "windows");
  }
}

void DeviceTimes(const Inputs& in, const Options& o, Report& report) {
  Driver d(in.ref.geometry(), 1);
  DeviceSlot& s = d.slot(0);
  const size_t plane = in.ref.geometry().plane_bytes(0);
  CHECK_CUDA(cudaMemcpy(const_cast<void*>(s.frame.ref), in.pinned_ref, plane, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(const_cast<void*>(s.frame.dis), in.pinned_dis, plane, cudaMemcpyHostToDevice));
  ExactDeviceTime(d, in, o, Variant::kExact, report);
  ExactDeviceTime(d, in, o, Variant::kExactEventWalk, report);
  ExactDeviceTime(d, in, o, Variant::kExactFused, report);

  cudaEvent_t ev[2];
  for (cudaEvent_t& e : ev) CHECK_CUDA(cudaEventCreate(&e));
  std::vector<double> inexact_ms;
  double inexact = 0;
  for (int r = -3; r < o.reps; ++r) {
    CHECK_CUDA(cudaEventRecord(ev[0], s.stream));
    d.EnqueueKernels(s, Variant::kInexact);
    CHECK_CUDA(cudaEventRecord(ev[1], s.stream));
    CHECK_CUDA(cudaMemcpyAsync(s.host_result, s.inexact_out, sizeof(double), cudaMemcpyDeviceToHost, s.stream));
    CHECK_CUDA(cudaStreamSynchronize(s.stream));
    inexact = d.Result(s, Variant::kInexact);
    if (r < 0) continue;
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, ev[0], ev[1]));
    inexact_ms.push_back(ms);
  }
  for (cudaEvent_t& e : ev) cudaEventDestroy(e);
  const std::string& l = in.label;
  report.Add("device_ms_inexact_" + l, Median(inexact_ms), "ms");
  double exact_ms = 0;
  for (const Row& r : report.rows()) {
    if (r.name == "device_ms_exact_" + l) exact_ms = r.value;
  }
  report.Add("device_ratio_exact_over_inexact_" + l, exact_ms / Median(inexact_ms), "x");
  report.Add("inexact_relative_error_" + l, std::fabs(inexact - in.want.term_sum) / std::fabs(in.want.term_sum), "1");
  report.Add("inexact_same_bits_" + l, SameBits(inexact, in.want.term_sum) ? 1 : 0, "bool");
}

// Device time per frame with several frames in flight and inputs already on the device:
// the kernels alone, from 8 streams, so one frame's single-block walk overlaps the other
// frames' grid-wide kernels (what a server keeping several frames in flight pays).
void DeviceThroughput(const Inputs& in, const Options& o, Report& report) {
  constexpr int kStreams = 8;
  const size_t plane = in.ref.geometry().plane_bytes(0);
  double per_frame[4] = {0, 0, 0, 0};
  const Variant variants[4] = {Variant::kExact, Variant::kExactEventWalk, Variant::kExactFused, Variant::kInexact};
  for (int k = 0; k < 4; ++k) {
    const Variant v = variants[k];
    Driver d(in.ref.geometry(), kStreams);
    for (int i = 0; i < kStreams; ++i) {
      DeviceSlot& s = d.slot(i);
      CHECK_CUDA(cudaMemcpy(const_cast<void*>(s.frame.ref), in.pinned_ref, plane, cudaMemcpyHostToDevice));
      CHECK_CUDA(cudaMemcpy(const_cast<void*>(s.frame.dis), in.pinned_dis, plane, cudaMemcpyHostToDevice));
      d.EnqueueKernels(s, v);  // warm-up
    }
    CHECK_CUDA(cudaDeviceSynchronize());
    const Clock::time_point t0 = Clock::now();
    for (int i = 0; i < o.frames; ++i) {
      DeviceSlot& s = d.slot(i % kStreams);
      d.EnqueueKernels(s, v);
    }
    CHECK_CUDA(cudaDeviceSynchronize());
    per_frame[k] = MsSince(t0) / o.frames;
    if (IsExact(v)) {
      for (int i = 0; i < kStreams; ++i) {
        DeviceSlot& s = d.slot(i);
        CHECK_CUDA(cudaMemcpy(s.host_result, gpu::SsimTermSumResultOnDevice(s.frame), sizeof(gpu::SsimTermSumResult),
                              cudaMemcpyDeviceToHost));
        CheckExact(d.Result(s, v), in, "device throughput");
      }
    }
    report.Add("device_ms_per_frame_" + std::string(VariantName(v)) + "_8streams_" + in.label, per_frame[k], "ms");
  }
  report.Add("device_ratio_per_frame_exact_over_inexact_8streams_" + in.label, per_frame[0] / per_frame[3], "x");
  report.Add("device_ratio_per_frame_exact_event_walk_over_inexact_8streams_" + in.label, per_frame[1] / per_frame[3],
             "x");
  report.Add("device_ratio_per_frame_exact_fused_over_inexact_8streams_" + in.label, per_frame[2] / per_frame[3], "x");
}

// Latency (one frame alone) and throughput (several in flight) through the driver.
void DriverTimes(const Inputs& in, const Options& o, Variant v, Report& report) {
  const std::string tag = std::string(VariantName(v)) + "_" + in.label;
  {
    Driver d(in.ref.geometry(), 1);
    DeviceSlot& s = d.slot(0);
    std::vector<double> ms;
    for (int r = -3; r < o.reps; ++r) {
      const Clock::time_point t0 = Clock::now();
      d.Enqueue(s, v, in.pinned_ref, in.pinned_dis);
      CHECK_CUDA(cudaEventSynchronize(s.done));
      if (r >= 0) ms.push_back(MsSince(t0));
      if (IsExact(v)) CheckExact(d.Result(s, v), in, "driver latency");
    }
    report.Add("latency_ms_" + tag, Median(ms), "ms");
  }
  for (int in_flight : {1, 2, 4, 8}) {
    Driver d(in.ref.geometry(), in_flight);
    for (int i = 0; i < d.size(); ++i) d.Enqueue(d.slot(i), v, in.pinned_ref, in.pinned_dis);  // warm-up
    CHECK_CUDA(cudaDeviceSynchronize());
    const Clock::time_point t0 = Clock::now();
    for (int i = 0; i < o.frames; ++i) {
      DeviceSlot& s = d.slot(i % in_flight);
      if (i >= in_flight) {
        CHECK_CUDA(cudaEventSynchronize(s.done));
        if (IsExact(v)) CheckExact(d.Result(s, v), in, "driver throughput");
      }
      d.Enqueue(s, v, in.pinned_ref, in.pinned_dis);
    }
    CHECK_CUDA(cudaDeviceSynchronize());
    const double ms = MsSince(t0);
    report.Add("fps_" + tag + "_inflight" + std::to_string(in_flight), o.frames / (ms / 1e3), "frames/s");
  }
}

// The product path: SsimCuda, uploading from the pinned planes (SubmitLuma).
void ClassTimes(const Inputs& in, const Options& o, Report& report) {
  const std::string tag = "class_exact_" + in.label;
  const FrameGeometry& g = in.ref.geometry();
  {
    SsimCudaOptions opts;
    opts.frames_in_flight = 1;
    absl::StatusOr<std::unique_ptr<SsimCuda>> gpu = SsimCuda::Create(opts);
    if (!gpu.ok()) {
      std::fprintf(stderr, "SsimCuda::Create: %s\n", std::string(gpu.status().message()).c_str());
      std::exit(1);
    }
    std::vector<double> ms;
    std::vector<double> upload;
    for (int r = -3; r < o.reps; ++r) {
      const Clock::time_point t0 = Clock::now();
      absl::Status s = (*gpu)->SubmitLuma(g, in.pinned_ref, in.pinned_dis);
      absl::StatusOr<SsimCudaFrame> f = s.ok() ? (*gpu)->Collect() : absl::StatusOr<SsimCudaFrame>(s);
      const double t = MsSince(t0);
      if (!f.ok()) {
        std::fprintf(stderr, "SsimCuda: %s\n", std::string(f.status().message()).c_str());
        std::exit(1);
      }
      CheckExact(f->sums.term_sum, in, "class latency");
      if (r >= 0) {
        ms.push_back(t);
        upload.push_back(f->upload_ms);
      }
    }
    report.Add("latency_ms_" + tag, Median(ms), "ms");
    report.Add("upload_ms_" + in.label, Median(upload), "ms");
  }
  for (int in_flight : {1, 2, 4, 8}) {
    SsimCudaOptions opts;
    opts.frames_in_flight = in_flight;
    absl::StatusOr<std::unique_ptr<SsimCuda>> gpu = SsimCuda::Create(opts);
    if (!gpu.ok()) std::exit(1);
    SsimCuda& c = **gpu;
    // Warm-up: buffers for this geometry in every slot.
    for (int i = 0; i < in_flight; ++i) (void)c.SubmitLuma(g, in.pinned_ref, in.pinned_dis);
    for (int i = 0; i < in_flight; ++i) (void)c.Collect();
    const Clock::time_point t0 = Clock::now();
    for (int i = 0; i < o.frames; ++i) {
      if (c.in_flight() == c.capacity()) {
        absl::StatusOr<SsimCudaFrame> f = c.Collect();
        if (!f.ok()) std::exit(1);
        CheckExact(f->sums.term_sum, in, "class throughput");
      }
      if (!c.SubmitLuma(g, in.pinned_ref, in.pinned_dis).ok()) std::exit(1);
    }
    while (c.in_flight() > 0) {
      absl::StatusOr<SsimCudaFrame> f = c.Collect();
      if (!f.ok()) std::exit(1);
      CheckExact(f->sums.term_sum, in, "class throughput");
    }
    const double ms = MsSince(t0);
    report.Add("fps_" + tag + "_inflight" + std::to_string(in_flight), o.frames / (ms / 1e3), "frames/s");
  }
}

void CpuTimes(const Inputs& in, double reference_ms, Report& report) {
  report.Add("cpu_ms_reference_" + in.label, reference_ms, "ms");
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  SsimThreads fast(threads);
  (void)fast.Sums(in.ref, in.dis);  // warm-up: scratch first-touch
  std::vector<double> ms;
  for (int r = 0; r < 3; ++r) {
    const Clock::time_point t0 = Clock::now();
    absl::StatusOr<SsimSums> got = fast.Sums(in.ref, in.dis);
    ms.push_back(MsSince(t0));
    if (!got.ok() || !SameBits(got->term_sum, in.want.term_sum)) g_all_exact = false;
  }
  report.Add("cpu_ms_threads" + std::to_string(threads) + "_" + in.label, Median(ms), "ms");
}

// ---------------------------------------------------------------------------------

void PrintTable(const Report& report) {
  std::printf("\n%-52s %14s  %s\n", "result", "value", "unit");
  for (const Row& r : report.rows()) std::printf("%-52s %14.4f  %s\n", r.name.c_str(), r.value, r.unit.c_str());
}

int Main(int argc, char** argv) {
  Options o;
  std::string json_path;
  std::string commit = "unknown";
  std::string corpus = std::getenv("EXACTQ_CORPUS") != nullptr ? std::getenv("EXACTQ_CORPUS") : "";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&](const char* flag) -> const char* {
      const size_t len = std::strlen(flag);
      return a.compare(0, len, flag) == 0 ? a.c_str() + len : nullptr;
    };
    if (const char* v = value("--reps="))
      o.reps = std::max(1, std::atoi(v));
    else if (const char* v = value("--frames="))
      o.frames = std::max(8, std::atoi(v));
    else if (const char* v = value("--json="))
      json_path = v;
    else if (const char* v = value("--commit="))
      commit = v;
    else if (const char* v = value("--corpus="))
      corpus = v;
    else if (const char* v = value("--cpu="))
      o.cpu = std::atoi(v) != 0;
    else {
      std::fprintf(stderr,
                   "usage: %s [--reps=30] [--frames=400] [--json=FILE] [--commit=SHA] [--corpus=DIR] [--cpu=1]\n",
                   argv[0]);
      return 2;
    }
  }
  std::string reason;
  if (!SsimCudaAvailable(&reason)) {
    std::fprintf(stderr, "ssim_cuda_bench: %s\n", reason.c_str());
    return 2;
  }
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("ssim_cuda_bench on %s (sm_%d%d, %d SMs), commit %s, reps %d, frames %d\n", prop.name, prop.major,
              prop.minor, prop.multiProcessorCount, commit.c_str(), o.reps, o.frames);

  Report report;
  for (int depth : {8, 10}) {
    Inputs in;
    in.label = std::to_string(depth) + "bit";
    in.source = "synthetic 3840x2160 textured pair with noise";
    if (depth == 8 && !corpus.empty() && ReadFirstFrame(corpus + "/p4k.ref.y4m", &in.ref) &&
        ReadFirstFrame(corpus + "/p4k_x265_crf26.dist.y4m", &in.dis)) {
      in.source = "corpus p4k_x265_crf26 frame 0";
    } else {
      MakeSynthetic(depth, &in.ref, &in.dis);
    }
    const Clock::time_point t0 = Clock::now();
    absl::StatusOr<SsimSums> want = ReferenceSums(in.ref, in.dis);
    const double reference_ms = MsSince(t0);
    if (!want.ok()) return 1;
    in.want = *want;
    std::printf("%s: %s (%s), ssim %.17g\n", in.label.c_str(), in.source.c_str(),
                GeometryDescription(in.ref.geometry()).c_str(), want->term_sum / want->weight_sum);
    const size_t plane = in.ref.geometry().plane_bytes(0);
    CHECK_CUDA(cudaMallocHost(&in.pinned_ref, plane));
    CHECK_CUDA(cudaMallocHost(&in.pinned_dis, plane));
    std::memcpy(in.pinned_ref, in.ref.plane_bytes(0), plane);
    std::memcpy(in.pinned_dis, in.dis.plane_bytes(0), plane);

    DeviceTimes(in, o, report);
    DeviceThroughput(in, o, report);
    DriverTimes(in, o, Variant::kExact, report);
    DriverTimes(in, o, Variant::kInexact, report);
    ClassTimes(in, o, report);
    for (int k : {1, 2, 4, 8}) {
      const std::string suffix = in.label + "_inflight" + std::to_string(k);
      double exact_fps = 0;
      double inexact_fps = 0;
      for (const Row& r : report.rows()) {
        if (r.name == "fps_exact_" + suffix) exact_fps = r.value;
        if (r.name == "fps_inexact_" + suffix) inexact_fps = r.value;
      }
      report.Add("fps_ratio_exact_over_inexact_" + suffix, exact_fps / inexact_fps, "x");
    }
    if (o.cpu) CpuTimes(in, reference_ms, report);
    report.Add("exact_bits_equal_reference_" + in.label, g_all_exact ? 1 : 0, "bool");
    cudaFreeHost(in.pinned_ref);
    cudaFreeHost(in.pinned_dis);
  }
  PrintTable(report);
  std::printf("\nexact results %s the CPU reference's bits\n", g_all_exact ? "all equal" : "DO NOT ALL EQUAL");
  std::printf("segment pipeline refusals (event walk ran): %lld\n", static_cast<long long>(g_segment_refusals));

  if (!json_path.empty()) {
    nlohmann::json j;
    j["benchmark"] = "ssim_cuda";
    j["device"] = prop.name;
    j["commit"] = commit;
    nlohmann::json results = nlohmann::json::array();
    for (const Row& r : report.rows()) results.push_back({{"name", r.name}, {"value", r.value}, {"unit", r.unit}});
    j["results"] = results;
    std::ofstream out(json_path);
    out << j.dump(2) << "\n";
    if (!out) {
      std::fprintf(stderr, "cannot write %s\n", json_path.c_str());
      return 1;
    }
    std::printf("wrote %s\n", json_path.c_str());
  }
  return g_all_exact ? 0 : 1;
}

}  // namespace
}  // namespace ssim
}  // namespace exactq

int main(int argc, char** argv) { return exactq::ssim::Main(argc, argv); }
