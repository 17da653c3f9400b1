// exactq: the ExactQ command-line client.
//
//   exactq score REF DIST [--server HOST:PORT] [--metrics psnr,ssim] [--backend auto|cuda|cpu]
//                         [--json FILE] [--csv FILE] [--xml FILE] [--width W --height H --pixfmt NAME]
//                         [--frames A:B] [--subsample N] [--per-frame] [--precision N]
//   exactq score -r REF -d DIST [-o FILE.json|.csv|.xml]     (libvmaf's spelling)
//   exactq ladder REF R1 R2 ... [score's flags] [--scale bicubic|none]
//   exactq capabilities [--server HOST:PORT]
//   exactq health [--server HOST:PORT]      exit 0 when grpc.health.v1 says SERVING
//   exactq verify [--server HOST:PORT]      the golden pairs through the server; exit 1 on a difference
//
// REF and DIST are Y4M files, named pipes or process substitutions carrying Y4M, raw
// planar YUV (with --width/--height/--pixfmt), "-" for Y4M on stdin (e.g.
// `ffmpeg -i x.mp4 -f yuv4mpegpipe - | exactq score ref.y4m -`), or encoded files (mkv,
// mp4, ivf, ts, ...) that go up as bytes for the server to decode (a Y4M beside an
// encoded file goes up as bytes too). --server_paths sends both as paths for the server
// to read under its --source_root directories.
//
// The console shows progress (frames done of the total when known, frames/s, ETA) and
// then the pooled scores. The files are written as frames arrive: a failure, SIGINT or
// SIGTERM leaves them valid, the JSON and XML marked "complete": false with the error.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "client/decoded_score_client.h"
#include "client/input_file.h"
#include "client/ladder_client.h"
#include "client/ladder_report.h"
#include "client/picture_source.h"
#include "client/report.h"
#include "client/report_files.h"
#include "client/score_client.h"
#include "client/verify.h"
#include "common/command_line.h"
#include "engine/format/pixel_format.h"
#include "engine/metrics/registry.h"

ABSL_FLAG(std::string, server, "localhost:50051", "the exactqd address HOST:PORT");
ABSL_FLAG(std::string, metrics, "psnr",
          "comma-separated metrics, each optionally with options: ssim:enable_db=true:clip_db=true");
ABSL_FLAG(std::string, backend, "auto", "auto, cuda or cpu");
ABSL_FLAG(std::string, json, "", "write libvmaf-shaped JSON here ('-' for stdout), frame by frame");
ABSL_FLAG(std::string, csv, "", "write one CSV row per frame here ('-' for stdout), frame by frame");
ABSL_FLAG(std::string, xml, "", "write libvmaf-shaped XML here ('-' for stdout), frame by frame");
ABSL_FLAG(std::string, output, "",
          "-o: write here, in the format its extension names (.json, .csv, .xml; else XML, as libvmaf)");
ABSL_FLAG(std::string, reference, "", "-r: the reference (instead of the first positional argument)");
ABSL_FLAG(std::string, distorted, "", "-d: the distorted (instead of the second positional argument)");
ABSL_FLAG(std::string, frames, "",
          "score frames A to B-1 of the files only (A:B; either may be left out: 100: or :500)");
ABSL_FLAG(int, subsample, 1, "score every N-th frame (of those --frames selects); answers keep the files' numbers");
ABSL_FLAG(bool, per_frame, false, "print a row per frame on the console before the pooled scores");
ABSL_FLAG(int, precision, 6, "decimals of the console's scores (-1: every bit); the files always keep every bit");
ABSL_FLAG(int, width, 0, "width of raw YUV input");
ABSL_FLAG(int, height, 0, "height of raw YUV input");
ABSL_FLAG(std::string, pixfmt, "", "pixel format of raw YUV input, e.g. yuv420p, yuv420p10le");
ABSL_FLAG(std::string, range, "", "override the colour range: limited or full (default: the file's tag, else limited)");
ABSL_FLAG(std::string, matrix, "", "override the colour matrix: bt709 or bt601 (default bt709)");
ABSL_FLAG(std::string, job_id, "", "a job id the server logs and echoes (default: the file names)");
ABSL_FLAG(bool, quiet, false, "print no summary and no progress");
ABSL_FLAG(int, connect_timeout, 10, "seconds to wait for the server");
ABSL_FLAG(bool, server_paths, false,
          "send REF and DIST as paths for the server to read under its --source_root directories");
ABSL_FLAG(bool, server_path_reference, false,
          "send REF as a path the server reads under its --source_root (e.g. a mezzanine kept there) and DIST "
          "as an upload");
ABSL_FLAG(std::string, scale, "bicubic",
          "ladder: renditions of another size than the reference are scaled to it (bicubic), or refused (none)");
ABSL_FLAG(uint32_t, decode_threads, 0, "decoder threads per side on the server for encoded inputs; 0: its default");
ABSL_FLAG(std::string, decode, "",
          "where the server decodes encoded inputs: auto, gpu or cpu; empty: the server's --decode");
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

// "REF vs DIST" within the server's job_id limit (256 bytes): the paths, else their
// file names, else cut at a character boundary.
std::string DefaultJobId(const std::string& ref, const std::string& dist) {
  constexpr size_t kLimit = 256;
  std::string id = ref + " vs " + dist;
  if (id.size() <= kLimit) return id;
  const auto base = [](const std::string& p) { return p.substr(p.find_last_of('/') + 1); };
  id = base(ref) + " vs " + base(dist);
  if (id.size() <= kLimit) return id;
  size_t cut = kLimit;
  while (cut > 0 && (static_cast<unsigned char>(id[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return id.substr(0, cut);
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

// "A:B", "A:", ":B" -> first frame and (optional) end.
absl::Status ParseFrames(const std::string& text, ScoreOptions* options) {
  if (text.empty()) return absl::OkStatus();
  std::vector<std::string> parts = absl::StrSplit(text, ':');
  uint64_t first = 0, end = 0;
  if (parts.size() != 2 || (!parts[0].empty() && !absl::SimpleAtoi(parts[0], &first)) ||
      (!parts[1].empty() && !absl::SimpleAtoi(parts[1], &end))) {
    return absl::InvalidArgumentError("--frames must be A:B (frames A to B-1; A or B may be left out), got " + text);
  }
  options->first_frame = first;
  if (!parts[1].empty()) {
    if (end <= first) return absl::InvalidArgumentError("--frames " + text + " selects no frame");
    options->end_frame = end;
  }
  return absl::OkStatus();
}

std::string Clock(double seconds) {
  const long long s = static_cast<long long>(seconds + 0.5);
  if (s >= 3600) return absl::StrFormat("%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  return absl::StrFormat("%lld:%02lld", s / 60, s % 60);
}

// Progress on stderr: rewritten in place on a terminal (4 times a second at most),
// a line every 10 s otherwise (logs of batch jobs).
class Progress {
 public:
  Progress(bool enabled, std::optional<uint64_t> total)
      : enabled_(enabled), tty_(isatty(STDERR_FILENO)), total_(total) {}

  void Frame(uint64_t done) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < (tty_ ? std::chrono::milliseconds(250) : std::chrono::milliseconds(10000)) &&
        !(total_.has_value() && done == *total_)) {
      return;
    }
    last_ = now;
    const double s = std::chrono::duration<double>(now - start_).count();
    const double fps = s > 0 ? done / s : 0.0;
    std::string line;
    if (total_.has_value() && *total_ > 0) {
      line = absl::StrFormat("frame %llu/%llu (%.1f%%)  %.1f frames/s", static_cast<unsigned long long>(done),
                             static_cast<unsigned long long>(*total_), 100.0 * done / *total_, fps);
      if (fps > 0 && done < *total_) line += "  ETA " + Clock((*total_ - done) / fps);
    } else {
      line = absl::StrFormat("frame %llu  %.1f frames/s", static_cast<unsigned long long>(done), fps);
    }
    line += "  elapsed " + Clock(s);
    std::fprintf(stderr, tty_ ? "\r%s   " : "%s\n", line.c_str());
    shown_ = true;
  }

  void End() {
    if (enabled_ && tty_ && shown_) std::fprintf(stderr, "\n");
  }

 private:
  bool enabled_;
  bool tty_;
  std::optional<uint64_t> total_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_{};
};

// SIGINT and SIGTERM are blocked in every thread and taken by one that closes the
// files as incomplete and exits 128+signal.
std::atomic<ReportFiles*> g_report{nullptr};

void BlockStopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set] {
    int signal_number = 0;
    sigwait(&set, &signal_number);
    const char* name = signal_number == SIGINT ? "SIGINT" : "SIGTERM";
    if (ReportFiles* report = g_report.load(); report != nullptr) {
      report->Abort(std::string("interrupted by ") + name);
    }
    std::fprintf(stderr, "\nexactq: interrupted by %s; the files hold the frames scored so far\n", name);
    std::_Exit(128 + signal_number);
  }).detach();
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

// The self-check's golden pairs through the server; exit 1 on any difference.
int VerifyServer() {
  const ConnectionOptions connection = ConnectionFromFlags();
  absl::StatusOr<VerifyReport> report = Verify(connection);
  if (!report.ok()) return Fail(std::string(report.status().message()));
  for (const std::string& d : report->differences) std::printf("DIFFERS %s\n", d.c_str());
  for (const auto& [where, outputs] : report->outputs_by_device) {
    std::printf("%s: %d outputs compared\n", where.c_str(), outputs);
  }
  if (!report->ok()) {
    std::printf("verify: %s does NOT return the golden bits (%zu differences)\n", connection.server.c_str(),
                report->differences.size());
    return 1;
  }
  std::printf("verify: %s returns the golden bits (%d answers)\n", connection.server.c_str(), report->answers);
  return 0;
}

// Exit 0 when the server's gRPC health is SERVING (a probe for servers behind TLS).
int Health() {
  absl::StatusOr<int> status = CheckHealth(ConnectionFromFlags());
  if (!status.ok()) return Fail(std::string(status.status().message()));
  static const char* const kNames[] = {"UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN"};
  std::printf("%s\n", *status >= 0 && *status <= 3 ? kNames[*status] : "UNKNOWN");
  return *status == 1 ? 0 : 1;
}

// The flags `score` and `ladder` share: server, metrics, backend, colour, job id.
absl::StatusOr<ScoreOptions> ScoreOptionsFromFlags(const std::string& default_job_id) {
  ScoreOptions options;
  options.connection = ConnectionFromFlags();
  absl::StatusOr<std::vector<v1::MetricRequest>> metrics = ParseMetrics(absl::GetFlag(FLAGS_metrics));
  if (!metrics.ok()) return metrics.status();
  options.metrics = *metrics;
  const std::string backend = absl::GetFlag(FLAGS_backend);
  if (backend == "auto")
    options.backend = v1::BACKEND_AUTO;
  else if (backend == "cuda")
    options.backend = v1::BACKEND_CUDA;
  else if (backend == "cpu")
    options.backend = v1::BACKEND_CPU;
  else
    return absl::InvalidArgumentError("--backend must be auto, cuda or cpu, got " + backend);
  const std::string range = absl::GetFlag(FLAGS_range);
  if (range == "limited")
    options.range = v1::COLOR_RANGE_LIMITED;
  else if (range == "full")
    options.range = v1::COLOR_RANGE_FULL;
  else if (!range.empty())
    return absl::InvalidArgumentError("--range must be limited or full, got " + range);
  const std::string matrix = absl::GetFlag(FLAGS_matrix);
  if (matrix == "bt709")
    options.matrix = v1::COLOR_MATRIX_BT709;
  else if (matrix == "bt601")
    options.matrix = v1::COLOR_MATRIX_BT601;
  else if (!matrix.empty())
    return absl::InvalidArgumentError("--matrix must be bt709 or bt601, got " + matrix);
  options.job_id = absl::GetFlag(FLAGS_job_id);
  if (options.job_id.empty()) options.job_id = default_job_id;
  return options;
}

int Score(const std::string& ref_path, const std::string& dist_path) {
  absl::StatusOr<ScoreOptions> parsed = ScoreOptionsFromFlags(DefaultJobId(ref_path, dist_path));
  if (!parsed.ok()) return Fail(std::string(parsed.status().message()));
  ScoreOptions options = *std::move(parsed);
  if (absl::Status s = ParseFrames(absl::GetFlag(FLAGS_frames), &options); !s.ok()) {
    return Fail(std::string(s.message()));
  }
  if (absl::GetFlag(FLAGS_subsample) < 1) return Fail("--subsample must be 1 or more");
  options.subsample = static_cast<uint32_t>(absl::GetFlag(FLAGS_subsample));

  std::optional<FrameGeometry> raw_geometry;
  if (!absl::GetFlag(FLAGS_pixfmt).empty() || absl::GetFlag(FLAGS_width) != 0 || absl::GetFlag(FLAGS_height) != 0) {
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
  const bool decoded_by_server =
      reference_on_server || ref_input->kind() == InputFile::kEncoded || dist_input->kind() == InputFile::kEncoded;
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
    return Fail(
        "raw YUV cannot be scored against an encoded file (the server decodes both sides); convert the raw "
        "input to Y4M, e.g. ffmpeg -f rawvideo -pix_fmt P -s WxH -i in.yuv -f yuv4mpegpipe -strict -1 in.y4m");
  } else if (options.first_frame != 0 || options.end_frame.has_value() || options.subsample != 1) {
    return Fail("--frames and --subsample apply to Y4M and raw inputs; the server decodes encoded inputs whole");
  }

  ReportPaths paths{absl::GetFlag(FLAGS_json), absl::GetFlag(FLAGS_csv), absl::GetFlag(FLAGS_xml)};
  if (const std::string o = absl::GetFlag(FLAGS_output); !o.empty()) {
    std::string* slot = absl::EndsWith(o, ".json") ? &paths.json : absl::EndsWith(o, ".csv") ? &paths.csv : &paths.xml;
    if (!slot->empty()) return Fail("-o " + o + " names a format another flag already writes");
    *slot = o;
  }
  const int to_stdout = (paths.json == "-") + (paths.csv == "-") + (paths.xml == "-");
  if (to_stdout > 1) return Fail("only one of --json, --csv and --xml can be '-' (stdout)");
  // Decoded inputs: the geometry is the server's to find (0 x 0 in the files' header).
  const FrameGeometry geometry = ref != nullptr ? ref->geometry() : FrameGeometry{};
  absl::StatusOr<std::unique_ptr<ReportFiles>> opened = ReportFiles::Open(
      paths, options.job_id, FrameSize{static_cast<uint32_t>(geometry.width), static_cast<uint32_t>(geometry.height)});
  if (!opened.ok()) return Fail(std::string(opened.status().message()));
  // Kept until the process ends, so that the signal thread never sees it destroyed
  // (after Finish or Abort, a late Abort does nothing).
  static std::unique_ptr<ReportFiles> kept;
  kept = std::move(*opened);
  ReportFiles* report = kept.get();
  g_report.store(report);

  // A file on stdout keeps the console quiet there; the summary then goes to stderr.
  const bool quiet = absl::GetFlag(FLAGS_quiet);
  std::optional<uint64_t> total;
  if (std::optional<int64_t> n = ref != nullptr ? ref->frame_count() : std::nullopt; n.has_value()) {
    total = SelectedFrames(static_cast<uint64_t>(*n), options);
  }
  Progress progress(!quiet, total);
  options.on_accepted = [&](const v1::StreamAccepted& accepted) { report->Accepted(accepted); };
  uint64_t done = 0;
  const auto on_frame = [&](const v1::FrameResult& r) {
    report->Frame(r);
    progress.Frame(++done);
  };
  absl::StatusOr<ScoringRun> run;
  if (decoded_by_server) {
    DecodedInput ref_side, dist_side;
    ref_side.upload = std::move(ref_input);
    ref_side.server_path = ref_path;
    dist_side.upload = std::move(dist_input);
    dist_side.server_path = dist_path;
    run = ScoreDecodedInputs(std::move(ref_side), std::move(dist_side), options, absl::GetFlag(FLAGS_decode_threads),
                             absl::GetFlag(FLAGS_decode), on_frame);
  } else {
    run = ScoreFiles(*ref, *dist, options, on_frame);
  }
  progress.End();
  if (!run.ok()) {
    report->Abort(std::string(run.status().message()));
    if (done > 0 && !(paths.json.empty() && paths.csv.empty() && paths.xml.empty())) {
      std::fprintf(stderr, "exactq: %llu frames scored before the error are in the files\n",
                   static_cast<unsigned long long>(done));
    }
    return FailStatus(run.status());
  }
  const bool written = report->Finish(*run);
  if (!written) return Fail("cannot write the output files (disk full or closed pipe?)");
  if (!quiet) {
    TableOptions table;
    table.precision = absl::GetFlag(FLAGS_precision);
    table.per_frame = absl::GetFlag(FLAGS_per_frame);
    std::fputs(ToTable(*run, table).c_str(), to_stdout ? stderr : stdout);
  }
  return 0;
}

// Writes `text` to `path` ('-': stdout); false when it cannot.
bool WriteWhole(const std::string& path, const std::string& text) {
  if (path == "-") return std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  return static_cast<bool>(out);
}

// exactq ladder REF R1 R2 ...: every rendition against the reference in one call.
int Ladder(const std::vector<std::string>& paths) {
  if (paths.size() < 2)
    return Fail("ladder: give the reference and at least one rendition: exactq ladder REF R1 R2 ...");
  const std::string& ref_path = paths.front();
  absl::StatusOr<ScoreOptions> parsed =
      ScoreOptionsFromFlags(DefaultJobId(ref_path, absl::StrCat(paths.size() - 1, " renditions")));
  if (!parsed.ok()) return Fail(std::string(parsed.status().message()));
  if (!absl::GetFlag(FLAGS_frames).empty() || absl::GetFlag(FLAGS_subsample) != 1) {
    return Fail("--frames and --subsample apply to `score` of Y4M and raw inputs; a ladder's files are decoded whole");
  }
  if (!absl::GetFlag(FLAGS_pixfmt).empty() || absl::GetFlag(FLAGS_width) != 0 || absl::GetFlag(FLAGS_height) != 0) {
    return Fail("a ladder takes Y4M or encoded files (raw YUV has no size of its own); convert raw input to Y4M");
  }
  if (!absl::GetFlag(FLAGS_xml).empty() || !absl::GetFlag(FLAGS_output).empty()) {
    return Fail("a ladder writes --json and --csv (--xml and -o are for `score`)");
  }
  const std::string json_path = absl::GetFlag(FLAGS_json), csv_path = absl::GetFlag(FLAGS_csv);
  if (json_path == "-" && csv_path == "-") return Fail("only one of --json and --csv can be '-' (stdout)");
  LadderOptions options;
  options.score = *std::move(parsed);
  options.scale = absl::GetFlag(FLAGS_scale);
  if (options.scale != "bicubic" && options.scale != "none") {
    return Fail("--scale must be bicubic or none, got " + options.scale);
  }
  options.decode_threads = absl::GetFlag(FLAGS_decode_threads);
  options.decode = absl::GetFlag(FLAGS_decode);

  // Each file goes up as bytes (Y4M too), or as a path the server reads.
  const bool server_paths = absl::GetFlag(FLAGS_server_paths);
  std::vector<LadderInput> inputs;
  for (size_t i = 0; i < paths.size(); ++i) {
    LadderInput in;
    in.name = paths[i];
    const bool on_server = server_paths || (i == 0 && absl::GetFlag(FLAGS_server_path_reference));
    if (on_server) {
      in.input.server_path = paths[i];
    } else {
      if (paths[i] == "-") return Fail("a ladder's files cannot come from stdin");
      absl::StatusOr<std::unique_ptr<InputFile>> file = InputFile::Open(paths[i], /*raw_geometry_given=*/false);
      if (!file.ok()) return FailStatus(file.status());
      in.input.upload = *std::move(file);
    }
    inputs.push_back(std::move(in));
  }
  LadderInput reference = std::move(inputs.front());
  inputs.erase(inputs.begin());

  const bool quiet = absl::GetFlag(FLAGS_quiet);
  Progress progress(!quiet, std::nullopt);
  uint64_t done = 0;
  absl::StatusOr<LadderRun> run = ScoreLadder(std::move(reference), std::move(inputs), options,
                                              [&](uint32_t, const v1::FrameResult&) { progress.Frame(++done); });
  progress.End();
  if (!run.ok()) return FailStatus(run.status());
  if (!json_path.empty() && !WriteWhole(json_path, LadderToJson(*run))) return Fail("cannot write " + json_path);
  if (!csv_path.empty() && !WriteWhole(csv_path, LadderToCsv(*run))) return Fail("cannot write " + csv_path);
  if (!quiet) {
    const bool to_stdout = json_path == "-" || csv_path == "-";
    std::fputs(LadderToTable(*run, absl::GetFlag(FLAGS_precision)).c_str(), to_stdout ? stderr : stdout);
  }
  int failed = 0;
  for (const RenditionRun& r : run->renditions) failed += r.ok() ? 0 : 1;
  if (failed > 0) return Fail(absl::StrCat(failed, " of ", run->renditions.size(), " renditions ended with an error"));
  return 0;
}

}  // namespace
}  // namespace exactq::client

int main(int argc, char** argv) {
  exactq::CommandLine command_line;
  command_line.usage =
      "the ExactQ client.\n"
      "  exactq score REF DIST [--server HOST:PORT] [--metrics psnr,...] [--backend auto|cuda|cpu]\n"
      "                        [--json FILE] [--csv FILE] [--xml FILE] [--width W --height H --pixfmt NAME]\n"
      "                        [--frames A:B] [--subsample N] [--per-frame] [--precision N]\n"
      "  exactq score -r REF -d DIST [-o FILE.json|.csv|.xml]       (libvmaf's spelling)\n"
      "  exactq ladder REF R1 R2 ... [--metrics ...] [--json FILE] [--csv FILE] [--scale bicubic|none]\n"
      "                        (every rendition against REF in one call, the reference decoded once;\n"
      "                         renditions of another size scaled to REF's by the exact scaler)\n"
      "  exactq capabilities [--server HOST:PORT]\n"
      "  exactq health [--server HOST:PORT]        (exit 0 when the server's gRPC health is SERVING)\n"
      "  exactq verify [--server HOST:PORT]        (the golden pairs through the server: exit 1 on any\n"
      "                                             bit that differs from the committed golden values)\n"
      "REF/DIST: Y4M files, named pipes or <(process substitution) carrying Y4M, raw YUV\n"
      "(give --width/--height/--pixfmt), '-' for Y4M on stdin, or encoded files (mkv, mp4, ivf,\n"
      "ts, ...) decoded by the server; --server_paths: paths the server reads itself. Files are written as frames\n"
      "arrive; after an error, SIGINT or SIGTERM they hold what was scored (\"complete\": false).";
  command_line.main_file = "client/exactq_main.cc";
  command_line.version = "exactq 0.1.0";
  command_line.help_epilogue = exactq::MetricsHelp();
  command_line.aliases = {{"-r", "--reference"}, {"-d", "--distorted"}, {"-o", "--output"}};
  std::vector<char*> args = exactq::ParseCommandLine(argc, argv, command_line);
  exactq::client::BlockStopSignals();
  std::vector<std::string> positional(args.begin() + 1, args.end());
  std::string reference = absl::GetFlag(FLAGS_reference);
  std::string distorted = absl::GetFlag(FLAGS_distorted);
  if (positional.size() == 1 && positional[0] == "capabilities") {
    return exactq::client::Capabilities();
  }
  if (positional.size() == 1 && positional[0] == "health") {
    return exactq::client::Health();
  }
  if (positional.size() == 1 && positional[0] == "verify") {
    return exactq::client::VerifyServer();
  }
  if (!positional.empty() && positional[0] == "ladder") {
    return exactq::client::Ladder(std::vector<std::string>(positional.begin() + 1, positional.end()));
  }
  // libvmaf's spelling needs no subcommand: exactq -r REF -d DIST.
  const bool score = !positional.empty() && positional[0] == "score";
  if (score) positional.erase(positional.begin());
  if (score || !reference.empty()) {
    if (reference.empty() && !positional.empty()) {
      reference = positional.front();
      positional.erase(positional.begin());
    }
    if (distorted.empty() && !positional.empty()) {
      distorted = positional.front();
      positional.erase(positional.begin());
    }
    if (!reference.empty() && !distorted.empty() && positional.empty()) {
      return exactq::client::Score(reference, distorted);
    }
  }
  std::fprintf(stderr, "exactq: %s\n", absl::ProgramUsageMessage().data());
  return 2;
}
