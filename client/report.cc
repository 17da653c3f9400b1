#include "client/report.h"

#include <cmath>

#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace exactq::client {

std::string CsvNumber(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return fmt::format("{}", value);
}

namespace {

std::string XmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          out += fmt::format("&#{};", static_cast<int>(c));
        else
          out += c;
    }
  }
  return out;
}

// libvmaf writes XML numbers with 6 decimals; ExactQ keeps every bit (shortest
// round-trip form), "nan"/"inf" when not finite.
std::string XmlNumber(double value) { return CsvNumber(value); }

}  // namespace

const char* BackendLabel(v1::Backend backend) {
  switch (backend) {
    case v1::BACKEND_CUDA:
      return "cuda";
    case v1::BACKEND_CPU:
      return "cpu";
    default:
      return "auto";
  }
}

std::string JsonString(const std::string& s) {
  // Bytes that are not UTF-8 (a file name, a server's message) become U+FFFD: the file
  // stays valid JSON.
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string JsonNumber(double value) {
  if (!std::isfinite(value)) return "null";
  // fmt's default for double is the shortest round-trip representation.
  return fmt::format("{}", value);
}

std::string JsonHead(const v1::Provenance& p, const std::string& job_id, const v1::StreamAccepted& accepted) {
  std::string out = "{\n";
  out += fmt::format("  \"version\": {},\n", JsonString(p.server_version()));
  out += fmt::format("  \"job_id\": {},\n", JsonString(job_id));
  // Decoded sources: where each side was decoded, and why not on the GPU.
  if (accepted.has_reference_decode()) {
    out += fmt::format("  \"decode\": {{\"reference\": {}, \"distorted\": {}}},\n",
                       DecodeInfoJson(accepted.reference_decode()), DecodeInfoJson(accepted.distorted_decode()));
  }
  out += "  \"metric_versions\": {";
  for (int i = 0; i < p.metrics_size(); ++i) {
    out += fmt::format("{}{}: {}", i ? ", " : "", JsonString(p.metrics(i).name()), p.metrics(i).definition_version());
  }
  out += "},\n";
  out += "  \"frames\": [";
  return out;
}

std::string JsonFrame(const v1::FrameResult& r, bool first) {
  std::string out = fmt::format("{}\n    {{\"frameNum\": {}, \"backend\": \"{}\", \"metrics\": {{", first ? "" : ",",
                                r.frame_index(), BackendLabel(r.backend()));
  for (int i = 0; i < r.scores_size(); ++i) {
    out += fmt::format("{}{}: {}", i ? ", " : "", JsonString(r.scores(i).name()), JsonNumber(r.scores(i).value()));
  }
  return out + "}}";
}

std::string JsonTail(const ScoringRun& run) {
  std::string out = run.frames.empty() ? "],\n" : "\n  ],\n";
  out += "  \"pooled_metrics\": " + PooledMetricsJson(run.summary, "  ") + ",\n";
  const v1::StreamTotals& t = run.summary.totals();
  out += fmt::format("  \"fps\": {},\n", JsonNumber(t.frames_per_second()));
  out += fmt::format(
      "  \"totals\": {{\"frames\": {}, \"frames_cuda\": {}, \"frames_cpu\": {}, \"bytes_received\": {}, "
      "\"host_to_device_bytes\": {}, \"wall_seconds\": {}}},\n",
      t.frames(), t.frames_cuda(), t.frames_cpu(), t.bytes_received(), t.timing_sum().host_to_device_bytes(),
      JsonNumber(static_cast<double>(t.wall_ns()) * 1e-9));
  out += "  \"complete\": true\n}\n";
  return out;
}

std::string DecodeInfoJson(const v1::DecodeInfo& decode) {
  return fmt::format("{{\"device\": {}, \"cpu_reason\": {}}}", JsonString(decode.device()),
                     JsonString(decode.cpu_reason()));
}

std::string PooledMetricsJson(const v1::StreamSummary& summary, const std::string& indent) {
  std::string out = "{";
  for (int i = 0; i < summary.pooled_size(); ++i) {
    const v1::PooledScore& s = summary.pooled(i);
    out += fmt::format(
        "{}\n{}  {}: {{\"min\": {}, \"max\": {}, \"mean\": {}, \"harmonic_mean\": {}, \"p1\": {}, "
        "\"p5\": {}, \"p10\": {}, \"median\": {}}}",
        i ? "," : "", indent, JsonString(s.name()), JsonNumber(s.min()), JsonNumber(s.max()), JsonNumber(s.mean()),
        JsonNumber(s.harmonic_mean()), JsonNumber(s.p1()), JsonNumber(s.p5()), JsonNumber(s.p10()),
        JsonNumber(s.median()));
  }
  return out + (summary.pooled_size() ? "\n" + indent + "}" : "}");
}

std::string JsonIncompleteTail(uint64_t frames, const std::string& error) {
  std::string out = frames == 0 ? "],\n" : "\n  ],\n";
  out += fmt::format("  \"totals\": {{\"frames\": {}}},\n", frames);
  out += fmt::format("  \"complete\": false,\n  \"error\": {}\n}}\n", JsonString(error));
  return out;
}

std::string ToJson(const ScoringRun& run) {
  std::string out = JsonHead(run.summary.provenance(), run.summary.job_id(), run.accepted);
  for (size_t f = 0; f < run.frames.size(); ++f) out += JsonFrame(run.frames[f], f == 0);
  return out + JsonTail(run);
}

std::string CsvHeader(const v1::FrameResult& first) {
  std::string out = "frame,backend";
  for (const v1::Score& s : first.scores()) out += "," + s.name();
  return out + ",compute_ms,total_ms\n";
}

std::string CsvRow(const v1::FrameResult& r) {
  std::string out = fmt::format("{},{}", r.frame_index(), BackendLabel(r.backend()));
  for (const v1::Score& s : r.scores()) out += "," + CsvNumber(s.value());
  return out + fmt::format(",{:.3f},{:.3f}\n", r.timing().compute_ns() * 1e-6, r.timing().total_ns() * 1e-6);
}

std::string XmlHead(const v1::Provenance& p, const FrameSize& size) {
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<VMAF version=\"{}\">\n", XmlEscape(p.server_version()));
  out += fmt::format("  <params qualityWidth=\"{}\" qualityHeight=\"{}\" />\n", size.width, size.height);
  out += "  <frames>\n";
  return out;
}

std::string XmlFrame(const v1::FrameResult& r) {
  std::string out = fmt::format("    <frame frameNum=\"{}\"", r.frame_index());
  for (const v1::Score& s : r.scores()) out += fmt::format(" {}=\"{}\"", XmlEscape(s.name()), XmlNumber(s.value()));
  return out + " />\n";
}

std::string XmlTail(const ScoringRun& run) {
  std::string out = "  </frames>\n  <pooled_metrics>\n";
  for (const v1::PooledScore& s : run.summary.pooled()) {
    out += fmt::format("    <metric name=\"{}\" min=\"{}\" max=\"{}\" mean=\"{}\" harmonic_mean=\"{}\" />\n",
                       XmlEscape(s.name()), XmlNumber(s.min()), XmlNumber(s.max()), XmlNumber(s.mean()),
                       XmlNumber(s.harmonic_mean()));
  }
  out += "  </pooled_metrics>\n  <aggregate_metrics />\n";
  out += fmt::format("  <fyi fps=\"{}\" complete=\"true\" />\n</VMAF>\n",
                     XmlNumber(run.summary.totals().frames_per_second()));
  return out;
}

std::string XmlIncompleteTail(const std::string& error) {
  return fmt::format("  </frames>\n  <fyi complete=\"false\" error=\"{}\" />\n</VMAF>\n", XmlEscape(error));
}

std::string ToCsv(const ScoringRun& run) {
  std::string out = run.frames.empty() ? "frame,backend,compute_ms,total_ms\n" : CsvHeader(run.frames.front());
  for (const v1::FrameResult& r : run.frames) out += CsvRow(r);
  return out;
}

std::string ConsoleNumber(double value, int precision) {
  if (precision < 0 || !std::isfinite(value)) return CsvNumber(value);
  return fmt::format("{:.{}f}", value, precision);
}

std::string ToTable(const ScoringRun& run, const TableOptions& options) {
  std::string out;
  if (run.frames.empty()) return "no frames\n";
  const int p = options.precision;
  if (options.per_frame) {
    out += fmt::format("{:>7} {:>7}", "frame", "backend");
    for (const v1::Score& s : run.frames.front().scores()) out += fmt::format(" {:>20}", s.name());
    out += fmt::format(" {:>10}\n", "total_ms");
    for (const v1::FrameResult& r : run.frames) {
      out += fmt::format("{:>7} {:>7}", r.frame_index(), BackendLabel(r.backend()));
      for (const v1::Score& s : r.scores()) out += fmt::format(" {:>20}", ConsoleNumber(s.value(), p));
      out += fmt::format(" {:>10.3f}\n", r.timing().total_ns() * 1e-6);
    }
    out += "\n";
  }
  out += "pooled over " + std::to_string(run.frames.size()) + " frames:\n";
  out += fmt::format("{:>15} {:>20} {:>20} {:>20} {:>20}\n", "output", "mean", "harmonic_mean", "min", "max");
  for (const v1::PooledScore& s : run.summary.pooled()) {
    out += fmt::format("{:>15} {:>20} {:>20} {:>20} {:>20}\n", s.name(), ConsoleNumber(s.mean(), p),
                       ConsoleNumber(s.harmonic_mean(), p), ConsoleNumber(s.min(), p), ConsoleNumber(s.max(), p));
  }
  const v1::StreamTotals& t = run.summary.totals();
  out +=
      fmt::format("\n{} frames ({} cuda, {} cpu) in {:.3f} s, {:.2f} frames/s; {}\n", t.frames(), t.frames_cuda(),
                  t.frames_cpu(), t.wall_ns() * 1e-9, t.frames_per_second(), run.summary.provenance().server_version());
  // Decoded sources: where each side was decoded, and why not on the GPU.
  if (run.accepted.has_reference_decode()) {
    const auto side = [](const v1::DecodeInfo& d) {
      return d.cpu_reason().empty() ? d.device() : fmt::format("{} ({})", d.device(), d.cpu_reason());
    };
    out += fmt::format("decoded: reference on {}, distorted on {}\n", side(run.accepted.reference_decode()),
                       side(run.accepted.distorted_decode()));
  }
  return out;
}

}  // namespace exactq::client
