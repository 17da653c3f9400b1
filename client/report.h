// Writers for a scoring run: libvmaf-shaped JSON, CSV (one row per frame)
// and a readable table. Every number is written in the shortest form that parses
// back to the same double bits; non-finite values are written as JSON null (as
// libvmaf does) and as "nan"/"inf"/"-inf" in CSV.
#ifndef EXACTQ_CLIENT_REPORT_H_
#define EXACTQ_CLIENT_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "exactq/v1/exactq.pb.h"

namespace exactq::client {

struct ScoringRun {
  v1::StreamAccepted accepted;
  std::vector<v1::FrameResult> frames;
  v1::StreamSummary summary;
};

// The shortest decimal that round-trips to the same bits; "null" when not finite.
std::string JsonNumber(double value);
// A quoted, escaped JSON string.
std::string JsonString(const std::string& s);
// The shortest round-trip decimal; "nan", "inf", "-inf" when not finite.
std::string CsvNumber(double value);
// "cuda", "cpu" (or "auto").
const char* BackendLabel(v1::Backend backend);
// libvmaf's "pooled_metrics" object of a summary; `indent` is the indent of its line.
std::string PooledMetricsJson(const v1::StreamSummary& summary, const std::string& indent);
// Where a decoded source was decoded: {"device": "gpu", "cpu_reason": ""}.
std::string DecodeInfoJson(const v1::DecodeInfo& decode);

std::string ToJson(const ScoringRun& run);
std::string ToCsv(const ScoringRun& run);

struct TableOptions {
  int precision = -1;      // decimals of the console's numbers; -1: every bit (shortest form)
  bool per_frame = false;  // a row per frame before the pooled scores
};
// The console's summary: pooled scores and totals (and, with per_frame, every frame).
std::string ToTable(const ScoringRun& run, const TableOptions& options = {});
std::string ConsoleNumber(double value, int precision);

// The pieces of the files, for writing them as frames arrive (ReportFiles):
// JSON head, frames, then the tail of a whole run or of one that ended early
// ("complete": false and the error).
std::string JsonHead(const v1::Provenance& provenance, const std::string& job_id,
                     const v1::StreamAccepted& accepted = v1::StreamAccepted());
std::string JsonFrame(const v1::FrameResult& frame, bool first);
std::string JsonTail(const ScoringRun& run);
std::string JsonIncompleteTail(uint64_t frames, const std::string& error);
std::string CsvHeader(const v1::FrameResult& first);
std::string CsvRow(const v1::FrameResult& frame);
// libvmaf's XML shape: <VMAF><params/><frames><frame frameNum=".." psnr_y=".."/>...
// </frames><pooled_metrics><metric name=".." min=".." .../></pooled_metrics></VMAF>.
struct FrameSize {
  uint32_t width = 0;
  uint32_t height = 0;
};
std::string XmlHead(const v1::Provenance& provenance, const FrameSize& size);
std::string XmlFrame(const v1::FrameResult& frame);
std::string XmlTail(const ScoringRun& run);
std::string XmlIncompleteTail(const std::string& error);

}  // namespace exactq::client

#endif  // EXACTQ_CLIENT_REPORT_H_
