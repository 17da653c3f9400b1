// Benchmark of the ssimulacra2 CUDA twin (engine/metrics/ssimulacra2/cuda): one frame at
// a time (Score waits for the frame), median over --reps of the wall time per frame and
// of the device time (CUDA events from the upload's start to the read-back's end), at
// 3840x2160 and 1920x1080 8-bit 4:2:0. The 4K pair is the corpus's ($EXACTQ_CORPUS) when
// present, synthetic otherwise; 1080p is the corpus's p1080 pair or synthetic. The first
// frame of each size (buffer allocation and graph capture) is not timed.
//
//   bazel run -c opt //bench/ssimulacra2:ssimulacra2_cuda_bench -- [--reps=5] [--graph=1]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "engine/io/y4m_reader.h"
#include "engine/metrics/ssimulacra2/cuda/ssimulacra2_cuda.h"
#include "engine/metrics/ssimulacra2/ssimulacra2_test_frames.h"

namespace {

using exactq::Frame;
using exactq::FrameGeometry;
using exactq::ssimulacra2::Ssimulacra2Cuda;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 == 1 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// The first frame of a corpus pair, or false.
bool LoadCorpusPair(const char* ref_name, const char* dis_name, Frame* ref, Frame* dis) {
  const char* dir = std::getenv("EXACTQ_CORPUS");
  if (dir == nullptr || dir[0] == '\0') return false;
  auto r = exactq::Y4mReader::Open(std::string(dir) + "/" + ref_name);
  auto d = exactq::Y4mReader::Open(std::string(dir) + "/" + dis_name);
  if (!r.ok() || !d.ok()) return false;
  auto mr = r->ReadFrame(ref);
  auto md = d->ReadFrame(dis);
  return mr.ok() && md.ok() && *mr && *md;
}

int Run(Ssimulacra2Cuda& gpu, int width, int height, const char* ref_name, const char* dis_name, int reps) {
  Frame ref;
  Frame dis;
  std::string source = "corpus";
  if (!LoadCorpusPair(ref_name, dis_name, &ref, &dis)) {
    const FrameGeometry g{width, height, {exactq::ChromaLayout::k420, 8}};
    ref = exactq::ssimulacra2::testing_frames::MakeTestFrame(g, 1);
    dis = exactq::ssimulacra2::testing_frames::MakeTestFrame(g, 1, {8, 0});
    source = "synthetic";
  }
  auto first = gpu.Score(ref, dis);  // allocation and graph capture: not timed
  if (!first.ok()) {
    std::fprintf(stderr, "%s\n", first.status().ToString().c_str());
    return 1;
  }
  std::vector<double> wall;
  std::vector<double> device;
  double score = 0.0;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto s = gpu.Score(ref, dis);
    const auto t1 = std::chrono::steady_clock::now();
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.status().ToString().c_str());
      return 1;
    }
    score = (*s)[0].value;
    wall.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    device.push_back(gpu.last_device_ms());
  }
  std::printf("ssimulacra2_cuda %dx%d 8-bit 4:2:0 (%s pair): median of %d: wall %.3f ms/frame (%.1f fps), device "
              "%.3f ms; min wall %.3f ms; score %.17g; graph %d\n",
              ref.geometry().width, ref.geometry().height, source.c_str(), reps, Median(wall), 1000.0 / Median(wall),
              Median(device), *std::min_element(wall.begin(), wall.end()), score, gpu.options().use_graph ? 1 : 0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 5;
  bool graph = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--reps=", 7) == 0) reps = std::max(1, std::atoi(argv[i] + 7));
    if (std::strncmp(argv[i], "--graph=", 8) == 0) graph = std::atoi(argv[i] + 8) != 0;
  }
  exactq::ssimulacra2::Ssimulacra2CudaOptions options;
  options.use_graph = graph;
  auto gpu = Ssimulacra2Cuda::Create(options);
  if (!gpu.ok()) {
    std::fprintf(stderr, "no GPU: %s\n", gpu.status().ToString().c_str());
    return 1;
  }
  if (int rc = Run(**gpu, 3840, 2160, "p4k.ref.y4m", "p4k_x265_crf26.dist.y4m", reps); rc != 0) return rc;
  return Run(**gpu, 1920, 1080, "p1080.ref.y4m", "p1080_x264_crf27.dist.y4m", reps);
}
