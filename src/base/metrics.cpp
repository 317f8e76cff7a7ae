#include "base/metrics.h"

#include <fmt/format.h>

namespace cairn {

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), buckets_(new std::atomic<uint64_t>[bounds_.size() + 1]) {
  for (size_t i = 0; i <= bounds_.size(); ++i) buckets_[i] = 0;
}

void Histogram::Observe(double value) {
  size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  if (value > 0) sum_micro_.fetch_add(static_cast<uint64_t>(value * 1e6), std::memory_order_relaxed);
}

void Histogram::Render(const std::string& name, const std::string& labels, std::string& out) const {
  std::string sep = labels.empty() ? "" : ",";
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    out += fmt::format("{}_bucket{{{}{}le=\"{}\"}} {}\n", name, labels, sep, bounds_[i], cumulative);
  }
  cumulative += buckets_[bounds_.size()].load(std::memory_order_relaxed);
  out += fmt::format("{}_bucket{{{}{}le=\"+Inf\"}} {}\n", name, labels, sep, cumulative);
  std::string braces = labels.empty() ? "" : "{" + labels + "}";
  out += fmt::format("{}_sum{} {}\n", name, braces, static_cast<double>(sum_micro_.load()) / 1e6);
  out += fmt::format("{}_count{} {}\n", name, braces, cumulative);
}

std::vector<double> MetricsRegistry::LatencyBuckets() {
  return {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10};
}

Counter& MetricsRegistry::GetCounter(const std::string& name, const std::string& help, const std::string& labels) {
  std::lock_guard lock(mu_);
  Family& family = families_[name];
  family.help = help;
  family.type = "counter";
  auto& slot = family.counters[labels];
  if (!slot) slot = std::make_unique<Counter>();
  return *slot;
}

Histogram& MetricsRegistry::GetHistogram(const std::string& name, const std::string& help, const std::string& labels,
                                         std::vector<double> bounds) {
  std::lock_guard lock(mu_);
  Family& family = families_[name];
  family.help = help;
  family.type = "histogram";
  auto& slot = family.histograms[labels];
  if (!slot) slot = std::make_unique<Histogram>(std::move(bounds));
  return *slot;
}

void MetricsRegistry::AddGauge(const std::string& name, const std::string& help, std::function<double()> read) {
  std::lock_guard lock(mu_);
  Family& family = families_[name];
  family.help = help;
  family.type = "gauge";
  family.gauge = std::move(read);
}

std::string MetricsRegistry::RenderPrometheus() const {
  std::lock_guard lock(mu_);
  std::string out;
  for (const auto& [name, family] : families_) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, family.help, name, family.type);
    for (const auto& [labels, counter] : family.counters) {
      std::string braces = labels.empty() ? "" : "{" + labels + "}";
      out += fmt::format("{}{} {}\n", name, braces, counter->value());
    }
    for (const auto& [labels, histogram] : family.histograms) histogram->Render(name, labels, out);
    if (family.gauge) out += fmt::format("{} {}\n", name, family.gauge());
  }
  return out;
}

}  // namespace cairn
