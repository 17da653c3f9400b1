// Everything an operator can set, with the defaults a farm would start from. Filled
// from flags (and EXACTQ_* environment variables) in main.cc; see `exactqd --help`.
#ifndef EXACTQ_SERVER_SERVER_CONFIG_H_
#define EXACTQ_SERVER_SERVER_CONFIG_H_

#include <cstdint>
#include <string>

#include "engine/decode/video_decoder.h"
#include "server/source_roots.h"

namespace exactq::server {

// Sources the server decodes (uploads and server paths; proto "SOURCES").
struct DecodeConfig {
  SourceRoots source_roots;                   // --source_root; none: every server path is refused
  std::string spool_dir;                      // uploads are spooled here (unlinked); "" = $TMPDIR or /tmp
  uint64_t max_upload_bytes = 16ull << 30;    // one spooled upload
  uint32_t decode_threads = 4;                // per decoded side, when the header asks for 0
  uint32_t max_decode_threads = 16;           // per decoded side, whatever the header asks
  uint32_t max_decode_threads_total = 64;     // all decoded streams; beyond, one per side
  DecodeDevice device = DecodeDevice::kAuto;  // --decode, when the header names none
  int gpu = 0;                                // the GPU that decodes: the first of --gpus
  bool gpus_off = false;                      // --gpus=none: no decoding on a GPU either
};

struct ServerLimits {
  uint64_t max_chunk_bytes = 1 << 20;           // 1 MiB per FrameChunk.data
  uint64_t max_unary_picture_bytes = 16 << 20;  // ScorePair pictures
  uint32_t max_width = 8192;
  uint32_t max_height = 4320;
  uint32_t max_streams = 64;
  uint32_t max_streams_per_peer = 16;
  uint32_t max_frames_in_flight_per_stream = 2;
  uint64_t max_frames_per_stream = 0;        // 0 = unlimited (for a ladder: reference frames)
  uint32_t max_renditions = 16;              // renditions in one ScoreLadder call
  uint64_t max_buffered_bytes = 4ull << 30;  // frame bytes held across all streams
  uint64_t max_message_bytes = 4 << 20;      // gRPC receive limit
  // Streams scored on the CPU at once (the CPU is a fallback, not a second GPU: SSIMULACRA2
  // at 4K takes seconds per frame there). Over it, new CPU streams get UNAVAILABLE with a
  // retry hint. 0 = twice the hardware threads.
  uint32_t max_cpu_streams = 0;
  // A stream whose client sends nothing for this long while the server waits to read
  // ends with DEADLINE_EXCEEDED (StreamIdleMonitor); 0 = never.
  uint32_t stream_idle_seconds = 30;
  uint32_t max_streams_per_connection = 32;  // HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS
  uint32_t max_server_threads = 0;           // gRPC resource quota; 0 = 2 * max_streams + 32
};

struct ServerConfig {
  std::string listen = "0.0.0.0:50051";
  std::string metrics_listen = "0.0.0.0:9464";
  std::string port_file;  // written once both ports are bound
  bool reflection = true;
  int grace_period_seconds = 30;  // drain time after SIGTERM
  // Keepalive pings on idle connections, and a maximum connection age after which the
  // server sends GOAWAY so clients reconnect (and new replicas receive work); streams
  // open at that moment get max_connection_age_grace to finish (0: as long as they need,
  // so a long job is never cut by the age of its connection).
  int keepalive_time_seconds = 60;
  int keepalive_timeout_seconds = 20;
  int max_connection_age_seconds = 1800;
  int max_connection_age_grace_seconds = 0;
  // TLS when a certificate and key are given; mutual TLS when a client CA is given too.
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_client_ca_file;
  ServerLimits limits;
  DecodeConfig decode;
};

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_SERVER_CONFIG_H_
