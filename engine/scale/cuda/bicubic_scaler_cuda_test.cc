// The exact scaler's CUDA twin against its CPU definition, byte for byte: random sizes,
// layouts and depths (upscales, downscales, one-sample planes), the ladder's sizes on
// random pictures, and every corpus picture scaled to the ladder's sizes. Skips with
// the reason where no GPU is usable.
#include "engine/scale/cuda/bicubic_scaler_cuda.h"
#include "engine/platform/testing/cuda_device.h"

#include <cuda_runtime.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/format/frame.h"
#include "engine/io/testing/corpus.h"
#include "engine/io/y4m_reader.h"
#include "engine/scale/bicubic_scaler.h"
#include "gtest/gtest.h"

namespace exactq {
namespace scale {
namespace {

Frame RandomFrame(const FrameGeometry& g, std::mt19937* rng) {
  Frame f = *Frame::Create(g);
  const int max_value = (1 << g.format.bit_depth) - 1;
  std::uniform_int_distribution<int> sample(0, max_value);
  for (int p = 0; p < g.plane_count(); ++p) {
    uint8_t* bytes = f.mutable_plane_bytes(p);
    for (size_t i = 0; i < g.plane_samples(p); ++i) {
      const int v = sample(*rng);
      if (g.bytes_per_sample() == 1) {
        bytes[i] = static_cast<uint8_t>(v);
      } else {
        const uint16_t v16 = static_cast<uint16_t>(v);
        std::memcpy(bytes + 2 * i, &v16, 2);
      }
    }
  }
  return f;
}

// The first differing byte, or "" when the twin returns the definition's bytes.
std::string Difference(const Frame& source, const FrameGeometry& target) {
  absl::StatusOr<Frame> want = ScaleBicubic(source, target);
  if (!want.ok()) return std::string(want.status().message());
  absl::StatusOr<std::unique_ptr<BicubicScalerCuda>> gpu = BicubicScalerCuda::Create(0, source.geometry(), target);
  if (!gpu.ok()) return std::string(gpu.status().message());
  Frame got;
  if (absl::Status s = (*gpu)->Scale(source, &got); !s.ok()) return std::string(s.message());
  if (!(got.geometry() == target)) return "wrong geometry";
  for (size_t i = 0; i < target.frame_bytes(); ++i) {
    if (got.bytes()[i] != want->bytes()[i]) {
      return absl::StrCat(GeometryDescription(source.geometry()), " -> ", GeometryDescription(target), ": byte ", i,
                          " is ", got.bytes()[i], ", the definition's ", want->bytes()[i]);
    }
  }
  return "";
}

class BicubicScalerCudaTest : public ::testing::Test {
 protected:
  void SetUp() override { EXACTQ_SKIP_WITHOUT_CUDA_DEVICE(); }
};

TEST_F(BicubicScalerCudaTest, RandomSizesLayoutsAndDepths) {
  std::mt19937 rng(20261205);
  std::uniform_int_distribution<int> size(1, 160);
  const ChromaLayout layouts[] = {ChromaLayout::k400, ChromaLayout::k420, ChromaLayout::k422, ChromaLayout::k444};
  const int depths[] = {8, 10, 12, 16};
  for (int i = 0; i < 200; ++i) {
    FrameGeometry from, to;
    from.format.layout = to.format.layout = layouts[i % 4];
    from.format.bit_depth = to.format.bit_depth = depths[(i / 4) % 4];
    from.width = size(rng);
    from.height = size(rng);
    to.width = size(rng);
    to.height = size(rng);
    const Frame source = RandomFrame(from, &rng);
    const std::string difference = Difference(source, to);
    ASSERT_EQ(difference, "") << "case " << i;
  }
}

TEST_F(BicubicScalerCudaTest, TheLaddersSizesOnRandomPictures) {
  std::mt19937 rng(7);
  const std::pair<int, int> sizes[] = {{1280, 720}, {1920, 1080}, {2560, 1440}, {3840, 2160}};
  for (const int depth : {8, 10}) {
    for (const auto& [w, h] : sizes) {
      FrameGeometry from, to;
      from.format.layout = to.format.layout = ChromaLayout::k420;
      from.format.bit_depth = to.format.bit_depth = depth;
      from.width = w;
      from.height = h;
      to.width = 3840;
      to.height = 2160;
      const Frame source = RandomFrame(from, &rng);
      ASSERT_EQ(Difference(source, to), "");
      // And down: a rendition larger than its reference.
      FrameGeometry down = to;
      down.width = w / 2;
      down.height = h / 2;
      ASSERT_EQ(Difference(source, down), "");
    }
  }
}

TEST_F(BicubicScalerCudaTest, EveryCorpusPictureToTheLaddersSizes) {
  absl::StatusOr<std::string> dir = corpus::FindCorpusDir();
  if (!dir.ok()) GTEST_SKIP() << dir.status().message();
  absl::StatusOr<std::vector<corpus::CorpusCase>> cases = corpus::LoadCorpusCases(*dir);
  ASSERT_TRUE(cases.ok()) << cases.status();
  int pictures = 0;
  for (const corpus::CorpusCase& c : *cases) {
    absl::StatusOr<Y4mReader> dist = Y4mReader::Open(c.dist_path);
    ASSERT_TRUE(dist.ok()) << c.id;
    Frame picture;
    if (!*dist->ReadFrame(&picture)) continue;  // the first picture of each case
    for (const auto& [w, h] : {std::pair{3840, 2160}, std::pair{1920, 1080}, std::pair{1280, 720}}) {
      FrameGeometry to = picture.geometry();
      to.width = w;
      to.height = h;
      ASSERT_EQ(Difference(picture, to), "") << c.id;
    }
    ++pictures;
  }
  EXPECT_GE(pictures, 10);
}

}  // namespace
}  // namespace scale
}  // namespace exactq
