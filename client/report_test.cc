#include "client/report.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace exactq::client {
namespace {

uint64_t Bits(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

TEST(ReportTest, JsonNumbersParseBackToTheSameBits) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100000; ++i) {
    double v;
    const uint64_t bits = rng();
    std::memcpy(&v, &bits, sizeof v);
    if (!std::isfinite(v)) continue;
    const std::string text = JsonNumber(v);
    EXPECT_EQ(Bits(std::strtod(text.c_str(), nullptr)), Bits(v)) << text;
  }
  for (double v : {0.0, -0.0, 1.0, 60.0, 0.1, 5e-324, 1.7976931348623157e308, 39.03746486247441}) {
    EXPECT_EQ(Bits(std::strtod(JsonNumber(v).c_str(), nullptr)), Bits(v)) << JsonNumber(v);
  }
}

TEST(ReportTest, JsonStringsStayValidJsonWhateverTheBytes) {
  const std::string text = std::string("a \"q\" \\ \n\t\r\x01 caf\xc3\xa9 ") + "\xff";
  const std::string quoted = JsonString(text);
  const nlohmann::json parsed = nlohmann::json::parse(quoted, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(parsed.is_discarded()) << quoted;
  EXPECT_EQ(parsed.get<std::string>(), "a \"q\" \\ \n\t\r\x01 caf\xc3\xa9 \xef\xbf\xbd");
}

TEST(ReportTest, NonFiniteIsNull) {
  EXPECT_EQ(JsonNumber(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(JsonNumber(-std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(JsonNumber(std::nan("")), "null");
}

TEST(ReportTest, JsonHasLibvmafShape) {
  ScoringRun run;
  for (int f = 0; f < 2; ++f) {
    v1::FrameResult r;
    r.set_frame_index(f);
    r.set_backend(v1::BACKEND_CPU);
    auto* s = r.add_scores();
    s->set_name("psnr_y");
    s->set_value(f == 0 ? 39.03746486247441 : std::numeric_limits<double>::infinity());
    run.frames.push_back(r);
  }
  auto* pooled = run.summary.add_pooled();
  pooled->set_name("psnr_y");
  pooled->set_min(0.1);
  pooled->set_max(0.2);
  pooled->set_mean(0.30000000000000004);
  pooled->set_harmonic_mean(0.25);
  run.summary.mutable_provenance()->set_server_version("exactq test");
  const nlohmann::json doc = nlohmann::json::parse(ToJson(run));
  ASSERT_EQ(doc["frames"].size(), 2u);
  EXPECT_EQ(doc["frames"][0]["frameNum"], 0);
  EXPECT_EQ(Bits(doc["frames"][0]["metrics"]["psnr_y"].get<double>()), Bits(39.03746486247441));
  EXPECT_TRUE(doc["frames"][1]["metrics"]["psnr_y"].is_null());
  EXPECT_EQ(Bits(doc["pooled_metrics"]["psnr_y"]["mean"].get<double>()), Bits(0.30000000000000004));
  EXPECT_EQ(doc["version"], "exactq test");
}

// The bytes the server uploaded to a GPU for the stream's pictures (its timing sum) are
// in the totals, beside the bytes it received.
TEST(ReportTest, JsonTotalsCarryTheBytesUploadedToTheGpu) {
  ScoringRun run;
  v1::StreamTotals* totals = run.summary.mutable_totals();
  totals->set_frames(2);
  totals->set_bytes_received(123);
  totals->mutable_timing_sum()->set_host_to_device_bytes(24883200);
  const nlohmann::json doc = nlohmann::json::parse(ToJson(run));
  EXPECT_EQ(doc["totals"]["bytes_received"], 123);
  EXPECT_EQ(doc["totals"]["host_to_device_bytes"], 24883200);
}

// Decoded sources: the JSON and the console say where each side was decoded and why
// not on the GPU; raw streams say nothing about decoding.
TEST(ReportTest, DecodedSidesSayWhereTheyWereDecoded) {
  ScoringRun run;
  v1::FrameResult r;
  r.set_backend(v1::BACKEND_CUDA);
  r.add_scores()->set_name("ssim");
  run.frames.push_back(r);
  EXPECT_EQ(ToTable(run).find("decoded:"), std::string::npos);
  EXPECT_FALSE(nlohmann::json::parse(ToJson(run)).contains("decode"));

  run.accepted.mutable_reference_decode()->set_device("cpu");
  run.accepted.mutable_reference_decode()->set_cpu_reason("raw pictures: nothing to decode");
  run.accepted.mutable_distorted_decode()->set_device("gpu");
  EXPECT_NE(ToTable(run).find("decoded: reference on cpu (raw pictures: nothing to decode), distorted on gpu\n"),
            std::string::npos)
      << ToTable(run);
  const nlohmann::json doc = nlohmann::json::parse(ToJson(run));
  EXPECT_EQ(doc["decode"]["reference"]["device"], "cpu");
  EXPECT_EQ(doc["decode"]["reference"]["cpu_reason"], "raw pictures: nothing to decode");
  EXPECT_EQ(doc["decode"]["distorted"]["device"], "gpu");
  EXPECT_EQ(doc["decode"]["distorted"]["cpu_reason"], "");
}

TEST(ReportTest, CsvHasOneRowPerFrame) {
  ScoringRun run;
  v1::FrameResult r;
  r.set_backend(v1::BACKEND_CPU);
  auto* s = r.add_scores();
  s->set_name("psnr_y");
  s->set_value(60);
  run.frames.push_back(r);
  EXPECT_EQ(ToCsv(run), "frame,backend,psnr_y,compute_ms,total_ms\n0,cpu,60,0.000,0.000\n");
}

}  // namespace
}  // namespace exactq::client
