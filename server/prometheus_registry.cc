#include "server/prometheus_registry.h"

#include <cmath>
#include <string_view>

#include "fmt/format.h"

namespace exactq::server {

void AtomicValue::Add(double delta) {
  double current = value_.load(std::memory_order_relaxed);
  while (!value_.compare_exchange_weak(current, current + delta, std::memory_order_relaxed)) {
  }
}

HistogramSeries::HistogramSeries(const std::vector<double>* bounds)
    : bounds_(bounds), buckets_(bounds->size() + 1, 0.0) {}

void HistogramSeries::Observe(double value) {
  size_t i = 0;
  while (i < bounds_->size() && value > (*bounds_)[i]) ++i;
  std::lock_guard<std::mutex> lock(mutex_);
  buckets_[i] += 1.0;
  sum_ += value;
  count_ += 1.0;
}

void HistogramSeries::Snapshot(std::vector<double>* cumulative, double* sum,
                               double* count) const {
  std::lock_guard<std::mutex> lock(mutex_);
  cumulative->clear();
  double running = 0.0;
  for (double b : buckets_) {
    running += b;
    cumulative->push_back(running);
  }
  *sum = sum_;
  *count = count_;
}

template <>
HistogramSeries& Family<HistogramSeries>::At(const LabelValues& values) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& slot = series_[values];
  if (!slot) slot = std::make_unique<HistogramSeries>(&bounds_);
  return *slot;
}

template <typename Series>
Series& Family<Series>::At(const LabelValues& values) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& slot = series_[values];
  if (!slot) slot = std::make_unique<Series>();
  return *slot;
}

template class Family<CounterSeries>;
template class Family<GaugeSeries>;

Family<CounterSeries>& PrometheusRegistry::AddCounter(std::string name, std::string help,
                                                      std::vector<std::string> label_names) {
  counters_.push_back(std::make_unique<Family<CounterSeries>>(std::move(name), std::move(help),
                                                              std::move(label_names)));
  return *counters_.back();
}

Family<GaugeSeries>& PrometheusRegistry::AddGauge(std::string name, std::string help,
                                                  std::vector<std::string> label_names) {
  gauges_.push_back(std::make_unique<Family<GaugeSeries>>(std::move(name), std::move(help),
                                                          std::move(label_names)));
  return *gauges_.back();
}

Family<HistogramSeries>& PrometheusRegistry::AddHistogram(std::string name, std::string help,
                                                          std::vector<std::string> label_names,
                                                          std::vector<double> bounds) {
  histograms_.push_back(std::make_unique<Family<HistogramSeries>>(
      std::move(name), std::move(help), std::move(label_names), std::move(bounds)));
  return *histograms_.back();
}

namespace {

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

// {a="x",b="y"} with an optional extra label (le for histogram buckets).
std::string Labels(const std::vector<std::string>& names, const LabelValues& values,
                   std::string_view extra_name = {}, std::string_view extra_value = {}) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    out += out.empty() ? "{" : ",";
    out += fmt::format("{}=\"{}\"", names[i], EscapeLabelValue(values[i]));
  }
  if (!extra_name.empty()) {
    out += out.empty() ? "{" : ",";
    out += fmt::format("{}=\"{}\"", extra_name, extra_value);
  }
  if (!out.empty()) out += "}";
  return out;
}

template <typename Series>
void RenderSimple(const Family<Series>& family, std::string_view type, std::string* page) {
  *page += fmt::format("# HELP {} {}\n# TYPE {} {}\n", family.name(), family.help(),
                       family.name(), type);
  family.ForEach([&](const LabelValues& values, const Series& series) {
    *page += fmt::format("{}{} {}\n", family.name(), Labels(family.label_names(), values),
                         FormatValue(series.Value()));
  });
}

}  // namespace

std::string PrometheusRegistry::Render() const {
  std::string page;
  for (const auto& f : counters_) RenderSimple(*f, "counter", &page);
  for (const auto& f : gauges_) RenderSimple(*f, "gauge", &page);
  for (const auto& f : histograms_) {
    page += fmt::format("# HELP {} {}\n# TYPE {} histogram\n", f->name(), f->help(), f->name());
    f->ForEach([&](const LabelValues& values, const HistogramSeries& series) {
      std::vector<double> cumulative;
      double sum = 0, count = 0;
      series.Snapshot(&cumulative, &sum, &count);
      for (size_t i = 0; i < cumulative.size(); ++i) {
        std::string le = i + 1 < cumulative.size() ? FormatValue(f->bounds()[i]) : "+Inf";
        page += fmt::format("{}_bucket{} {}\n", f->name(),
                            Labels(f->label_names(), values, "le", le), FormatValue(cumulative[i]));
      }
      page += fmt::format("{}_sum{} {}\n", f->name(), Labels(f->label_names(), values),
                          FormatValue(sum));
      page += fmt::format("{}_count{} {}\n", f->name(), Labels(f->label_names(), values),
                          FormatValue(count));
    });
  }
  return page;
}

}  // namespace exactq::server
