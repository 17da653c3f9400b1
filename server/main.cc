// exactqd: the ExactQ scoring server. Flags are listed by `exactqd --help`; each can
// also be set by an environment variable EXACTQ_<FLAG_IN_UPPER_CASE> (a flag wins).
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <malloc.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/command_line.h"
#include "engine/metrics/registry.h"
#include "engine/runtime/global_device_pool.h"
#include "engine/runtime/gpu_scorer.h"
#include "engine/runtime/pinned_frame_memory.h"
#include "engine/runtime/runtime_config.h"
#include "server/connection_limits.h"
#include "server/gpu_health.h"
#include "server/logging.h"
#include "server/metrics_exposer.h"
#include "server/scorer_service.h"
#include "server/server_config.h"
#include "server/server_metrics.h"
#include "server/startup_self_check.h"
#include "server/version.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::string, listen, "0.0.0.0:50051", "gRPC address HOST:PORT (port 0 picks a free port)");
ABSL_FLAG(std::string, metrics_listen, "0.0.0.0:9464",
          "HTTP address for Prometheus /metrics, IP:PORT (port 0 picks a free port)");
ABSL_FLAG(std::string, port_file, "", "write 'grpc=PORT\\nmetrics=PORT\\n' here once both ports are bound");
ABSL_FLAG(bool, reflection, true, "serve gRPC server reflection (grpcurl); off in locked-down production");
ABSL_FLAG(int, grace_period_seconds, 30, "on SIGTERM/SIGINT, time given to calls in flight before exit");
ABSL_FLAG(int, drain_notice_seconds, 5,
          "on SIGTERM/SIGINT, time health reports NOT_SERVING and new calls get UNAVAILABLE before the "
          "listener closes (load balancers notice and move work); counts towards the grace period");
ABSL_FLAG(std::string, log_format, "text", "log format: text or json (one object per line)");
ABSL_FLAG(std::string, log_level, "info", "log level: trace, debug, info, warn, error");
ABSL_FLAG(uint64_t, max_chunk_bytes, 1 << 20, "largest FrameChunk.data accepted, bytes");
ABSL_FLAG(uint64_t, max_unary_picture_bytes, 16 << 20, "largest picture accepted by ScorePair, bytes");
ABSL_FLAG(uint32_t, max_width, 8192, "largest frame width accepted");
ABSL_FLAG(uint32_t, max_height, 4320, "largest frame height accepted");
ABSL_FLAG(uint32_t, max_streams, 64, "concurrent streams and unary calls, all peers");
ABSL_FLAG(uint32_t, max_streams_per_peer, 16, "concurrent streams and unary calls per peer host");
ABSL_FLAG(uint64_t, max_frames_per_stream, 0, "frames one stream may send; 0 = unlimited");
ABSL_FLAG(uint32_t, max_renditions, 16, "renditions in one ScoreLadder call");
ABSL_FLAG(uint32_t, frames_in_flight, 2,
          "frames of one stream scored at once (each with its own GPU buffers); answers stay in frame "
          "order; 1 = one frame at a time");
ABSL_FLAG(uint64_t, max_message_bytes, 4 << 20,
          "largest gRPC message received, bytes; raised to fit two pictures of --max_unary_picture_bytes "
          "and their header");
ABSL_FLAG(uint64_t, max_buffered_bytes, 4ull << 30,
          "host bytes held for frames in flight across all calls; a call over it gets RESOURCE_EXHAUSTED");
ABSL_FLAG(uint32_t, stream_idle_seconds, 30,
          "a stream whose client sends nothing for this long while the server waits to read from it ends "
          "with DEADLINE_EXCEEDED (time spent scoring or holding the client back does not count); 0 = never");
ABSL_FLAG(uint32_t, max_streams_per_connection, 32,
          "concurrent calls on one HTTP/2 connection (SETTINGS_MAX_CONCURRENT_STREAMS)");
ABSL_FLAG(uint32_t, max_server_threads, 0,
          "threads the gRPC server may run (a resource quota; calls beyond get RESOURCE_EXHAUSTED); "
          "0 = 2x --max_streams + 32");
ABSL_FLAG(int, keepalive_time_seconds, 60, "ping idle connections this often");
ABSL_FLAG(int, keepalive_timeout_seconds, 20, "close a connection whose ping is not answered in this time");
ABSL_FLAG(int, max_connection_age_seconds, 1800,
          "send GOAWAY to connections older than this, so clients reconnect and spread over replicas");
ABSL_FLAG(int, max_connection_age_grace_seconds, 0,
          "time calls get to finish after a GOAWAY for age; 0 = no limit (a long stream is never cut)");
ABSL_FLAG(uint32_t, max_cpu_streams, 0,
          "streams scored on the CPU at once; more get UNAVAILABLE with a retry hint; 0 = 2x hardware threads");
ABSL_FLAG(uint64_t, max_device_bytes, 0,
          "device memory admitted per GPU for the streams placed on it (estimated per stream from its "
          "geometry and metrics); 0 = 90% of the device's memory");
ABSL_FLAG(uint64_t, pinned_frame_bytes, uint64_t{2} << 30,
          "page-locked host memory for the pictures of GPU streams, kept for reuse, so the GPU copies "
          "them without a second host copy; beyond it pictures use ordinary memory; 0 = off");
ABSL_FLAG(std::string, gpu_wait, "block",
          "how threads wait for GPU work: block (sleep until the device signals), yield, or spin (a "
          "core polls per waiting thread: least latency, but many streams' waits take the cores "
          "decoding and reading need)");
ABSL_FLAG(std::string, gpus, "all", "GPUs to use, by index after CUDA_VISIBLE_DEVICES: all, none, or e.g. 0,2");
ABSL_FLAG(int, gpu_retry_seconds, 30,
          "a GPU that failed (launch or copy error) takes no new streams for this long, doubled for each "
          "failure in a row; a poisoned context (illegal address, ...) keeps it out for good");
ABSL_FLAG(std::string, fault_injection, "",
          "for tests only: gpu_fail_after=N (GPU frames fail after N), gpu_lost_after=N (then the device's "
          "context is poisoned), gpu_alloc_fail; default off");
ABSL_FLAG(bool, self_check, true,
          "at start, before health turns SERVING: score the golden pairs on the CPU and on every "
          "GPU and compare each output's bits with the committed golden values; a GPU that "
          "differs is taken out of the pool (logged), a CPU that differs stops the server");
ABSL_FLAG(std::vector<std::string>, source_root, {},
          "directory under which clients may name files for the server to read (repeatable, or comma-separated); "
          "none: every server path is refused with PERMISSION_DENIED");
ABSL_FLAG(std::string, spool_dir, "",
          "where uploaded encoded files are spooled (unlinked at once); empty: $TMPDIR or /tmp");
ABSL_FLAG(uint64_t, max_upload_bytes, uint64_t{16} << 30, "largest encoded file one stream side may upload, bytes");
ABSL_FLAG(uint32_t, decode_threads, 4, "decoder threads per decoded side when the client asks for none");
ABSL_FLAG(uint32_t, max_decode_threads, 16, "decoder threads per decoded side, whatever the client asks");
ABSL_FLAG(std::string, decode, "auto",
          "where encoded sources are decoded when the client names none: auto (the GPU's video decoder when "
          "it takes the stream, else the CPU, saying why), cpu or gpu");
ABSL_FLAG(uint32_t, max_decode_threads_total, 0,
          "decoder threads across all decoded streams; a stream gets what is left, at least one per side whose codec "
          "threads (a Y4M side takes none); "
          "0 = twice the hardware threads");
ABSL_FLAG(std::string, tls_cert_file, "", "PEM server certificate chain; with --tls_key_file turns on TLS");
ABSL_FLAG(std::string, tls_key_file, "", "PEM private key of --tls_cert_file");
ABSL_FLAG(std::string, tls_client_ca_file, "",
          "PEM CA bundle; when given, clients must present a certificate it signed (mutual TLS)");

namespace exactq::server {
namespace {

volatile sig_atomic_t g_stop_signal = 0;
void OnSignal(int signal) { g_stop_signal = signal; }

// Environment variables as defaults for flags the command line did not set.
void ApplyEnvironmentDefaults() {
  for (absl::CommandLineFlag* flag : {absl::FindCommandLineFlag("listen"),
                                      absl::FindCommandLineFlag("metrics_listen"),
                                      absl::FindCommandLineFlag("port_file"),
                                      absl::FindCommandLineFlag("reflection"),
                                      absl::FindCommandLineFlag("grace_period_seconds"),
                                      absl::FindCommandLineFlag("drain_notice_seconds"),
                                      absl::FindCommandLineFlag("log_format"),
                                      absl::FindCommandLineFlag("log_level"),
                                      absl::FindCommandLineFlag("max_chunk_bytes"),
                                      absl::FindCommandLineFlag("max_unary_picture_bytes"),
                                      absl::FindCommandLineFlag("max_width"),
                                      absl::FindCommandLineFlag("max_height"),
                                      absl::FindCommandLineFlag("max_streams"),
                                      absl::FindCommandLineFlag("max_streams_per_peer"),
                                      absl::FindCommandLineFlag("max_frames_per_stream"),
                                      absl::FindCommandLineFlag("max_renditions"),
                                      absl::FindCommandLineFlag("frames_in_flight"),
                                      absl::FindCommandLineFlag("max_message_bytes"),
                                      absl::FindCommandLineFlag("max_buffered_bytes"),
                                      absl::FindCommandLineFlag("keepalive_time_seconds"),
                                      absl::FindCommandLineFlag("keepalive_timeout_seconds"),
                                      absl::FindCommandLineFlag("max_connection_age_seconds"),
                                      absl::FindCommandLineFlag("max_connection_age_grace_seconds"),
                                      absl::FindCommandLineFlag("tls_cert_file"),
                                      absl::FindCommandLineFlag("tls_key_file"),
                                      absl::FindCommandLineFlag("tls_client_ca_file"),
                                      absl::FindCommandLineFlag("gpus"),
                                      absl::FindCommandLineFlag("gpu_wait"),
                                      absl::FindCommandLineFlag("fault_injection"),
                                      absl::FindCommandLineFlag("max_device_bytes"),
                                      absl::FindCommandLineFlag("max_cpu_streams"),
                                      absl::FindCommandLineFlag("pinned_frame_bytes"),
                                      absl::FindCommandLineFlag("source_root"),
                                      absl::FindCommandLineFlag("spool_dir"),
                                      absl::FindCommandLineFlag("max_upload_bytes"),
                                      absl::FindCommandLineFlag("decode_threads"),
                                      absl::FindCommandLineFlag("max_decode_threads"),
                                      absl::FindCommandLineFlag("max_decode_threads_total"),
                                      absl::FindCommandLineFlag("decode"),
                                      absl::FindCommandLineFlag("gpu_retry_seconds"),
                                      absl::FindCommandLineFlag("stream_idle_seconds"),
                                      absl::FindCommandLineFlag("max_streams_per_connection"),
                                      absl::FindCommandLineFlag("max_server_threads")}) {
    if (flag == nullptr) continue;
    const std::string env = absl::StrCat("EXACTQ_", absl::AsciiStrToUpper(flag->Name()));
    const char* value = std::getenv(env.c_str());
    if (value == nullptr || flag->CurrentValue() != flag->DefaultValue()) continue;
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      spdlog::error("{}={}: {}", env, value, error);
      std::exit(2);
    }
  }
}

std::string ReadFileOrEmpty(const std::string& path, bool* ok) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  *ok = static_cast<bool>(in) || in.eof();
  return text.str();
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(const ServerConfig& config) {
  if (config.tls_cert_file.empty() && config.tls_key_file.empty()) {
    if (!config.tls_client_ca_file.empty()) {
      return absl::InvalidArgumentError("--tls_client_ca_file needs --tls_cert_file and --tls_key_file");
    }
    return grpc::InsecureServerCredentials();
  }
  if (config.tls_cert_file.empty() || config.tls_key_file.empty()) {
    return absl::InvalidArgumentError("TLS needs both --tls_cert_file and --tls_key_file");
  }
  grpc::SslServerCredentialsOptions options;
  bool ok = false;
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  pair.cert_chain = ReadFileOrEmpty(config.tls_cert_file, &ok);
  if (!ok || pair.cert_chain.empty())
    return absl::InvalidArgumentError("cannot read --tls_cert_file " + config.tls_cert_file);
  pair.private_key = ReadFileOrEmpty(config.tls_key_file, &ok);
  if (!ok || pair.private_key.empty())
    return absl::InvalidArgumentError("cannot read --tls_key_file " + config.tls_key_file);
  options.pem_key_cert_pairs.push_back(pair);
  if (!config.tls_client_ca_file.empty()) {
    options.pem_root_certs = ReadFileOrEmpty(config.tls_client_ca_file, &ok);
    if (!ok || options.pem_root_certs.empty()) {
      return absl::InvalidArgumentError("cannot read --tls_client_ca_file " + config.tls_client_ca_file);
    }
    options.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(options);
}

ServerConfig ConfigFromFlags() {
  ServerConfig config;
  config.listen = absl::GetFlag(FLAGS_listen);
  config.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  config.port_file = absl::GetFlag(FLAGS_port_file);
  config.reflection = absl::GetFlag(FLAGS_reflection);
  config.grace_period_seconds = absl::GetFlag(FLAGS_grace_period_seconds);
  ServerLimits& l = config.limits;
  l.max_chunk_bytes = absl::GetFlag(FLAGS_max_chunk_bytes);
  l.max_unary_picture_bytes = absl::GetFlag(FLAGS_max_unary_picture_bytes);
  l.max_width = absl::GetFlag(FLAGS_max_width);
  l.max_height = absl::GetFlag(FLAGS_max_height);
  l.max_streams = absl::GetFlag(FLAGS_max_streams);
  l.max_streams_per_peer = absl::GetFlag(FLAGS_max_streams_per_peer);
  l.max_frames_per_stream = absl::GetFlag(FLAGS_max_frames_per_stream);
  l.max_renditions = absl::GetFlag(FLAGS_max_renditions);
  l.max_frames_in_flight_per_stream = absl::GetFlag(FLAGS_frames_in_flight);
  l.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  l.max_buffered_bytes = absl::GetFlag(FLAGS_max_buffered_bytes);
  l.max_cpu_streams = absl::GetFlag(FLAGS_max_cpu_streams);
  l.stream_idle_seconds = absl::GetFlag(FLAGS_stream_idle_seconds);
  l.max_streams_per_connection = absl::GetFlag(FLAGS_max_streams_per_connection);
  l.max_server_threads = absl::GetFlag(FLAGS_max_server_threads);
  if (l.max_cpu_streams == 0) l.max_cpu_streams = 2 * std::max(1u, std::thread::hardware_concurrency());
  config.keepalive_time_seconds = absl::GetFlag(FLAGS_keepalive_time_seconds);
  config.keepalive_timeout_seconds = absl::GetFlag(FLAGS_keepalive_timeout_seconds);
  config.max_connection_age_seconds = absl::GetFlag(FLAGS_max_connection_age_seconds);
  config.max_connection_age_grace_seconds = absl::GetFlag(FLAGS_max_connection_age_grace_seconds);
  config.tls_cert_file = absl::GetFlag(FLAGS_tls_cert_file);
  config.tls_key_file = absl::GetFlag(FLAGS_tls_key_file);
  config.tls_client_ca_file = absl::GetFlag(FLAGS_tls_client_ca_file);
  config.decode.spool_dir = absl::GetFlag(FLAGS_spool_dir);
  config.decode.max_upload_bytes = absl::GetFlag(FLAGS_max_upload_bytes);
  config.decode.decode_threads = absl::GetFlag(FLAGS_decode_threads);
  config.decode.max_decode_threads = absl::GetFlag(FLAGS_max_decode_threads);
  config.decode.max_decode_threads_total = absl::GetFlag(FLAGS_max_decode_threads_total);
  // main() refuses a --decode it cannot parse before it gets here.
  config.decode.device = ParseDecodeDevice(absl::GetFlag(FLAGS_decode)).value_or(DecodeDevice::kAuto);
  // Decoding follows --gpus: none keeps it off the GPUs, a list puts it on the first.
  if (absl::StatusOr<std::optional<std::vector<int>>> gpus = ParseGpuList(absl::GetFlag(FLAGS_gpus)); gpus.ok()) {
    if (gpus->has_value() && (*gpus)->empty()) config.decode.gpus_off = true;
    if (gpus->has_value() && !(*gpus)->empty()) config.decode.gpu = (*gpus)->front();
  }
  if (config.decode.max_decode_threads_total == 0) {
    config.decode.max_decode_threads_total = 2 * std::max(1u, std::thread::hardware_concurrency());
  }
  return config;
}

// --source_root may be given more than once (absl keeps only the last occurrence).
absl::Status ConfigureSourceRoots(int argc, char** argv, ServerConfig* config) {
  std::vector<std::string> roots = RepeatedFlagValues(argc, argv, "source_root");
  if (roots.empty()) roots = absl::GetFlag(FLAGS_source_root);  // EXACTQ_SOURCE_ROOT
  absl::StatusOr<SourceRoots> resolved = SourceRoots::Create(roots);
  if (!resolved.ok()) return resolved.status();
  config->decode.source_roots = *std::move(resolved);
  if (config->decode.source_roots.empty()) {
    spdlog::info("no --source_root: server paths are refused");
  } else {
    spdlog::info("server paths are read under {}", absl::StrJoin(config->decode.source_roots.roots(), ", "));
  }
  return absl::OkStatus();
}

absl::Status ConfigureRuntime() {
  RuntimeConfig runtime;
  absl::StatusOr<std::optional<std::vector<int>>> gpus = ParseGpuList(absl::GetFlag(FLAGS_gpus));
  if (!gpus.ok()) return gpus.status();
  runtime.gpus = *gpus;
  absl::StatusOr<FaultInjection> faults = ParseFaultInjection(absl::GetFlag(FLAGS_fault_injection));
  if (!faults.ok()) return faults.status();
  runtime.faults = *faults;
  runtime.max_device_bytes = absl::GetFlag(FLAGS_max_device_bytes);
  runtime.gpu_retry_seconds = absl::GetFlag(FLAGS_gpu_retry_seconds);
  runtime.pinned_frame_bytes = absl::GetFlag(FLAGS_pinned_frame_bytes);
  absl::StatusOr<GpuWait> wait = ParseGpuWait(absl::GetFlag(FLAGS_gpu_wait));
  if (!wait.ok()) return wait.status();
  if (runtime.gpu_retry_seconds < 0) return absl::InvalidArgumentError("--gpu_retry_seconds must be >= 0");
  if (const uint32_t k = absl::GetFlag(FLAGS_frames_in_flight); k < 1 || k > 64) {
    return absl::InvalidArgumentError(absl::StrCat("--frames_in_flight must be 1 to 64, got ", k));
  }
  SetRuntimeConfig(runtime);
  if (absl::Status s = ApplyGpuWait(*wait); !s.ok()) {
    // How threads wait changes their cost, never a score: serve anyway.
    spdlog::warn("--gpu_wait={}: {}; threads wait as CUDA chooses", GpuWaitName(*wait), std::string(s.message()));
  }
  // The pool is built now, from this configuration, before any stream asks for a GPU.
  const DevicePool& pool = GlobalDevicePool();
  for (const DeviceHealth& d : pool.Snapshot()) {
    spdlog::info("GPU {}: {} (compute {}, {} MiB)", d.device.index, d.device.name, d.device.compute_capability,
                 d.device.memory_bytes >> 20);
  }
  if (pool.configured() == 0) spdlog::warn("{}: frames go to the CPU", pool.UnavailableReason());
  if (faults->fail_gpu_after_frames >= 0 || faults->lose_gpu_after_frames >= 0 || faults->fail_gpu_allocations) {
    spdlog::warn("fault injection on: {}", absl::GetFlag(FLAGS_fault_injection));
  }
  return absl::OkStatus();
}

int Serve(const ServerConfig& config) {
  if (absl::Status s = ConfigureRuntime(); !s.ok()) {
    spdlog::error("{}", std::string(s.message()));
    return 2;
  }
  if (absl::GetFlag(FLAGS_self_check) && !StartupSelfCheck(&GlobalDevicePool())) return 3;
  std::vector<std::string> metric_names;
  for (const MetricInfo& info : ListMetrics()) metric_names.push_back(info.name);
  ServerMetrics metrics(metric_names, BuildInfo{kVersionNumber, kRevision, kCudaCompiled});

  // Device memory is read when Prometheus scrapes, so the gauge is never stale.
  const absl::StatusOr<std::vector<GpuDevice>> devices = ListGpuDevices();
  // Before the /metrics server, so that it outlives every scrape.
  GpuHealthReporter gpu_health(&GlobalDevicePool(), &metrics);
  auto before_scrape = [&metrics, &devices, &gpu_health] {
    gpu_health.Poll();
    if (devices.ok()) {
      for (const GpuDevice& d : *devices) {
        absl::StatusOr<uint64_t> used = GpuMemoryInUse(d.index);
        if (used.ok()) metrics.device_memory_used.At({absl::StrCat("cuda:", d.index)}).Set(static_cast<double>(*used));
      }
    }
    const PinnedFrameStats pinned = PinnedFrameMemoryStats();
    metrics.pinned_frame_bytes.At({}).Set(static_cast<double>(pinned.pinned_bytes));
    metrics.SyncCounter(metrics.pinned_frame_fallbacks.At({}), static_cast<double>(pinned.fallbacks));
  };
  absl::StatusOr<std::unique_ptr<MetricsExposer>> http =
      MetricsExposer::Start(config.metrics_listen, metrics.registry, before_scrape);
  if (!http.ok()) {
    spdlog::error("{}", std::string(http.status().message()));
    return 1;
  }

  grpc::EnableDefaultHealthCheckService(true);
  if (config.reflection) grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  ScorerService service(config, &metrics);
  grpc::ServerBuilder builder;
  int grpc_port = 0;
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials = MakeServerCredentials(config);
  if (!credentials.ok()) {
    spdlog::error("{}", std::string(credentials.status().message()));
    return 2;
  }
  builder.AddListeningPort(config.listen, *credentials, &grpc_port);
  ApplyConnectionLimits(config, &builder);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || grpc_port == 0) {
    spdlog::error("cannot listen on {} (address in use or invalid)", config.listen);
    return 1;
  }
  server->GetHealthCheckService()->SetServingStatus(true);
  gpu_health.SetHealthService(server->GetHealthCheckService());
  spdlog::info(
      "{} serving gRPC on port {} ({}{}), /metrics on port {} ({})", kServerVersion, grpc_port, config.listen,
      config.tls_cert_file.empty() ? ", plaintext" : (config.tls_client_ca_file.empty() ? ", TLS" : ", mutual TLS"),
      (*http)->port(), config.metrics_listen);
  if (!config.port_file.empty()) {
    const std::string tmp = config.port_file + ".tmp";
    std::ofstream(tmp) << "grpc=" << grpc_port << "\nmetrics=" << (*http)->port() << "\n";
    std::rename(tmp.c_str(), config.port_file.c_str());  // readers never see half a file
  }

  while (g_stop_signal == 0) {
    gpu_health.Poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  spdlog::info("signal {}: draining (grace period {} s)", static_cast<int>(g_stop_signal), config.grace_period_seconds);
  const auto drain_deadline = std::chrono::system_clock::now() + std::chrono::seconds(config.grace_period_seconds);
  server->GetHealthCheckService()->SetServingStatus(false);
  service.StartDrain(drain_deadline, config.grace_period_seconds);
  // While the listener is still open, health answers NOT_SERVING and new calls get
  // UNAVAILABLE, so clients and load balancers move on; streams in flight continue.
  const int notice = std::min(absl::GetFlag(FLAGS_drain_notice_seconds), config.grace_period_seconds);
  std::this_thread::sleep_for(std::chrono::seconds(std::max(notice, 0)));
  server->Shutdown(drain_deadline);
  server->Wait();
  gpu_health.SetHealthService(nullptr);  // the gRPC server goes before the /metrics server
  spdlog::info("stopped");
  return 0;
}

}  // namespace
}  // namespace exactq::server

int main(int argc, char** argv) {
  // Pictures arrive as megabytes a frame: gRPC reads them into fresh buffers of a few MiB,
  // which glibc serves with mmap by default, so every read faulted in and zeroed new
  // pages (about a tenth of the server's CPU time on a raw 4K stream). Below 32 MiB (the
  // most glibc allows) buffers come from the heap and are reused; freed memory above
  // 256 MiB at the heap's top still goes back to the system.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  // With those, each of glibc's arenas (8 per core by default) keeps pictures' memory of
  // its own, and the server's threads spread over them: RSS grew without bound under a
  // mixed load (bench/soak: 16 streams here went 1.8 -> 3.0 GB in two minutes and
  // rising; with 4 arenas it stayed at 1.5-1.7 GB, at the same rate). MALLOC_ARENA_MAX
  // in the environment still wins.
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 4);
  exactq::CommandLine command_line;
  command_line.usage =
      "the ExactQ scoring server (gRPC exactq.v1.Scorer, health, reflection, Prometheus /metrics).\n"
      "Every flag can also be set as EXACTQ_<FLAG> in the environment.";
  command_line.main_file = "server/main.cc";
  command_line.version = absl::StrCat("exactqd ", exactq::server::kVersionNumber, " (revision ",
                                      exactq::server::kRevision, ", cuda ", exactq::server::kCudaCompiled, ")");
  command_line.help_epilogue = exactq::MetricsHelp();
  exactq::ParseCommandLine(argc, argv, command_line);
  exactq::server::ApplyEnvironmentDefaults();
  if (absl::Status s =
          exactq::server::ConfigureLogging(absl::GetFlag(FLAGS_log_format), absl::GetFlag(FLAGS_log_level));
      !s.ok()) {
    std::fprintf(stderr, "exactqd: %s\n", std::string(s.message()).c_str());
    return 2;
  }
  signal(SIGINT, exactq::server::OnSignal);
  signal(SIGTERM, exactq::server::OnSignal);
  if (absl::Status s = exactq::ParseDecodeDevice(absl::GetFlag(FLAGS_decode)).status(); !s.ok()) {
    std::fprintf(stderr, "exactqd: --decode: %s\n", std::string(s.message()).c_str());
    return 2;
  }
  exactq::server::ServerConfig config = exactq::server::ConfigFromFlags();
  if (absl::Status s = exactq::server::ConfigureSourceRoots(argc, argv, &config); !s.ok()) {
    std::fprintf(stderr, "exactqd: %s\n", std::string(s.message()).c_str());
    return 2;
  }
  return exactq::server::Serve(config);
}
