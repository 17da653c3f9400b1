#include "engine/metrics/ssimulacra2/cuda/ssimulacra2_cuda.h"
#include "engine/platform/copy_to_device.h"

#include <cuda_runtime_api.h>

#include <cstring>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/exact/ordered_sum_cuda.h"
#include "engine/metrics/ssimulacra2/cuda/ssimulacra2_cuda_pipeline.h"
#include "engine/metrics/ssimulacra2/srgb_eotf_table.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_reference.h"
#include "engine/platform/cuda_status.h"
#include "engine/platform/device_frame_buffer.h"
#include "engine/platform/frames_in_flight.h"
#include "engine/platform/host_wait_event.h"

namespace exactq {
namespace ssimulacra2 {
namespace {

constexpr char kWho[] = "Ssimulacra2Cuda";

}  // namespace

bool Ssimulacra2CudaAvailable(std::string* reason) {
  return exact::CudaDeviceAvailable(reason);  // one definition of "usable"
}

const char* Ssimulacra2SumModeName(Ssimulacra2SumMode mode) {
  switch (mode) {
    case Ssimulacra2SumMode::kExactSegments:
      return "exact_segments";
    case Ssimulacra2SumMode::kExactEventWalk:
      return "exact_event_walk";
    case Ssimulacra2SumMode::kInexactTree:
      return "inexact_tree";
  }
  return "?";
}

size_t Ssimulacra2CudaDeviceBytes(const FrameGeometry& geometry, bool own_frames) {
  return (own_frames ? 2 * geometry.frame_bytes() : 0) + gpu::ScratchBytes(geometry.width, geometry.height) +
         sizeof(gpu::SumResults) + sizeof(kSrgbEotfTable);
}

namespace {

gpu::SumPath PathOf(Ssimulacra2SumMode mode) {
  switch (mode) {
    case Ssimulacra2SumMode::kExactEventWalk:
      return gpu::SumPath::kEventWalk;
    case Ssimulacra2SumMode::kInexactTree:
      return gpu::SumPath::kInexactTree;
    case Ssimulacra2SumMode::kExactSegments:
      break;
  }
  return gpu::SumPath::kSegments;
}

}  // namespace

// Captures that may fail in a row before a twin stops capturing (LaunchFrame).
constexpr int kGraphCaptureAttempts = 16;

// Device and pinned memory, the streams, events and the captured graph. Buffers are sized
// for `geometry`; a new geometry frees and reallocates them (and drops the graph, whose
// nodes hold their addresses and sizes).

struct Ssimulacra2Cuda::State {
  cudaStream_t stream = nullptr;  // the main stream (pipeline.main)
  gpu::PipelineStreams pipeline;  // the six sum streams and the fork/join events
  cudaEvent_t start = nullptr;
  cudaEvent_t done = nullptr;
  float* eotf_table = nullptr;  // device: kSrgbEotfTable
  FrameGeometry geometry;       // of the scratch below; width 0 before the first frame
  // Sums' uploads (created with the first such call); EnqueueDevice reads the caller's.
  std::unique_ptr<DeviceFrameBuffer> own_frames;
  DeviceFramePair frame;                  // the pair the launches read (its pointers are in the graphs)
  const uint8_t* graph_pictures[2] = {};  // the pair the graphs were captured with
  int capture_failures_in_a_row = 0;
  std::optional<FrameInFlight> in_flight;  // from EnqueueDevice to the collect
  bool slabs = false;                      // the frame in flight runs in slabs
  bool enqueued = false;                   // a frame waits to be collected
  void* scratch = nullptr;                 // device: gpu::ScratchBytes
  gpu::SumResults* results = nullptr;      // device
  gpu::SumResults* readback = nullptr;     // pinned
  // The captured frame per geometry: [0] whole scales, [1] in slabs (sum_slab_chunks).
  cudaGraph_t graph[2] = {};
  cudaGraphExec_t graph_exec[2] = {};

  // Waits for everything enqueued on the main and the sum streams (errors ignored: used
  // on error paths and at destruction).
  void Drain() {
    if (stream != nullptr) cudaStreamSynchronize(stream);
    for (const auto& channel : pipeline.sums) {
      for (cudaStream_t s : channel) {
        if (s != nullptr) cudaStreamSynchronize(s);
      }
    }
  }
  void DropGraphs() {
    for (int g = 0; g < 2; ++g) {
      if (graph_exec[g] != nullptr) cudaGraphExecDestroy(graph_exec[g]);
      if (graph[g] != nullptr) cudaGraphDestroy(graph[g]);
      graph_exec[g] = nullptr;
      graph[g] = nullptr;
    }
  }
  void FreeFrameBuffers() {
    DropGraphs();
    cudaFree(scratch);
    scratch = nullptr;
    geometry = FrameGeometry{};
  }
  ~State() {
    // Destruction cannot report errors; the device may already be gone.
    Drain();
    FreeFrameBuffers();
    own_frames.reset();
    cudaFree(eotf_table);
    cudaFree(results);
    cudaFreeHost(readback);
    if (start != nullptr) cudaEventDestroy(start);
    if (done != nullptr) cudaEventDestroy(done);
    gpu::DestroyPipelineStreams(&pipeline);
    if (stream != nullptr) cudaStreamDestroy(stream);
  }
};

namespace {

// Ssimulacra2CudaOptions with the priority rank's default (-1) resolved for its sum mode.
Ssimulacra2CudaOptions WithDefaultPriorities(Ssimulacra2CudaOptions options) {
  const bool exact = options.sum_mode != Ssimulacra2SumMode::kInexactTree;
  if (options.sum_stream_priority_rank < 0) options.sum_stream_priority_rank = exact ? kExactSumStreamPriorityRank : 0;
  return options;
}

}  // namespace

Ssimulacra2Cuda::Ssimulacra2Cuda(const Ssimulacra2CudaOptions& options)
    : options_(WithDefaultPriorities(options)), state_(std::make_unique<State>()) {}

Ssimulacra2Cuda::~Ssimulacra2Cuda() {
  cudaSetDevice(options_.device);
  state_.reset();
}

absl::StatusOr<std::unique_ptr<Ssimulacra2Cuda>> Ssimulacra2Cuda::Create(const Ssimulacra2CudaOptions& options) {
  const int matrix = static_cast<int>(options.yuv_matrix);
  if (matrix < 0 || matrix > 3) {
    return absl::InvalidArgumentError(absl::StrCat("Ssimulacra2Cuda: yuv_matrix must be 0..3, got ", matrix));
  }
  const int mode = static_cast<int>(options.sum_mode);
  if (mode < 0 || mode > static_cast<int>(Ssimulacra2SumMode::kInexactTree)) {
    return absl::InvalidArgumentError(absl::StrCat("Ssimulacra2Cuda: unknown sum_mode ", mode));
  }
  if (options.sum_slab_chunks < 0 || options.sum_slab_chunks % 32 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Ssimulacra2Cuda: sum_slab_chunks must be 0 or a positive multiple of 32, got ", options.sum_slab_chunks));
  }
  if (options.bases_evict_last && options.sum_slab_chunks == 0) {
    return absl::InvalidArgumentError("Ssimulacra2Cuda: bases_evict_last needs sum_slab_chunks > 0");
  }
  if (options.slab_min_frames_in_flight < 1) {
    return absl::InvalidArgumentError(absl::StrCat("Ssimulacra2Cuda: slab_min_frames_in_flight must be >= 1, got ",
                                                   options.slab_min_frames_in_flight));
  }
  if (options.testing_segment_plan_mode < 0 || options.testing_segment_plan_mode > 5) {
    return absl::InvalidArgumentError(absl::StrCat("Ssimulacra2Cuda: testing_segment_plan_mode must be 0..5, got ",
                                                   options.testing_segment_plan_mode));
  }
  if (options.channels_per_sum_batch != 1 && options.channels_per_sum_batch != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("Ssimulacra2Cuda: channels_per_sum_batch must be 1 or 3, got ", options.channels_per_sum_batch));
  }
  if (options.sum_stream_priority_rank < -1) {
    return absl::InvalidArgumentError("Ssimulacra2Cuda: sum_stream_priority_rank must be >= 0, or -1 for the default");
  }
  std::string reason;
  if (!Ssimulacra2CudaAvailable(&reason)) {
    return absl::FailedPreconditionError(absl::StrCat("Ssimulacra2Cuda: ", reason));
  }
  int count = 0;
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaGetDeviceCount(&count));
  if (options.device < 0 || options.device >= count) {
    return absl::InvalidArgumentError(
        absl::StrCat("Ssimulacra2Cuda: device ", options.device, " does not exist (", count, " devices)"));
  }
  std::unique_ptr<Ssimulacra2Cuda> gpu(new Ssimulacra2Cuda(options));
  if (absl::Status s = gpu->Init(); !s.ok()) return s;
  return gpu;
}

absl::Status Ssimulacra2Cuda::Init() {
  State& st = *state_;
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaSetDevice(options_.device));
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaStreamCreateWithFlags(&st.stream, cudaStreamNonBlocking));
  gpu::PipelineShape shape;
  shape.channels_per_batch = options_.channels_per_sum_batch;
  shape.stream_per_scale = options_.sum_stream_per_scale;
  EXACTQ_RETURN_IF_CUDA_ERROR(
      kWho, gpu::CreatePipelineStreams(st.stream, shape, &st.pipeline, options_.sum_stream_priority_rank));
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventCreate(&st.start));
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, CreateHostWaitEvent(&st.done, /*timing=*/true));
  void* table = nullptr;
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaMalloc(&table, sizeof(kSrgbEotfTable)));
  st.eotf_table = static_cast<float*>(table);
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, CopyToDeviceAndWait(st.eotf_table, kSrgbEotfTable, sizeof(kSrgbEotfTable)));
  void* results = nullptr;
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaMalloc(&results, sizeof(gpu::SumResults)));
  st.results = static_cast<gpu::SumResults*>(results);
  void* readback = nullptr;
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaMallocHost(&readback, sizeof(gpu::SumResults)));
  st.readback = static_cast<gpu::SumResults*>(readback);
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, gpu::PreparePipeline());
  return absl::OkStatus();
}

absl::Status Ssimulacra2Cuda::Reserve(const FrameGeometry& geometry) {
  State& st = *state_;
  if (st.geometry == geometry && st.scratch != nullptr) return absl::OkStatus();
  st.Drain();
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaStreamSynchronize(st.stream));
  st.FreeFrameBuffers();
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaMalloc(&st.scratch, gpu::ScratchBytes(geometry.width, geometry.height)));
  // The segment workspaces start zeroed once; each segment walk leaves them so.
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, gpu::PrepareScratch(st.scratch, geometry.width, geometry.height, st.stream));
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaStreamSynchronize(st.stream));
  st.geometry = geometry;
  return absl::OkStatus();
}

// The pipeline (forked onto the sum streams and joined back) over the uploaded frames,
// and the read-back: the frame's launch sequence after the upload, on the main stream,
// its scales whole or in slabs. (The upload stays outside the graph: it is the device
// frame's, whoever owns it.)
absl::Status Ssimulacra2Cuda::Enqueue(Ssimulacra2SumMode mode, bool slabs) {
  State& st = *state_;
  const FrameGeometry& g = st.geometry;
  gpu::DeviceFrame f;
  f.ref = st.frame.reference;
  f.dis = st.frame.distorted;
  f.width = g.width;
  f.height = g.height;
  f.bit_depth = g.format.bit_depth;
  f.chroma_width = g.plane_width(1);
  f.chroma_height = g.plane_height(1);
  for (int p = 0; p < 3; ++p) f.plane_offset[p] = g.plane_offset(p);
  f.coefficients = MakeYuvToRgbCoefficients(options_.yuv_matrix, g.format.bit_depth);
  f.cube_root_of_bias = CubeRootOfOpsinBias();
  f.eotf_table = st.eotf_table;
  f.scratch = st.scratch;
  f.results = st.results;
  gpu::SumOptions sums;
  sums.advice = options_.binary32_advice ? gpu::AdvicePrecision::kBinary32 : gpu::AdvicePrecision::kBinary64;
  sums.slab_chunks = slabs ? options_.sum_slab_chunks : 0;
  sums.bases_evict_last = slabs && options_.bases_evict_last;
  sums.segment_plan_mode = options_.testing_segment_plan_mode;
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, gpu::EnqueuePipeline(f, PathOf(mode), st.pipeline, sums));
  EXACTQ_RETURN_IF_CUDA_ERROR(
      kWho, cudaMemcpyAsync(st.readback, st.results, sizeof(gpu::SumResults), cudaMemcpyDeviceToHost, st.stream));
  return absl::OkStatus();
}

absl::Status Ssimulacra2Cuda::BuildGraph(bool slabs) {
  State& st = *state_;
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaStreamBeginCapture(st.stream, cudaStreamCaptureModeThreadLocal));
  const absl::Status enqueued = Enqueue(options_.sum_mode, slabs);
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(st.stream, &graph);
  if (!enqueued.ok()) {
    if (graph != nullptr) cudaGraphDestroy(graph);
    return enqueued;
  }
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, ended);
  st.graph[slabs] = graph;
  st.graph_pictures[0] = st.frame.reference;
  st.graph_pictures[1] = st.frame.distorted;
  // With a sum stream priority the kernel nodes keep those they were captured with.
  EXACTQ_RETURN_IF_CUDA_ERROR(
      kWho, cudaGraphInstantiate(&st.graph_exec[slabs], graph,
                                 options_.sum_stream_priority_rank > 0 ? cudaGraphInstantiateFlagUseNodePriority : 0));
  return absl::OkStatus();
}

void Ssimulacra2Cuda::DrainStreams() { state_->Drain(); }

void Ssimulacra2Cuda::SetTestingSegmentPlanModeForTests(int mode) {
  options_.testing_segment_plan_mode = mode;
  state_->DropGraphs();  // the streams are idle between calls
}

bool Ssimulacra2Cuda::SlabsPossible() const {
  return options_.sum_mode == Ssimulacra2SumMode::kExactSegments && options_.sum_slab_chunks > 0;
}

// One run over the frame on the device, its scales whole or in slabs: the graph or the
// direct launches, then st.done. The graphs are captured with a geometry's first frame
// (and again when the pair's device buffers move), both forms at once where slabs are
// possible, so that a change of load never costs a capture in mid-stream.
absl::Status Ssimulacra2Cuda::LaunchFrame(Ssimulacra2SumMode mode, bool graph, bool slabs) {
  State& st = *state_;
  // A capture can fail for what other threads do meanwhile (a video decoder created or
  // destroyed in the same context synchronizes it): the frame then runs as direct
  // launches, the same kernels and bits, and the next frame captures again, up to
  // kGraphCaptureAttempts failures in a row; then this twin launches directly.
  if (graph && st.capture_failures_in_a_row < kGraphCaptureAttempts) {
    if (st.graph_pictures[0] != st.frame.reference || st.graph_pictures[1] != st.frame.distorted) st.DropGraphs();
    bool captured = true;
    for (bool form : {false, true}) {
      if (st.graph_exec[form] != nullptr || (form != slabs && !SlabsPossible())) continue;
      if (absl::Status s = BuildGraph(form); !s.ok()) {
        st.DropGraphs();
        DrainStreams();
        cudaGetLastError();  // a sticky error shows again in the launches below
        ++stats_.graph_captures_failed;
        ++st.capture_failures_in_a_row;
        captured = false;
        break;
      }
    }
    if (captured) {
      st.capture_failures_in_a_row = 0;
      EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaGraphLaunch(st.graph_exec[slabs], st.stream));
      EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventRecord(st.done, st.stream));
      return absl::OkStatus();
    }
  }
  if (absl::Status s = Enqueue(mode, slabs); !s.ok()) {
    DrainStreams();
    return s;
  }
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventRecord(st.done, st.stream));
  return absl::OkStatus();
}

absl::Status Ssimulacra2Cuda::EnqueueDevice(const DeviceFramePair& frame) { return EnqueueFrame(frame, false); }

absl::Status Ssimulacra2Cuda::EnqueueFrame(const DeviceFramePair& frame, bool timed) {
  State& st = *state_;
  if (st.enqueued) return absl::FailedPreconditionError("Ssimulacra2Cuda: a frame is in flight; collect it first");
  if (frame.device != options_.device || frame.reference == nullptr || frame.distorted == nullptr ||
      frame.planes < frame.geometry.plane_count() || frame.ready == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("Ssimulacra2Cuda: the pair's planes are not all ready on device ", options_.device));
  }
  if (absl::Status s = CheckSsimulacra2Input(frame.geometry); !s.ok()) return s;
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaSetDevice(options_.device));
  if (absl::Status s = Reserve(frame.geometry); !s.ok()) return s;
  st.frame = frame;
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaStreamWaitEvent(st.stream, static_cast<cudaEvent_t>(frame.ready), 0));
  if (!timed) EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventRecord(st.start, st.stream));
  // Slabs only while the device is busy with other frames too (sum_slab_chunks).
  st.in_flight.emplace(options_.device);
  st.slabs = SlabsPossible() && st.in_flight->in_flight() >= options_.slab_min_frames_in_flight;
  if (absl::Status s = LaunchFrame(options_.sum_mode, options_.use_graph, st.slabs); !s.ok()) {
    st.in_flight.reset();
    return s;
  }
  st.enqueued = true;
  return absl::OkStatus();
}

absl::StatusOr<FrameSums> Ssimulacra2Cuda::CollectSums() {
  State& st = *state_;
  if (!st.enqueued) return absl::FailedPreconditionError("Ssimulacra2Cuda: no frame in flight");
  st.enqueued = false;
  struct Uncount {  // the frame leaves the device's count however this returns
    State& st;
    ~Uncount() { st.in_flight.reset(); }
  } uncount{st};
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaSetDevice(options_.device));
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventSynchronize(st.done));
  stats_.frames_in_slabs += st.slabs ? 1 : 0;
  float device_ms = 0.0f;
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventElapsedTime(&device_ms, st.start, st.done));
  if (options_.sum_mode == Ssimulacra2SumMode::kExactSegments) {
    for (int32_t chunks : st.readback->tile_chunks) stats_.chunks_in_tile += chunks;
    int refused = 0;
    int overflowed = 0;
    for (int32_t status : st.readback->status) {
      if (status == gpu::kSumUnstaged) {
        return absl::InternalError("Ssimulacra2Cuda: the chunk stage's slabs left chunks of a sum unstaged");
      }
      refused += status == gpu::kSumRefused ? 1 : 0;
      overflowed += status == gpu::kSumOverflow ? 1 : 0;
    }
    if (refused + overflowed > 0) {
      // A segment pipeline refused a sum: the whole frame again (the device still holds
      // both pictures) with the event walk, which never refuses, directly on the same
      // streams. Its workspaces share memory with the segment pipeline's, so the segment
      // state is zeroed again afterwards.
      ++stats_.frames_redone_event_walk;
      stats_.sums_refused += refused;
      stats_.sums_overflowed += overflowed;
      if (absl::Status s = LaunchFrame(Ssimulacra2SumMode::kExactEventWalk, /*graph=*/false, /*slabs=*/false);
          !s.ok()) {
        return s;
      }
      EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventSynchronize(st.done));
      EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventElapsedTime(&device_ms, st.start, st.done));  // both runs
      EXACTQ_RETURN_IF_CUDA_ERROR(kWho,
                                  gpu::PrepareScratch(st.scratch, st.geometry.width, st.geometry.height, st.stream));
      EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaStreamSynchronize(st.stream));
    }
  }
  last_device_ms_ = device_ms;
  ++stats_.frames;

  FrameSums sums;
  sums.width = st.geometry.width;
  sums.height = st.geometry.height;
  sums.num_scales = ScaleCount(sums.width, sums.height);
  static_assert(sizeof(sums.sums) == sizeof(st.readback->sums), "FrameSums::sums is 108 doubles");
  std::memcpy(sums.sums, st.readback->sums, sizeof(sums.sums));
  return sums;
}

absl::StatusOr<FrameScores> Ssimulacra2Cuda::Collect() {
  absl::StatusOr<FrameSums> sums = CollectSums();
  if (!sums.ok()) return sums.status();
  absl::StatusOr<double> score = ScoreFromSums(*sums);
  if (!score.ok()) return score.status();
  return FrameScores{{"ssimulacra2", *score}};
}

absl::StatusOr<FrameSums> Ssimulacra2Cuda::Sums(const Frame& ref, const Frame& dist) {
  if (absl::Status s = CheckSsimulacra2Pair(ref, dist); !s.ok()) return s;
  State& st = *state_;
  if (st.enqueued) return absl::FailedPreconditionError("Ssimulacra2Cuda: a frame is in flight; collect it first");
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaSetDevice(options_.device));
  if (st.own_frames == nullptr) st.own_frames = std::make_unique<DeviceFrameBuffer>(options_.device);
  const int64_t staged_before = st.own_frames->staged_uploads();
  EXACTQ_RETURN_IF_CUDA_ERROR(kWho, cudaEventRecord(st.start, st.stream));
  absl::StatusOr<DeviceFramePair> pair = st.own_frames->Upload(ref, dist, ref.geometry().plane_count(), st.stream);
  if (!pair.ok()) return pair.status();
  stats_.frames_staged += st.own_frames->staged_uploads() - staged_before;
  if (absl::Status s = EnqueueFrame(*pair, /*timed=*/true); !s.ok()) return s;
  return CollectSums();
}

absl::StatusOr<FrameScores> Ssimulacra2Cuda::Score(const Frame& ref, const Frame& dist) {
  absl::StatusOr<FrameSums> sums = Sums(ref, dist);
  if (!sums.ok()) return sums.status();
  absl::StatusOr<double> score = ScoreFromSums(*sums);
  if (!score.ok()) return score.status();
  return FrameScores{{"ssimulacra2", *score}};
}

}  // namespace ssimulacra2
}  // namespace exactq
