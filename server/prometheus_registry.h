// A small, thread-safe registry of Prometheus counters, gauges and histograms, and
// their rendering in the Prometheus text exposition format (version 0.0.4).
//
// Debian 12 ships no prometheus-cpp, and the server needs only a handful of series,
// so this is the part of it ExactQ uses. Series are created up front with their
// label values (the server initialises labelled series at zero so that quiet
// counters still exist for dashboards and alerts).
//
//   PrometheusRegistry registry;
//   auto& frames = registry.AddCounter("exactq_frames_scored_total",
//                                      "Frames scored.", {"metric", "backend"});
//   frames.At({"psnr", "cpu"}).Increment();
//   std::string page = registry.Render();
#ifndef EXACTQ_SERVER_PROMETHEUS_REGISTRY_H_
#define EXACTQ_SERVER_PROMETHEUS_REGISTRY_H_

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace exactq::server {

using LabelValues = std::vector<std::string>;

// A double that many threads add to without a lock.
class AtomicValue {
 public:
  void Add(double delta);
  void Set(double value) { value_.store(value, std::memory_order_relaxed); }
  double Get() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

class CounterSeries {
 public:
  void Increment(double delta = 1.0) { value_.Add(delta); }
  double Value() const { return value_.Get(); }

 private:
  AtomicValue value_;
};

class GaugeSeries {
 public:
  void Set(double value) { value_.Set(value); }
  void Add(double delta) { value_.Add(delta); }
  double Value() const { return value_.Get(); }

 private:
  AtomicValue value_;
};

class HistogramSeries {
 public:
  explicit HistogramSeries(const std::vector<double>* bounds);
  void Observe(double value);
  // Cumulative bucket counts (one per bound, then +Inf), sum and count.
  void Snapshot(std::vector<double>* cumulative, double* sum, double* count) const;

 private:
  const std::vector<double>* bounds_;
  mutable std::mutex mutex_;
  std::vector<double> buckets_;  // not cumulative; last is +Inf
  double sum_ = 0.0;
  double count_ = 0.0;
};

// One metric family: a name, help text, label names and its series by label values.
template <typename Series>
class Family {
 public:
  Family(std::string name, std::string help, std::vector<std::string> label_names,
         std::vector<double> bounds = {})
      : name_(std::move(name)),
        help_(std::move(help)),
        label_names_(std::move(label_names)),
        bounds_(std::move(bounds)) {}

  // The series for these label values, created (at zero) on first use.
  Series& At(const LabelValues& values);
  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  const std::vector<std::string>& label_names() const { return label_names_; }
  const std::vector<double>& bounds() const { return bounds_; }
  // Calls fn(label values, series) for every series, in label order.
  template <typename Fn>
  void ForEach(Fn fn) const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [values, series] : series_) fn(values, *series);
  }

 private:
  std::string name_;
  std::string help_;
  std::vector<std::string> label_names_;
  std::vector<double> bounds_;
  mutable std::mutex mutex_;
  std::map<LabelValues, std::unique_ptr<Series>> series_;
};

class PrometheusRegistry {
 public:
  Family<CounterSeries>& AddCounter(std::string name, std::string help,
                                    std::vector<std::string> label_names = {});
  Family<GaugeSeries>& AddGauge(std::string name, std::string help,
                                std::vector<std::string> label_names = {});
  Family<HistogramSeries>& AddHistogram(std::string name, std::string help,
                                        std::vector<std::string> label_names,
                                        std::vector<double> bounds);
  // The whole page in the text exposition format.
  std::string Render() const;

 private:
  std::vector<std::unique_ptr<Family<CounterSeries>>> counters_;
  std::vector<std::unique_ptr<Family<GaugeSeries>>> gauges_;
  std::vector<std::unique_ptr<Family<HistogramSeries>>> histograms_;
};

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_PROMETHEUS_REGISTRY_H_
