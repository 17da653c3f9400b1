// FrameAnswerer: one stream's scored frames turned into answers, in the order the
// engine's FramePipeline delivers them (frame order): the FrameResult message, the
// /metrics counters, the scores kept for pooling and the stream's totals. It runs on
// the pipeline's answering thread while the session reads the next frames; the
// session reads its totals only after draining the pipeline.
//
// After the first error (a frame that failed, or a write the client did not take)
// nothing more is written, so the client sees the answers before that frame and then
// the error: what it saw when frames were scored one at a time.
#ifndef EXACTQ_SERVER_FRAME_ANSWERER_H_
#define EXACTQ_SERVER_FRAME_ANSWERER_H_

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/runtime/frame_pipeline.h"
#include "exactq/v1/exactq.grpc.pb.h"
#include "server/frame_assembler.h"
#include "server/server_metrics.h"
#include "server/stream_idle_monitor.h"

namespace exactq::server {

// Frames answered, by backend; owned by the session's log line.
struct FrameCounts {
  uint64_t frames = 0, cpu = 0, cuda = 0;
};

class FrameAnswerer {
 public:
  using Stream = grpc::ServerReaderWriterInterface<v1::ScoreResponse, v1::ScoreRequest>;
  // Sends one answer; false when the client did not take it.
  using Writer = std::function<bool(v1::FrameResult&&)>;

  // A ScoreStream's answers: each FrameResult in a ScoreResponse. With `idle`, each
  // write is a WatchedWrite (for sessions that do not report frames to the watch).
  static Writer StreamWriter(Stream* stream, StreamIdleMonitor::Watch* idle = nullptr);

  FrameAnswerer(ServerMetrics* metrics, Writer writer, std::string job_id, std::vector<std::string> metric_names,
                size_t output_count, uint64_t frame_bytes, FrameCounts* counts);

  // Answers `frame` (or records its error); its buffers are kept for TakeSpare.
  void Answer(AssembledFrame frame, FramePipeline::Result result);
  // Records an error of the session's own (the first error wins); later frames are
  // not answered.
  void Fail(const grpc::Status& status);
  // OK until a frame failed, a write failed or Fail was called.
  grpc::Status error() const;
  // Buffers of an answered frame, for the reader's next frame (none: allocate).
  std::optional<AssembledFrame> TakeSpare();

  // Read after the pipeline is drained.
  const std::vector<std::vector<double>>& per_output() const { return per_output_; }
  const v1::FrameTiming& timing_sum() const { return timing_sum_; }

 private:
  ServerMetrics* metrics_;
  Writer writer_;
  const std::string job_id_;
  const std::vector<std::string> metric_names_;
  const uint64_t frame_bytes_;
  FrameCounts* counts_;
  std::vector<std::vector<double>> per_output_;
  v1::FrameTiming timing_sum_;
  std::string last_fallback_;  // log a fallback once per change of reason, not per frame

  mutable std::mutex mutex_;  // error_ and spare_: the reader asks for them
  grpc::Status error_;
  std::optional<AssembledFrame> spare_;
};

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_FRAME_ANSWERER_H_
