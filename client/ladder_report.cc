#include "client/ladder_report.h"

#include "client/report.h"
#include "fmt/format.h"

namespace exactq::client {
namespace {

std::string Bytes(int64_t bytes) { return bytes >= 0 ? std::to_string(bytes) : "null"; }

std::string RenditionJson(const LadderRun& run, size_t i) {
  const RenditionRun& r = run.renditions[i];
  const v1::RenditionAccepted* accepted =
      static_cast<int>(i) < run.accepted.renditions_size() ? &run.accepted.renditions(static_cast<int>(i)) : nullptr;
  std::string out = fmt::format("\n    {{\"source\": {}", JsonString(r.source));
  if (accepted != nullptr) {
    out +=
        fmt::format(", \"width\": {}, \"height\": {}, \"scaled\": {}, \"decoder\": {}, \"decode\": {}",
                    accepted->geometry().width(), accepted->geometry().height(), accepted->scaled() ? "true" : "false",
                    JsonString(accepted->decoder()), DecodeInfoJson(accepted->decode()));
  }
  out += fmt::format(", \"bytes\": {},\n     \"frames\": [", Bytes(r.size_bytes));
  for (size_t f = 0; f < r.frames.size(); ++f) {
    // JsonFrame's rows are indented for a top-level "frames"; two more spaces here.
    std::string row = JsonFrame(r.frames[f], f == 0);
    const size_t at = row.find('\n');
    out += row.substr(0, at + 1) + "    " + row.substr(at + 1);
  }
  out += r.frames.empty() ? "]" : "\n     ]";
  if (r.ok()) {
    const v1::StreamTotals& t = r.end.summary().totals();
    out += ",\n     \"pooled_metrics\": " + PooledMetricsJson(r.end.summary(), "     ");
    out += fmt::format(
        ",\n     \"totals\": {{\"frames\": {}, \"frames_cuda\": {}, \"frames_cpu\": {}, \"host_to_device_bytes\": {}, "
        "\"wall_seconds\": {}}},\n     \"complete\": true}}",
        t.frames(), t.frames_cuda(), t.frames_cpu(), t.timing_sum().host_to_device_bytes(),
        JsonNumber(static_cast<double>(t.wall_ns()) * 1e-9));
  } else {
    const std::string error =
        r.end.message().empty() && r.end.code() == 0 ? "no answer for this rendition" : r.end.message();
    out += fmt::format(",\n     \"complete\": false, \"error\": {}}}", JsonString(error));
  }
  return out;
}

std::string Json(const LadderRun& run, const std::string* error) {
  const v1::Provenance& p = run.accepted.provenance();
  std::string out = "{\n";
  out += fmt::format("  \"version\": {},\n", JsonString(p.server_version()));
  out += fmt::format("  \"job_id\": {},\n", JsonString(run.accepted.job_id()));
  out += "  \"metric_versions\": {";
  for (int i = 0; i < p.metrics_size(); ++i) {
    out += fmt::format("{}{}: {}", i ? ", " : "", JsonString(p.metrics(i).name()), p.metrics(i).definition_version());
  }
  out += fmt::format("}},\n  \"scaler_version\": {},\n", p.scaler_version());
  out += fmt::format(
      "  \"reference\": {{\"source\": {}, \"width\": {}, \"height\": {}, \"decoder\": {}, \"decode\": {}}},\n",
      JsonString(run.reference), run.accepted.geometry().width(), run.accepted.geometry().height(),
      JsonString(run.accepted.reference_decoder()), DecodeInfoJson(run.accepted.reference_decode()));
  out += "  \"renditions\": [";
  for (size_t i = 0; i < run.renditions.size(); ++i) out += (i ? "," : "") + RenditionJson(run, i);
  out += run.renditions.empty() ? "],\n" : "\n  ],\n";
  if (error == nullptr) return out + "  \"complete\": true\n}\n";
  return out + fmt::format("  \"complete\": false,\n  \"error\": {}\n}}\n", JsonString(*error));
}

}  // namespace

std::string LadderToJson(const LadderRun& run) { return Json(run, nullptr); }
std::string LadderToJson(const LadderRun& run, const std::string& error) { return Json(run, &error); }

std::string LadderToCsv(const LadderRun& run) {
  const v1::FrameResult* first = nullptr;
  for (const RenditionRun& r : run.renditions) {
    if (!r.frames.empty()) {
      first = &r.frames.front();
      break;
    }
  }
  std::string out =
      "rendition,source," + (first != nullptr ? CsvHeader(*first) : "frame,backend,compute_ms,total_ms\n");
  for (size_t i = 0; i < run.renditions.size(); ++i) {
    std::string source = run.renditions[i].source;
    // RFC 4180 quoting when the name needs it.
    if (source.find_first_of(",\"\n") != std::string::npos) {
      std::string quoted = "\"";
      for (char c : source) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
      source = quoted + "\"";
    }
    for (const v1::FrameResult& f : run.renditions[i].frames) out += fmt::format("{},{},", i, source) + CsvRow(f);
  }
  return out;
}

std::string LadderToTable(const LadderRun& run, int precision) {
  std::string out = fmt::format("reference {} ({}x{}, {})\n", run.reference, run.accepted.geometry().width(),
                                run.accepted.geometry().height(), run.accepted.reference_decoder());
  std::vector<std::string> outputs;
  for (const RenditionRun& r : run.renditions) {
    if (!r.ok()) continue;
    for (const v1::PooledScore& s : r.end.summary().pooled()) outputs.push_back(s.name());
    break;
  }
  out += fmt::format("{:>3} {:<28} {:>17} {:>12} {:>7}", "#", "rendition", "size", "bytes", "frames");
  for (const std::string& name : outputs) out += fmt::format(" {:>18}", name);
  out += "\n";
  for (size_t i = 0; i < run.renditions.size(); ++i) {
    const RenditionRun& r = run.renditions[i];
    std::string size = "?";
    if (static_cast<int>(i) < run.accepted.renditions_size()) {
      const v1::RenditionAccepted& a = run.accepted.renditions(static_cast<int>(i));
      size = fmt::format("{}x{}{}", a.geometry().width(), a.geometry().height(), a.scaled() ? " scaled" : "");
    }
    std::string source = r.source.size() > 28 ? "..." + r.source.substr(r.source.size() - 25) : r.source;
    out += fmt::format("{:>3} {:<28} {:>17} {:>12} {:>7}", i, source, size,
                       r.size_bytes >= 0 ? std::to_string(r.size_bytes) : "-", r.frames.size());
    if (r.ok()) {
      for (const v1::PooledScore& s : r.end.summary().pooled())
        out += fmt::format(" {:>18}", ConsoleNumber(s.mean(), precision));
    } else {
      out += "  error: " + r.end.message();
    }
    out += "\n";
  }
  out += fmt::format("mean per output; {}\n", run.accepted.provenance().server_version());
  return out;
}

}  // namespace exactq::client
