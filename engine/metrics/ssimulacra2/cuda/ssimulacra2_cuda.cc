#include "engine/metrics/ssimulacra2/cuda/ssimulacra2_cuda.h"

#include <cuda_runtime_api.h>

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/exact/ordered_sum_cuda.h"
#include "engine/metrics/ssimulacra2/cuda/ssimulacra2_cuda_pipeline.h"
#include "engine/metrics/ssimulacra2/srgb_eotf_table.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_reference.h"

namespace exactq {
namespace ssimulacra2 {
namespace {

absl::Status CudaError(const char* call, cudaError_t err) {
  const std::string message = absl::StrCat("Ssimulacra2Cuda: ", call, ": ", cudaGetErrorName(err), " (",
                                           cudaGetErrorString(err), ")");
  if (err == cudaErrorMemoryAllocation) return absl::ResourceExhaustedError(message);
  return absl::InternalError(message);
}

// Evaluates a CUDA call once; returns its error as a status naming the call.
#define SS2_CUDA_RETURN_IF_ERROR(call)             \
  do {                                             \
    const cudaError_t ss2_cuda_err_ = (call);      \
    if (ss2_cuda_err_ != cudaSuccess) {            \
      return CudaError(#call, ss2_cuda_err_);      \
    }                                              \
  } while (0)

}  // namespace

bool Ssimulacra2CudaAvailable(std::string* reason) {
  return exact::CudaDeviceAvailable(reason);  // one definition of "usable"
}

// Device and pinned memory, the stream, events and the captured graph. Buffers are sized
// for `geometry`; a new geometry frees and reallocates them (and drops the graph, whose
// nodes hold their addresses and sizes).
struct Ssimulacra2Cuda::State {
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr;
  cudaEvent_t done = nullptr;
  float* eotf_table = nullptr;  // device: kSrgbEotfTable
  FrameGeometry geometry;       // of the buffers below; width 0 before the first frame
  void* frames = nullptr;       // device: ref frame bytes, then dist
  void* staging = nullptr;      // pinned: the same
  size_t frame_bytes = 0;
  void* scratch = nullptr;  // device: gpu::ScratchBytes
  double* sums = nullptr;   // device: gpu::kSumCount
  double* result = nullptr; // pinned: gpu::kSumCount
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t graph_exec = nullptr;

  void DropGraph() {
    if (graph_exec != nullptr) cudaGraphExecDestroy(graph_exec);
    if (graph != nullptr) cudaGraphDestroy(graph);
    graph_exec = nullptr;
    graph = nullptr;
  }
  void FreeFrameBuffers() {
    DropGraph();
    cudaFree(frames);
    cudaFreeHost(staging);
    cudaFree(scratch);
    frames = nullptr;
    staging = nullptr;
    scratch = nullptr;
    frame_bytes = 0;
    geometry = FrameGeometry{};
  }
  ~State() {
    // Destruction cannot report errors; the device may already be gone.
    if (stream != nullptr) cudaStreamSynchronize(stream);
    FreeFrameBuffers();
    cudaFree(eotf_table);
    cudaFree(sums);
    cudaFreeHost(result);
    if (start != nullptr) cudaEventDestroy(start);
    if (done != nullptr) cudaEventDestroy(done);
    if (stream != nullptr) cudaStreamDestroy(stream);
  }
};

Ssimulacra2Cuda::Ssimulacra2Cuda(const Ssimulacra2CudaOptions& options)
    : options_(options), state_(std::make_unique<State>()) {}

Ssimulacra2Cuda::~Ssimulacra2Cuda() {
  cudaSetDevice(options_.device);
  state_.reset();
}

absl::StatusOr<std::unique_ptr<Ssimulacra2Cuda>> Ssimulacra2Cuda::Create(const Ssimulacra2CudaOptions& options) {
  const int matrix = static_cast<int>(options.yuv_matrix);
  if (matrix < 0 || matrix > 3) {
    return absl::InvalidArgumentError(absl::StrCat("Ssimulacra2Cuda: yuv_matrix must be 0..3, got ", matrix));
  }
  std::string reason;
  if (!Ssimulacra2CudaAvailable(&reason)) {
    return absl::FailedPreconditionError(absl::StrCat("Ssimulacra2Cuda: ", reason));
  }
  int count = 0;
  SS2_CUDA_RETURN_IF_ERROR(cudaGetDeviceCount(&count));
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
  SS2_CUDA_RETURN_IF_ERROR(cudaSetDevice(options_.device));
  SS2_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&st.stream, cudaStreamNonBlocking));
  SS2_CUDA_RETURN_IF_ERROR(cudaEventCreate(&st.start));
  SS2_CUDA_RETURN_IF_ERROR(cudaEventCreate(&st.done));
  void* table = nullptr;
  SS2_CUDA_RETURN_IF_ERROR(cudaMalloc(&table, sizeof(kSrgbEotfTable)));
  st.eotf_table = static_cast<float*>(table);
  SS2_CUDA_RETURN_IF_ERROR(
      cudaMemcpy(st.eotf_table, kSrgbEotfTable, sizeof(kSrgbEotfTable), cudaMemcpyHostToDevice));
  void* sums = nullptr;
  SS2_CUDA_RETURN_IF_ERROR(cudaMalloc(&sums, gpu::kSumCount * sizeof(double)));
  st.sums = static_cast<double*>(sums);
  void* result = nullptr;
  SS2_CUDA_RETURN_IF_ERROR(cudaMallocHost(&result, gpu::kSumCount * sizeof(double)));
  st.result = static_cast<double*>(result);
  SS2_CUDA_RETURN_IF_ERROR(gpu::PreparePipeline());
  return absl::OkStatus();
}

absl::Status Ssimulacra2Cuda::Reserve(const FrameGeometry& geometry) {
  State& st = *state_;
  if (st.geometry == geometry && st.frames != nullptr) return absl::OkStatus();
  SS2_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(st.stream));
  st.FreeFrameBuffers();
  const size_t frame_bytes = geometry.frame_bytes();
  SS2_CUDA_RETURN_IF_ERROR(cudaMalloc(&st.frames, 2 * frame_bytes));
  SS2_CUDA_RETURN_IF_ERROR(cudaMallocHost(&st.staging, 2 * frame_bytes));
  SS2_CUDA_RETURN_IF_ERROR(cudaMalloc(&st.scratch, gpu::ScratchBytes(geometry.width, geometry.height)));
  st.frame_bytes = frame_bytes;
  st.geometry = geometry;
  return absl::OkStatus();
}

// Upload from staging, the pipeline, the read-back: the frame's whole launch sequence.
absl::Status Ssimulacra2Cuda::Enqueue() {
  State& st = *state_;
  const FrameGeometry& g = st.geometry;
  gpu::DeviceFrame f;
  f.ref = st.frames;
  f.dis = static_cast<const char*>(st.frames) + st.frame_bytes;
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
  f.sums = st.sums;
  SS2_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(st.frames, st.staging, 2 * st.frame_bytes, cudaMemcpyHostToDevice, st.stream));
  SS2_CUDA_RETURN_IF_ERROR(gpu::EnqueuePipeline(f, st.stream));
  SS2_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(st.result, st.sums, gpu::kSumCount * sizeof(double),
                                           cudaMemcpyDeviceToHost, st.stream));
  return absl::OkStatus();
}

absl::Status Ssimulacra2Cuda::BuildGraph() {
  State& st = *state_;
  SS2_CUDA_RETURN_IF_ERROR(cudaStreamBeginCapture(st.stream, cudaStreamCaptureModeThreadLocal));
  const absl::Status enqueued = Enqueue();
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(st.stream, &graph);
  if (!enqueued.ok()) {
    if (graph != nullptr) cudaGraphDestroy(graph);
    return enqueued;
  }
  SS2_CUDA_RETURN_IF_ERROR(ended);
  st.graph = graph;
  SS2_CUDA_RETURN_IF_ERROR(cudaGraphInstantiate(&st.graph_exec, st.graph, 0));
  return absl::OkStatus();
}

absl::StatusOr<FrameSums> Ssimulacra2Cuda::Sums(const Frame& ref, const Frame& dist) {
  if (absl::Status s = CheckSsimulacra2Pair(ref, dist); !s.ok()) return s;
  State& st = *state_;
  SS2_CUDA_RETURN_IF_ERROR(cudaSetDevice(options_.device));
  if (absl::Status s = Reserve(ref.geometry()); !s.ok()) return s;
  // The stream is idle here (every call waits for its frame), so staging is free.
  std::memcpy(st.staging, ref.bytes(), st.frame_bytes);
  std::memcpy(static_cast<char*>(st.staging) + st.frame_bytes, dist.bytes(), st.frame_bytes);

  SS2_CUDA_RETURN_IF_ERROR(cudaEventRecord(st.start, st.stream));
  if (options_.use_graph) {
    if (st.graph_exec == nullptr) {
      if (absl::Status s = BuildGraph(); !s.ok()) {
        st.DropGraph();
        return s;
      }
    }
    SS2_CUDA_RETURN_IF_ERROR(cudaGraphLaunch(st.graph_exec, st.stream));
  } else if (absl::Status s = Enqueue(); !s.ok()) {
    cudaStreamSynchronize(st.stream);
    return s;
  }
  SS2_CUDA_RETURN_IF_ERROR(cudaEventRecord(st.done, st.stream));
  SS2_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(st.done));
  SS2_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&last_device_ms_, st.start, st.done));

  FrameSums sums;
  sums.width = ref.geometry().width;
  sums.height = ref.geometry().height;
  sums.num_scales = ScaleCount(sums.width, sums.height);
  static_assert(sizeof(sums.sums) == gpu::kSumCount * sizeof(double), "FrameSums::sums is 108 doubles");
  std::memcpy(sums.sums, st.result, sizeof(sums.sums));
  return sums;
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
