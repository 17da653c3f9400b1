#include "client/report.h"

#include <cmath>

#include "fmt/format.h"

namespace exactq::client {

namespace {

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", c);
        else out += c;
    }
  }
  return out + "\"";
}

std::string CsvNumber(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return fmt::format("{}", value);
}

const char* BackendLabel(v1::Backend backend) {
  switch (backend) {
    case v1::BACKEND_CUDA: return "cuda";
    case v1::BACKEND_CPU: return "cpu";
    default: return "auto";
  }
}

}  // namespace

std::string JsonNumber(double value) {
  if (!std::isfinite(value)) return "null";
  // fmt's default for double is the shortest round-trip representation.
  return fmt::format("{}", value);
}

std::string ToJson(const ScoringRun& run) {
  std::string out = "{\n";
  const v1::Provenance& p = run.summary.provenance();
  out += fmt::format("  \"version\": {},\n", JsonString(p.server_version()));
  out += fmt::format("  \"job_id\": {},\n", JsonString(run.summary.job_id()));
  out += "  \"metric_versions\": {";
  for (int i = 0; i < p.metrics_size(); ++i) {
    out += fmt::format("{}{}: {}", i ? ", " : "", JsonString(p.metrics(i).name()),
                       p.metrics(i).definition_version());
  }
  out += "},\n";
  const v1::StreamTotals& t = run.summary.totals();
  out += fmt::format("  \"fps\": {},\n", JsonNumber(t.frames_per_second()));
  out += "  \"frames\": [";
  for (size_t f = 0; f < run.frames.size(); ++f) {
    const v1::FrameResult& r = run.frames[f];
    out += fmt::format("{}\n    {{\"frameNum\": {}, \"backend\": \"{}\", \"metrics\": {{", f ? "," : "",
                       r.frame_index(), BackendLabel(r.backend()));
    for (int i = 0; i < r.scores_size(); ++i) {
      out += fmt::format("{}{}: {}", i ? ", " : "", JsonString(r.scores(i).name()),
                         JsonNumber(r.scores(i).value()));
    }
    out += "}}";
  }
  out += run.frames.empty() ? "],\n" : "\n  ],\n";
  out += "  \"pooled_metrics\": {";
  for (int i = 0; i < run.summary.pooled_size(); ++i) {
    const v1::PooledScore& s = run.summary.pooled(i);
    out += fmt::format(
        "{}\n    {}: {{\"min\": {}, \"max\": {}, \"mean\": {}, \"harmonic_mean\": {}, \"p1\": {}, "
        "\"p5\": {}, \"p10\": {}, \"median\": {}}}",
        i ? "," : "", JsonString(s.name()), JsonNumber(s.min()), JsonNumber(s.max()), JsonNumber(s.mean()),
        JsonNumber(s.harmonic_mean()), JsonNumber(s.p1()), JsonNumber(s.p5()), JsonNumber(s.p10()),
        JsonNumber(s.median()));
  }
  out += run.summary.pooled_size() ? "\n  },\n" : "},\n";
  out += fmt::format(
      "  \"totals\": {{\"frames\": {}, \"frames_cuda\": {}, \"frames_cpu\": {}, \"bytes_received\": {}, "
      "\"wall_seconds\": {}}}\n",
      t.frames(), t.frames_cuda(), t.frames_cpu(), t.bytes_received(),
      JsonNumber(static_cast<double>(t.wall_ns()) * 1e-9));
  out += "}\n";
  return out;
}

std::string ToCsv(const ScoringRun& run) {
  std::string out = "frame,backend";
  if (!run.frames.empty()) {
    for (const v1::Score& s : run.frames.front().scores()) out += "," + s.name();
  }
  out += ",compute_ms,total_ms\n";
  for (const v1::FrameResult& r : run.frames) {
    out += fmt::format("{},{}", r.frame_index(), BackendLabel(r.backend()));
    for (const v1::Score& s : r.scores()) out += "," + CsvNumber(s.value());
    out += fmt::format(",{:.3f},{:.3f}\n", r.timing().compute_ns() * 1e-6, r.timing().total_ns() * 1e-6);
  }
  return out;
}

std::string ToTable(const ScoringRun& run) {
  std::string out;
  if (run.frames.empty()) return "no frames\n";
  out += fmt::format("{:>7} {:>7}", "frame", "backend");
  for (const v1::Score& s : run.frames.front().scores()) out += fmt::format(" {:>20}", s.name());
  out += fmt::format(" {:>10}\n", "total_ms");
  for (const v1::FrameResult& r : run.frames) {
    out += fmt::format("{:>7} {:>7}", r.frame_index(), BackendLabel(r.backend()));
    for (const v1::Score& s : r.scores()) out += fmt::format(" {:>20}", CsvNumber(s.value()));
    out += fmt::format(" {:>10.3f}\n", r.timing().total_ns() * 1e-6);
  }
  out += "\npooled over " + std::to_string(run.frames.size()) + " frames:\n";
  out += fmt::format("{:>15} {:>20} {:>20} {:>20} {:>20}\n", "output", "mean", "harmonic_mean", "min", "max");
  for (const v1::PooledScore& s : run.summary.pooled()) {
    out += fmt::format("{:>15} {:>20} {:>20} {:>20} {:>20}\n", s.name(), CsvNumber(s.mean()),
                       CsvNumber(s.harmonic_mean()), CsvNumber(s.min()), CsvNumber(s.max()));
  }
  const v1::StreamTotals& t = run.summary.totals();
  out += fmt::format("\n{} frames ({} cuda, {} cpu) in {:.3f} s, {:.2f} frames/s; {}\n", t.frames(),
                     t.frames_cuda(), t.frames_cpu(), t.wall_ns() * 1e-9, t.frames_per_second(),
                     run.summary.provenance().server_version());
  return out;
}

}  // namespace exactq::client
