// exactq: the ExactQ command-line client.
//
//   exactq score REF DIST [--server HOST:PORT] [--metrics psnr,ssim] [--backend auto|cuda|cpu]
//                         [--json FILE] [--csv FILE] [--width W --height H --pixfmt NAME]
//   exactq capabilities [--server HOST:PORT]
//
// REF and DIST are Y4M files, raw planar YUV (with --width/--height/--pixfmt), "-" for
// Y4M on stdin (e.g. `ffmpeg -i x.mp4 -f yuv4mpegpipe - | exactq score ref.y4m -`), or
// encoded files (mkv, mp4, ivf, ts, ...) that go up as bytes for the server to decode
// (a Y4M beside an encoded file goes up as bytes too). --server_paths sends both as
// paths for the server to read under its --source_root directories.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "absl/flags/flag.h"
#include "common/command_line.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "client/decoded_score_client.h"
#include "client/input_file.h"
#include "client/picture_source.h"
#include "client/report.h"
#include "client/score_client.h"
#include "engine/format/pixel_format.h"

ABSL_FLAG(std::string, server, "localhost:50051", "the exactqd address HOST:PORT");
ABSL_FLAG(std::string, metrics, "psnr",
          "comma-separated metrics, each optionally with options: ssim:enable_db=true:clip_db=true");
ABSL_FLAG(std::string, backend, "auto", "auto, cuda or cpu");
ABSL_FLAG(std::string, json, "", "write libvmaf-shaped JSON here ('-' for stdout)");
ABSL_FLAG(std::string, csv, "", "write one CSV row per frame here ('-' for stdout)");
ABSL_FLAG(int, width, 0, "width of raw YUV input");
ABSL_FLAG(int, height, 0, "height of raw YUV input");
ABSL_FLAG(std::string, pixfmt, "", "pixel format of raw YUV input, e.g. yuv420p, yuv420p10le");
ABSL_FLAG(std::string, range, "", "override the colour range: limited or full (default: the file's tag, else limited)");
ABSL_FLAG(std::string, matrix, "", "override the colour matrix: bt709 or bt601 (default bt709)");
ABSL_FLAG(bool, server_paths, false,
          "send REF and DIST as paths for the server to read under its --source_root directories");
ABSL_FLAG(bool, server_path_reference, false,
          "send REF as a path the server reads under its --source_root (e.g. a mezzanine kept there) and DIST "
          "as an upload");
ABSL_FLAG(uint32_t, decode_threads, 0, "decoder threads per side on the server for encoded inputs; 0: its default");
ABSL_FLAG(std::string, job_id, "", "a job id the server logs and echoes (default: the file names)");
ABSL_FLAG(bool, quiet, false, "print no table and no progress");
ABSL_FLAG(int, connect_timeout, 10, "seconds to wait for the server");
ABSL_FLAG(std::string, tls_ca_file, "", "PEM CA that signed the server's certificate (turns on TLS)");
ABSL_FLAG(std::string, tls_cert_file, "", "PEM client certificate for mutual TLS");
ABSL_FLAG(std::string, tls_key_file, "", "PEM key of --tls_cert_file");
ABSL_FLAG(std::string, tls_server_name, "", "name to check in the server's certificate, if not the host");

namespace exactq::client {
namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "exactq: %s\n", message.c_str());
  return 1;
}

// A failed call: the status name first (PERMISSION_DENIED: ...), so scripts can tell
// a refusal from a bad file.
int FailStatus(const absl::Status& status) {
  return Fail(absl::StrCat(absl::StatusCodeToString(status.code()), ": ", status.message()));
}

absl::StatusOr<std::vector<v1::MetricRequest>> ParseMetrics(const std::string& text) {
  std::vector<v1::MetricRequest> metrics;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    std::vector<std::string> parts = absl::StrSplit(item, ':');
    v1::MetricRequest m;
    m.set_name(parts[0]);
    for (size_t i = 1; i < parts.size(); ++i) {
      std::vector<std::string> kv = absl::StrSplit(parts[i], absl::MaxSplits('=', 1));
      if (kv.size() != 2) {
        return absl::InvalidArgumentError("--metrics: option '" + parts[i] + "' is not key=value");
      }
      (*m.mutable_options())[kv[0]] = kv[1];
    }
    metrics.push_back(std::move(m));
  }
  if (metrics.empty()) return absl::InvalidArgumentError("--metrics: no metric given");
  return metrics;
}

bool WriteOutput(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::cout << text;
    return true;
  }
  std::ofstream out(path);
  out << text;
  return static_cast<bool>(out);
}

ConnectionOptions ConnectionFromFlags() {
  ConnectionOptions c;
  c.server = absl::GetFlag(FLAGS_server);
  c.connect_timeout_seconds = absl::GetFlag(FLAGS_connect_timeout);
  c.tls_ca_file = absl::GetFlag(FLAGS_tls_ca_file);
  c.tls_cert_file = absl::GetFlag(FLAGS_tls_cert_file);
  c.tls_key_file = absl::GetFlag(FLAGS_tls_key_file);
  c.tls_server_name = absl::GetFlag(FLAGS_tls_server_name);
  return c;
}

int Capabilities() {
  absl::StatusOr<v1::Capabilities> caps = GetCapabilities(ConnectionFromFlags());
  if (!caps.ok()) return Fail(std::string(caps.status().message()));
  std::cout << caps->DebugString();
  return 0;
}

int Score(const std::string& ref_path, const std::string& dist_path) {
  ScoreOptions options;
  options.connection = ConnectionFromFlags();
  absl::StatusOr<std::vector<v1::MetricRequest>> metrics = ParseMetrics(absl::GetFlag(FLAGS_metrics));
  if (!metrics.ok()) return Fail(std::string(metrics.status().message()));
  options.metrics = *metrics;
  const std::string backend = absl::GetFlag(FLAGS_backend);
  if (backend == "auto") options.backend = v1::BACKEND_AUTO;
  else if (backend == "cuda") options.backend = v1::BACKEND_CUDA;
  else if (backend == "cpu") options.backend = v1::BACKEND_CPU;
  else return Fail("--backend must be auto, cuda or cpu, got " + backend);
  const std::string range = absl::GetFlag(FLAGS_range);
  if (range == "limited") options.range = v1::COLOR_RANGE_LIMITED;
  else if (range == "full") options.range = v1::COLOR_RANGE_FULL;
  else if (!range.empty()) return Fail("--range must be limited or full, got " + range);
  const std::string matrix = absl::GetFlag(FLAGS_matrix);
  if (matrix == "bt709") options.matrix = v1::COLOR_MATRIX_BT709;
  else if (matrix == "bt601") options.matrix = v1::COLOR_MATRIX_BT601;
  else if (!matrix.empty()) return Fail("--matrix must be bt709 or bt601, got " + matrix);
  options.job_id = absl::GetFlag(FLAGS_job_id);
  if (options.job_id.empty()) options.job_id = ref_path + " vs " + dist_path;

  std::optional<FrameGeometry> raw_geometry;
  if (!absl::GetFlag(FLAGS_pixfmt).empty() || absl::GetFlag(FLAGS_width) != 0 ||
      absl::GetFlag(FLAGS_height) != 0) {
    absl::StatusOr<PixelFormat> format = ParsePixelFormat(absl::GetFlag(FLAGS_pixfmt));
    if (!format.ok()) return Fail("--pixfmt: " + std::string(format.status().message()));
    FrameGeometry g;
    g.width = absl::GetFlag(FLAGS_width);
    g.height = absl::GetFlag(FLAGS_height);
    g.format = *format;
    if (absl::Status s = ValidateGeometry(g); !s.ok()) {
      return Fail("--width/--height/--pixfmt: " + std::string(s.message()));
    }
    raw_geometry = g;
  }
  if (ref_path == "-" && dist_path == "-") return Fail("only one of REF and DIST can be stdin");
  // Each input is opened once (a pipe is never read twice) and recognised by its bytes.
  std::unique_ptr<InputFile> ref_input, dist_input;
  const bool server_paths = absl::GetFlag(FLAGS_server_paths);
  const bool reference_on_server = server_paths || absl::GetFlag(FLAGS_server_path_reference);
  if (!reference_on_server) {
    absl::StatusOr<std::unique_ptr<InputFile>> r = InputFile::Open(ref_path, raw_geometry.has_value());
    if (!r.ok()) return FailStatus(r.status());
    ref_input = *std::move(r);
  }
  if (!server_paths) {
    absl::StatusOr<std::unique_ptr<InputFile>> d = InputFile::Open(dist_path, raw_geometry.has_value());
    if (!d.ok()) return FailStatus(d.status());
    dist_input = *std::move(d);
  }
  const bool decoded_by_server = reference_on_server || ref_input->kind() == InputFile::kEncoded ||
                                 dist_input->kind() == InputFile::kEncoded;
  std::unique_ptr<PictureSource> ref, dist;
  if (!decoded_by_server) {
    absl::StatusOr<std::unique_ptr<PictureSource>> r = OpenPictureSource(std::move(ref_input), raw_geometry);
    if (!r.ok()) return FailStatus(r.status());
    absl::StatusOr<std::unique_ptr<PictureSource>> d = OpenPictureSource(std::move(dist_input), raw_geometry);
    if (!d.ok()) return FailStatus(d.status());
    ref = *std::move(r);
    dist = *std::move(d);
  } else if ((ref_input != nullptr && ref_input->kind() == InputFile::kRaw) ||
             (dist_input != nullptr && dist_input->kind() == InputFile::kRaw)) {
    return Fail("raw YUV cannot be scored against an encoded file (the server decodes both sides); convert the raw "
                "input to Y4M, e.g. ffmpeg -f rawvideo -pix_fmt P -s WxH -i in.yuv -f yuv4mpegpipe -strict -1 in.y4m");
  }

  const bool quiet = absl::GetFlag(FLAGS_quiet);
  const bool progress = !quiet && isatty(STDERR_FILENO);
  const std::optional<int64_t> total = ref != nullptr ? ref->frame_count() : std::nullopt;
  const auto start = std::chrono::steady_clock::now();
  auto on_frame = [&](const v1::FrameResult& r) {
    if (!progress) return;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double fps = s > 0 ? (r.frame_index() + 1) / s : 0.0;
    if (total.has_value()) {
      std::fprintf(stderr, "\rframe %llu/%lld  %.1f frames/s ", static_cast<unsigned long long>(r.frame_index() + 1),
                   static_cast<long long>(*total), fps);
    } else {
      std::fprintf(stderr, "\rframe %llu  %.1f frames/s ", static_cast<unsigned long long>(r.frame_index() + 1), fps);
    }
  };
  absl::StatusOr<ScoringRun> run;
  if (decoded_by_server) {
    DecodedInput ref_side, dist_side;
    ref_side.upload = std::move(ref_input);
    ref_side.server_path = ref_path;
    dist_side.upload = std::move(dist_input);
    dist_side.server_path = dist_path;
    run = ScoreDecodedInputs(std::move(ref_side), std::move(dist_side), options, absl::GetFlag(FLAGS_decode_threads),
                             on_frame);
  } else {
    run = ScoreFiles(*ref, *dist, options, on_frame);
  }
  if (progress) std::fprintf(stderr, "\n");
  if (!run.ok()) return FailStatus(run.status());

  const std::string json_path = absl::GetFlag(FLAGS_json);
  const std::string csv_path = absl::GetFlag(FLAGS_csv);
  if (!json_path.empty() && !WriteOutput(json_path, ToJson(*run))) return Fail("cannot write " + json_path);
  if (!csv_path.empty() && !WriteOutput(csv_path, ToCsv(*run))) return Fail("cannot write " + csv_path);
  if (!quiet && json_path != "-" && csv_path != "-") std::cout << ToTable(*run);
  return 0;
}

}  // namespace
}  // namespace exactq::client

int main(int argc, char** argv) {
  const char* usage =
      "the ExactQ client.\n"
      "  exactq score REF DIST [--server HOST:PORT] [--metrics psnr,...] [--backend auto|cuda|cpu]\n"
      "                        [--json FILE] [--csv FILE] [--width W --height H --pixfmt NAME]\n"
      "  exactq capabilities [--server HOST:PORT]\n"
      "REF/DIST: Y4M files, raw YUV (give --width/--height/--pixfmt), '-' for Y4M on stdin, or encoded files\n"
      "(mkv, mp4, ivf, ts, ...) decoded by the server; --server_paths: paths the server reads itself.";
  std::vector<char*> args = exactq::ParseCommandLine(argc, argv, usage, "client/exactq_main.cc");
  if (args.size() >= 2 && std::string(args[1]) == "capabilities" && args.size() == 2) {
    return exactq::client::Capabilities();
  }
  if (args.size() == 4 && std::string(args[1]) == "score") {
    return exactq::client::Score(args[2], args[3]);
  }
  std::fprintf(stderr, "%s\n", absl::ProgramUsageMessage().data());
  return 2;
}
