#include "base/metrics.h"

#include <fmt/format.h>

namespace cairn {
namespace {

// Prometheus label-value escaping: backslash, double quote and line feed.
std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// Whether a series' labels name no tenant, or the tenant whose escaped label value is
// `escaped_tenant` (label sets are written by cairn, as name="escaped value" pairs joined by commas).
bool OfTenantOrNone(std::string_view labels, std::string_view escaped_tenant) {
  constexpr std::string_view kKey = "tenant=\"";
  size_t at = labels.find(kKey);
  while (at != std::string_view::npos && at != 0 && labels[at - 1] != ',') at = labels.find(kKey, at + 1);
  if (at == std::string_view::npos) return true;
  std::string_view rest = labels.substr(at + kKey.size());
  return rest.starts_with(escaped_tenant) && rest.size() > escaped_tenant.size() && rest[escaped_tenant.size()] == '"';
}

}  // namespace

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

std::string MetricsRegistry::RenderPrometheus(std::string_view only_tenant) const {
  const std::string escaped_tenant = EscapeLabelValue(only_tenant);
  auto shown = [&](const std::string& labels) { return only_tenant.empty() || OfTenantOrNone(labels, escaped_tenant); };
  std::lock_guard lock(mu_);
  std::string out;
  for (const auto& [name, family] : families_) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, family.help, name, family.type);
    for (const auto& [labels, counter] : family.counters) {
      if (!shown(labels)) continue;
      std::string braces = labels.empty() ? "" : "{" + labels + "}";
      out += fmt::format("{}{} {}\n", name, braces, counter->value());
    }
    for (const auto& [labels, histogram] : family.histograms) {
      if (shown(labels)) histogram->Render(name, labels, out);
    }
    if (family.gauge) out += fmt::format("{} {}\n", name, family.gauge());
  }
  return out;
}

LabeledCounters::LabeledCounters(MetricsRegistry& registry, std::string name, std::string help, std::string label,
                                 std::string fixed_labels)
    : registry_(registry),
      name_(std::move(name)),
      help_(std::move(help)),
      label_(std::move(label)),
      fixed_labels_(std::move(fixed_labels)) {}

Counter& LabeledCounters::For(std::string_view value) {
  {
    std::shared_lock lock(mu_);
    if (auto it = counters_.find(value); it != counters_.end()) return *it->second;
  }
  std::string labels = (fixed_labels_.empty() ? "" : fixed_labels_ + ",") + label_ + "=\"" + EscapeLabelValue(value) + "\"";
  Counter& counter = registry_.GetCounter(name_, help_, labels);
  std::unique_lock lock(mu_);
  counters_.emplace(std::string(value), &counter);
  return counter;
}

}  // namespace cairn
