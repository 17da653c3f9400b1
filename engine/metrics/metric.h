// Metric: the small interface every quality metric (psnr, ssim, ssimulacra2) fills.
//
// A metric is created from a name and a string map of options (see registry.h), checks
// once whether it can score a geometry, then scores frame pairs one at a time and
// returns an ordered list of named outputs per frame ("psnr_y", "psnr_cb", ...).
// Pooling over frames is not the metric's business: engine/pooling does it, in one
// host function, for every metric and backend.
//
// Exactness contract (docs/design.md rule 1): a metric's outputs are a pure function of the
// two frames and the options. Score() canonicalises every NaN to one quiet NaN so
// that backends whose NaN payloads differ still return the same bits.
//
//   absl::StatusOr<std::unique_ptr<Metric>> psnr = CreateMetric("psnr", {});
//   if (absl::Status s = (*psnr)->CheckInput(geometry); !s.ok()) return s;
//   absl::StatusOr<FrameScores> scores = (*psnr)->Score(ref, dist);
//   for (const NamedScore& s : *scores) printf("%s %.17g\n", s.name.c_str(), s.value);
//
// Implementing a metric: derive from Metric, implement the pure virtual functions
// (ScoreFrame may assume that both frames have the same geometry and that CheckInput
// accepted it), give it a MetricInfo and a factory, and add one line to registry.cc.
//
// Metrics with state across frames (VMAF: motion reads the previous reference, and
// integer_motion2 needs the next frame's motion) split their work in two. The per-frame
// step stays a pure function, now of (reference, distorted, previous reference), so
// frames may still be scored in any order on any thread (ScoreInStream); it returns
// per-frame outputs that a SequenceStage, one per stream, fed in frame order, turns
// into the final outputs, possibly a few frames later. The runtime applies the stages
// without knowing which metrics have them.

#ifndef EXACTQ_ENGINE_METRICS_METRIC_H_
#define EXACTQ_ENGINE_METRICS_METRIC_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/format/frame.h"
#include "engine/format/frame_geometry.h"

namespace exactq {

// One output of one frame.
struct NamedScore {
  std::string name;
  double value = 0.0;
};

// A frame's outputs, in the order the metric declares them (Metric::OutputNames).
using FrameScores = std::vector<NamedScore>;

// The value of output `name`, if present.
std::optional<double> FindScore(const FrameScores& scores, absl::string_view name);

// Options as they arrive from a request or a command line: name -> text value. Each
// metric parses its own (metric_options.h); an unknown name is an error.
using MetricOptions = std::map<std::string, std::string>;

// What a metric accepts, for capability listings and option checking.
struct MetricOptionInfo {
  std::string name;           // "enable_chroma"
  std::string default_value;  // "true"
  std::string description;
};

struct MetricInfo {
  std::string name;            // "psnr"
  int definition_version = 0;  // bumped whenever any output bit may change
  std::string description;
  // Every output the metric can produce, whatever the options and geometry.
  std::vector<std::string> outputs;
  std::vector<MetricOptionInfo> options;
};

// The in-order part of a metric with state across frames; one per stream, not
// thread-safe. Push takes each frame's ScoreInStream outputs in frame order and returns
// the final outputs (OutputNames) of every frame completed by it, oldest first; Finish
// ends the stream, returns the rest and resets the stage for a new stream.
class SequenceStage {
 public:
  virtual ~SequenceStage() = default;
  virtual std::vector<FrameScores> Push(FrameScores per_frame) = 0;
  virtual std::vector<FrameScores> Finish() = 0;
};

class Metric {
 public:
  virtual ~Metric() = default;

  virtual const MetricInfo& info() const = 0;
  const std::string& name() const { return info().name; }
  int definition_version() const { return info().definition_version; }

  // OK when the metric can score frames of this geometry with its options; otherwise
  // InvalidArgument (or Unimplemented) saying why.
  virtual absl::Status CheckInput(const FrameGeometry& geometry) const = 0;

  // The outputs Score() returns for this geometry, in order (options and layout decide
  // the subset: 4:0:0 PSNR has psnr_y only).
  virtual std::vector<std::string> OutputNames(const FrameGeometry& geometry) const = 0;

  // Scores one frame pair as a stream of one frame: the final outputs. InvalidArgument
  // when the geometries differ or CheckInput rejects them. Not thread-safe: a metric may
  // keep scratch buffers between frames; use one instance per stream.
  absl::StatusOr<FrameScores> Score(const Frame& ref, const Frame& dist);

  // Frame n of a stream: `previous_reference` is frame n - 1's reference (null for
  // frame 0), read only by metrics that say so. Without a SequenceStage these are the
  // final outputs (Score's); with one, the per-frame outputs its Push takes.
  absl::StatusOr<FrameScores> ScoreInStream(const Frame& ref, const Frame& dist, const Frame* previous_reference);

  // Whether ScoreInStream reads previous_reference (the caller keeps that picture
  // unchanged until the frame is scored).
  virtual bool reads_previous_reference() const { return false; }
  // A new stream's stage; null for metrics whose outputs are per frame.
  virtual std::unique_ptr<SequenceStage> CreateSequenceStage() const { return nullptr; }

 protected:
  virtual absl::StatusOr<FrameScores> ScoreFrame(const Frame& ref, const Frame& dist) = 0;
  // A metric with a SequenceStage overrides this (ScoreFrame is then its one-frame
  // stream); the default is ScoreFrame.
  virtual absl::StatusOr<FrameScores> ScoreFrameInStream(const Frame& ref, const Frame& dist,
                                                         const Frame* /*previous_reference*/) {
    return ScoreFrame(ref, dist);
  }
};

// The one NaN a metric returns (docs/design.md rule 1): x86 propagates payloads, GPUs
// return a canonical NaN, so results are canonicalised at the metric boundary.
double CanonicalizeNan(double value);

}  // namespace exactq

#endif  // EXACTQ_ENGINE_METRICS_METRIC_H_
