#include "engine/golden/self_check.h"

#include <chrono>
#include <cstring>

#include "engine/metrics/registry.h"
#include "engine/runtime/gpu_scorer.h"
#include "gtest/gtest.h"

namespace exactq::golden {
namespace {

TEST(GoldenPairsTest, SmallAndDeterministic) {
  ASSERT_FALSE(GoldenPairs().empty());
  for (const GoldenPair& pair : GoldenPairs()) {
    EXPECT_LE(pair.geometry.width, 64);
    EXPECT_LE(pair.geometry.height, 64);
    const Frame a = MakePicture(pair, true);
    const Frame b = MakePicture(pair, true);
    ASSERT_EQ(a.size_bytes(), b.size_bytes());
    EXPECT_EQ(std::memcmp(a.bytes(), b.bytes(), a.size_bytes()), 0) << pair.name;
    const Frame r = MakePicture(pair, false);
    EXPECT_NE(std::memcmp(a.bytes(), r.bytes(), a.size_bytes()), 0) << pair.name << ": no distortion";
  }
}

TEST(SelfCheckTest, TheCpuReturnsTheGoldenBitsInUnderASecond) {
  const CheckReport report = CheckCpu();
  EXPECT_TRUE(report.error.ok()) << report.error;
  for (const Difference& d : report.differences) ADD_FAILURE() << Describe(d);
  EXPECT_GT(report.outputs, 15);
  EXPECT_EQ(report.skipped, 0);
  EXPECT_LT(report.seconds, 1.0);
}

TEST(SelfCheckTest, ADifferentBitIsNamed) {
  // A backend that returns the CPU's scores with the last bit of one output flipped.
  const CheckReport report = RunCheck("fake:0",
                                      [](const GoldenPair& pair, const GoldenMetric& metric, const Frame& ref,
                                         const Frame& dist) -> absl::StatusOr<std::vector<NamedScore>> {
                                        absl::StatusOr<std::unique_ptr<Metric>> m =
                                            CreateMetric(metric.name, metric.options);
                                        absl::StatusOr<FrameScores> scores = (*m)->Score(ref, dist);
                                        if (pair.name == "yuv422p10_48x32" && metric.name == "ssim") {
                                          (*scores)[0].value = FromBits(Bits((*scores)[0].value) ^ 1);
                                        }
                                        return scores;
                                      });
  ASSERT_EQ(report.differences.size(), 1u);
  const std::string text = Describe(report.differences[0]);
  EXPECT_NE(text.find("fake:0: yuv422p10_48x32 ssim ssim: got "), std::string::npos) << text;
  EXPECT_NE(text.find(", golden "), std::string::npos) << text;
}

TEST(SelfCheckTest, MissingOutputsAndVersionsAreDifferences) {
  std::vector<Difference> differences;
  const GoldenPair& pair = GoldenPairs()[0];
  EXPECT_EQ(Compare(pair, "psnr", DefinitionVersion("psnr"), {}, "x", &differences), 0);
  EXPECT_FALSE(differences.empty());  // every golden output missing
  differences.clear();
  Compare(pair, "psnr", 999, {{"psnr_y", 1.0}}, "x", &differences);
  ASSERT_EQ(differences.size(), 1u);
  EXPECT_NE(differences[0].detail.find("no golden values for psnr definition version 999"), std::string::npos);
}

TEST(SelfCheckTest, EveryGpuReturnsTheGoldenBits) {
  absl::StatusOr<std::vector<GpuDevice>> devices = ListGpuDevices();
  if (!devices.ok() || devices->empty()) GTEST_SKIP() << "no GPU";
  for (const GpuDevice& d : *devices) {
    const CheckReport report = CheckGpu(d.index);
    EXPECT_TRUE(report.error.ok()) << report.where << ": " << report.error;
    for (const Difference& diff : report.differences) ADD_FAILURE() << Describe(diff);
    EXPECT_GT(report.outputs, 0) << report.where;
  }
}

}  // namespace
}  // namespace exactq::golden
