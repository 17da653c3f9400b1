// The series the server exports on /metrics, by name, kept in a prometheus-cpp
// registry. Every labelled series that a dashboard or alert reads is created at zero
// on start, so quiet counters exist.
//
// Call sites name a series by its label values in the family's label order:
//   metrics.frames_scored.At({"psnr", "cpu"}).Increment();
#ifndef EXACTQ_SERVER_SERVER_METRICS_H_
#define EXACTQ_SERVER_SERVER_METRICS_H_

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace exactq::server {

using LabelValues = std::vector<std::string>;

class CounterSeries {
 public:
  explicit CounterSeries(prometheus::Counter& counter) : counter_(counter) {}
  void Increment(double delta = 1.0) { counter_.Increment(delta); }
  double Value() const { return counter_.Value(); }

 private:
  prometheus::Counter& counter_;
};

class GaugeSeries {
 public:
  explicit GaugeSeries(prometheus::Gauge& gauge) : gauge_(gauge) {}
  void Set(double value) { gauge_.Set(value); }
  void Add(double delta) { gauge_.Increment(delta); }
  double Value() const { return gauge_.Value(); }

 private:
  prometheus::Gauge& gauge_;
};

class HistogramSeries {
 public:
  explicit HistogramSeries(prometheus::Histogram& histogram) : histogram_(histogram) {}
  void Observe(double value) { histogram_.Observe(value); }

 private:
  prometheus::Histogram& histogram_;
};

// A prometheus-cpp family with fixed label names, whose series are looked up by
// their values (in label-name order). Thread-safe.
template <typename Series, typename Metric>
class LabelledFamily {
 public:
  LabelledFamily(prometheus::Family<Metric>& family, std::vector<std::string> label_names,
                 std::vector<double> bounds = {})
      : family_(family), label_names_(std::move(label_names)), bounds_(std::move(bounds)) {}

  // The series for these label values, created (at zero) on first use.
  Series& At(const LabelValues& values) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = series_.find(values);
    if (it != series_.end()) return *it->second;
    std::map<std::string, std::string> labels;
    for (size_t i = 0; i < label_names_.size() && i < values.size(); ++i) labels[label_names_[i]] = values[i];
    Metric& metric = Create(labels);
    return *series_.emplace(values, std::make_unique<Series>(metric)).first->second;
  }

 private:
  Metric& Create(const std::map<std::string, std::string>& labels) {
    if constexpr (std::is_same_v<Metric, prometheus::Histogram>) {
      return family_.Add(labels, bounds_);
    } else {
      return family_.Add(labels);
    }
  }

  prometheus::Family<Metric>& family_;
  std::vector<std::string> label_names_;
  std::vector<double> bounds_;
  std::mutex mutex_;
  std::map<LabelValues, std::unique_ptr<Series>> series_;
};

using CounterFamily = LabelledFamily<CounterSeries, prometheus::Counter>;
using GaugeFamily = LabelledFamily<GaugeSeries, prometheus::Gauge>;
using HistogramFamily = LabelledFamily<HistogramSeries, prometheus::Histogram>;

// What exactq_build_info says about this binary.
struct BuildInfo {
  std::string version;   // "0.1.0"
  std::string revision;  // the source revision, or "unknown"
  std::string cuda;      // "true" when the CUDA backend is compiled in, else "false"
};

// The gRPC methods whose failures exactq_errors_total counts.
inline constexpr const char* kScoredMethods[] = {"ScoreStream", "ScorePair"};

struct ServerMetrics {
  // metric_names: every metric the engine offers; backends: "cpu", "cuda".
  ServerMetrics(const std::vector<std::string>& metric_names, const BuildInfo& build);

  // Shared so that the /metrics exposer can hold it weakly.
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  CounterFamily frames_scored;   // {metric, backend}
  CounterFamily bytes_received;  // picture bytes received
  CounterFamily bytes_scored;    // {metric, backend}: picture bytes of scored frames
  CounterFamily streams_started;
  CounterFamily fallbacks;               // {reason}
  CounterFamily errors;                  // {method, code}: gRPC method and status code name
  CounterFamily pinned_frame_fallbacks;  // pictures that got ordinary memory instead, since start
  GaugeFamily active_streams;
  GaugeFamily queue_depth;  // frames received, not yet scored
  GaugeFamily frames_in_flight;
  GaugeFamily device_memory_used;  // {device}
  GaugeFamily configured_gpus;     // GPUs given to the process
  GaugeFamily usable_gpus;         // of those, the ones that take new streams
  GaugeFamily pinned_frame_bytes;  // page-locked host bytes for pictures (read at scrape)
  GaugeFamily build_info;          // {version, revision, cuda}; always 1
  HistogramFamily stage_seconds;   // {stage}: the stages of a frame, which add up to...
  HistogramFamily frame_seconds;   // ...a frame's whole time in the server

  // The page /metrics serves (Prometheus text format), for tests and logs.
  std::string Render() const;

  // Brings a cumulative count read elsewhere (e.g. the engine's pinned-memory
  // fallbacks) into a counter: adds what it grew by since the last call.
  void SyncCounter(CounterSeries& counter, double cumulative);

 private:
  std::mutex sync_mutex_;
};

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_SERVER_METRICS_H_
