// Frames per second of vmaf's CUDA twin (VmafCuda: VIF at four scales, ADM2, motion) on
// frames already on the device, in libvmaf's order (the CPU's bits) and in the direct
// order (every term straight into the frame's total: other bits), alternating in one run.
// The price of exactness is the ratio of their device times. Before timing, the exact
// order's features are checked against the CPU reference bit for bit on the same frames.
//
// Input: the corpus's p1080 and p4k pairs (first frames), motion against the distorted
// luma so that every kernel does its full work. `--instances` twins, each with its own
// stream and frame, run concurrently (1: one frame in flight).
//
//   EXACTQ_CORPUS=/work/shared/corpus vmaf_cuda_bench [--sizes=1080p,4k] [--instances=1,16]
//       [--frames=200] [--reps=5] [--json=FILE] [--commit=SHA] [--dirty=BOOL]
// Exit 1 on a parity failure, 2 when no GPU can be used.

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/common/bench_frames.h"
#include "bench/common/cpu_bench.h"
#include "engine/format/frame.h"
#include "engine/metrics/vmaf/cuda/vmaf_cuda.h"
#include "engine/metrics/vmaf/vmaf_features.h"
#include "engine/platform/device_frame_buffer.h"

namespace exactq {
namespace {

struct Options {
  std::vector<std::string> sizes = {"1080p", "4k"};
  std::vector<int> instances = {1, 16};
  int frames = 200;
  int reps = 5;
  std::string corpus;
  bench::OutputFlags output;
};

// One twin with its stream and its resident frame.
struct Instance {
  cudaStream_t stream = nullptr;
  std::unique_ptr<DeviceFrameBuffer> frame;
  DeviceFramePair pair;
  std::unique_ptr<vmaf::VmafCuda> twin;
  ~Instance() {
    twin.reset();
    if (stream != nullptr) cudaStreamDestroy(stream);
  }
};

uint64_t Bits(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

bool SameBits(const vmaf::VmafFeatures& a, const vmaf::VmafFeatures& b) {
  for (int s = 0; s < 4; ++s) {
    if (Bits(a.vif[s]) != Bits(b.vif[s])) return false;
  }
  return Bits(a.adm2) == Bits(b.adm2) && Bits(a.motion) == Bits(b.motion);
}

absl::StatusOr<std::vector<std::unique_ptr<Instance>>> MakeInstances(int n, const Frame& ref, const Frame& dis,
                                                                     vmaf::VmafCudaSums order) {
  std::vector<std::unique_ptr<Instance>> out;
  for (int i = 0; i < n; ++i) {
    auto in = std::make_unique<Instance>();
    if (cudaStreamCreateWithFlags(&in->stream, cudaStreamNonBlocking) != cudaSuccess) {
      return absl::UnavailableError("cudaStreamCreate failed");
    }
    in->frame = std::make_unique<DeviceFrameBuffer>(0);
    absl::StatusOr<DeviceFramePair> pair = in->frame->Upload(ref, dis, 1, in->stream);
    if (!pair.ok()) return pair.status();
    if (cudaStreamSynchronize(in->stream) != cudaSuccess) return absl::InternalError("upload failed");
    in->pair = *pair;
    in->pair.previous_reference = in->pair.distorted;
    absl::StatusOr<std::unique_ptr<vmaf::VmafCuda>> twin =
        vmaf::VmafCuda::Create(0, ref.geometry(), vmaf::VmafModelId::kV0_6_1, order);
    if (!twin.ok()) return twin.status();
    in->twin = std::move(*twin);
    out.push_back(std::move(in));
  }
  return out;
}

// Seconds for `frames` frames on every instance: each round enqueues one frame per
// instance, then collects them all.
absl::StatusOr<double> TimeFrames(std::vector<std::unique_ptr<Instance>>& instances, int frames) {
  const bench::Timing t = bench::Time([&] {
    for (int f = 0; f < frames; ++f) {
      for (auto& in : instances) (void)in->twin->Enqueue(in->pair, in->stream);
      for (auto& in : instances) (void)in->twin->CollectFeatures();
    }
  });
  // The loop's statuses were dropped for timing; one more round reports any error.
  for (auto& in : instances) {
    if (absl::Status s = in->twin->Enqueue(in->pair, in->stream); !s.ok()) return s;
    if (absl::StatusOr<vmaf::VmafFeatures> f = in->twin->CollectFeatures(); !f.ok()) return f.status();
  }
  return t.wall_ms / 1000.0;
}

int Main(int argc, char** argv) {
  Options o;
  if (const char* c = std::getenv("EXACTQ_CORPUS")) o.corpus = c;
  for (int i = 1; i < argc; ++i) {
    std::string v;
    if (o.output.Parse(argv[i])) continue;
    if (bench::Flag(argv[i], "--sizes", &v)) {
      o.sizes = absl::StrSplit(v, ',');
    } else if (bench::Flag(argv[i], "--instances", &v)) {
      o.instances.clear();
      for (absl::string_view n : absl::StrSplit(v, ',')) o.instances.push_back(std::atoi(std::string(n).c_str()));
    } else if (bench::Flag(argv[i], "--frames", &v)) {
      o.frames = std::atoi(v.c_str());
    } else if (bench::Flag(argv[i], "--reps", &v)) {
      o.reps = std::atoi(v.c_str());
    } else if (bench::Flag(argv[i], "--corpus", &v)) {
      o.corpus = v;
    } else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "no GPU can be used\n");
    return 2;
  }
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  bench::Results results("vmaf_cuda");
  results.set_device(prop.name);
  results.set_input(
      "corpus p1080 (x264 crf27) and p4k (x265 crf26) first frames, 8-bit; motion against the "
      "distorted luma; frames resident on the device");
  std::printf("vmaf_cuda_bench on %s: %d frames per instance, median of %d\n", prop.name, o.frames, o.reps);

  for (const std::string& size : o.sizes) {
    const bool k4 = size == "4k";
    Frame ref, dis;
    std::string why;
    if (!bench::ReadCorpusPair(o.corpus, k4 ? "p4k.ref.y4m" : "p1080.ref.y4m",
                               k4 ? "p4k_x265_crf26.dist.y4m" : "p1080_x264_crf27.dist.y4m", &ref, &dis, &why)) {
      std::fprintf(stderr, "%s: %s\n", size.c_str(), why.c_str());
      return 2;
    }
    // Parity first: the exact order's features equal the CPU reference's.
    absl::StatusOr<vmaf::VmafFeatures> cpu = vmaf::ComputeVmafFeatures(ref, dis, &dis);
    absl::StatusOr<std::vector<std::unique_ptr<Instance>>> check =
        MakeInstances(1, ref, dis, vmaf::VmafCudaSums::kLibvmafOrder);
    if (!cpu.ok() || !check.ok()) {
      std::fprintf(stderr, "%s: %s\n", size.c_str(), (!cpu.ok() ? cpu.status() : check.status()).ToString().c_str());
      return 1;
    }
    Instance& one = *(*check)[0];
    (void)one.twin->Enqueue(one.pair, one.stream);
    absl::StatusOr<vmaf::VmafFeatures> gpu = one.twin->CollectFeatures();
    if (!gpu.ok() || !SameBits(*gpu, *cpu)) {
      std::fprintf(stderr, "%s: the exact order's features differ from the CPU reference's\n", size.c_str());
      return 1;
    }
    check->clear();
    std::printf("%dx%d: exact features == CPU reference (adm2 %.17g, motion %.17g)\n", ref.geometry().width,
                ref.geometry().height, cpu->adm2, cpu->motion);

    for (int n : o.instances) {
      absl::StatusOr<std::vector<std::unique_ptr<Instance>>> exact =
          MakeInstances(n, ref, dis, vmaf::VmafCudaSums::kLibvmafOrder);
      absl::StatusOr<std::vector<std::unique_ptr<Instance>>> direct =
          MakeInstances(n, ref, dis, vmaf::VmafCudaSums::kDirect);
      if (!exact.ok() || !direct.ok()) {
        std::fprintf(stderr, "%s x%d: %s\n", size.c_str(), n,
                     (!exact.ok() ? exact.status() : direct.status()).ToString().c_str());
        return 1;
      }
      // Warm-up, then alternate the two orders rep by rep.
      if (!TimeFrames(*exact, 5).ok() || !TimeFrames(*direct, 5).ok()) return 1;
      std::vector<double> exact_s, direct_s;
      for (int r = 0; r < o.reps; ++r) {
        absl::StatusOr<double> a = TimeFrames(*exact, o.frames);
        absl::StatusOr<double> b = TimeFrames(*direct, o.frames);
        if (!a.ok() || !b.ok()) {
          std::fprintf(stderr, "%s x%d: %s\n", size.c_str(), n, (!a.ok() ? a.status() : b.status()).ToString().c_str());
          return 1;
        }
        exact_s.push_back(*a);
        direct_s.push_back(*b);
      }
      const double frames = static_cast<double>(n) * o.frames;
      const double exact_fps = frames / bench::Median(exact_s);
      const double direct_fps = frames / bench::Median(direct_s);
      const std::string key = absl::StrCat(size, "_x", n, "_");
      results.Add(key + "exact_fps", exact_fps, "frames/s");
      results.Add(key + "direct_fps", direct_fps, "frames/s");
      results.Add(key + "exact_vs_direct_time", direct_fps / exact_fps, "ratio");
      std::printf("%-6s %2d in flight: exact %8.1f frames/s  direct %8.1f frames/s  exact/direct time %.3fx\n",
                  size.c_str(), n, exact_fps, direct_fps, direct_fps / exact_fps);
    }
  }
  return bench::Finish(results, o.output, bench::FindCommit(o.output.commit, o.output.dirty), /*bits_ok=*/true,
                       "CPU reference");
}

}  // namespace
}  // namespace exactq

int main(int argc, char** argv) { return exactq::Main(argc, argv); }
