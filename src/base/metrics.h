// Metrics: counters, histograms and gauges rendered as Prometheus text (GET /metrics).
//
// Metrics are identified by name plus a label set written in Prometheus syntax
// (`route="/breadcrumbs",method="POST"`). Lookups take a lock; hot paths keep the returned
// reference, which stays valid for the registry's lifetime. Updates are lock-free.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace cairn {

class Counter {
 public:
  void Increment(uint64_t by = 1) { value_.fetch_add(by, std::memory_order_relaxed); }
  uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

// A cumulative histogram over fixed upper bounds (seconds for latencies).
class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void Observe(double value);
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  // Appends the `_bucket`, `_sum` and `_count` lines for `name{labels}`.
  void Render(const std::string& name, const std::string& labels, std::string& out) const;

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // one per bound, plus +Inf
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_micro_{0};  // sum in millionths, so it can be atomic
};

class MetricsRegistry {
 public:
  // Latency buckets from 50 µs to 10 s.
  static std::vector<double> LatencyBuckets();

  Counter& GetCounter(const std::string& name, const std::string& help, const std::string& labels = {});
  Histogram& GetHistogram(const std::string& name, const std::string& help, const std::string& labels = {},
                          std::vector<double> bounds = LatencyBuckets());
  // A gauge whose value is read from `read` at render time (it must be thread-safe).
  void AddGauge(const std::string& name, const std::string& help, std::function<double()> read);

  // Every series; with `only_tenant`, the series labelled with another tenant (tenant="...") are
  // left out, so a tenant's admin sees the server's own series and its tenant's, no other's.
  std::string RenderPrometheus(std::string_view only_tenant = {}) const;

 private:
  struct Family {
    std::string help;
    std::string type;
    std::map<std::string, std::unique_ptr<Counter>> counters;
    std::map<std::string, std::unique_ptr<Histogram>> histograms;
    std::function<double()> gauge;
  };
  mutable std::mutex mu_;
  std::map<std::string, Family> families_;
};

// Counters of one family told apart by the value of one label (tenant="acme"), beside fixed
// labels (status="failed"). For(value) finds the counter under a shared lock, and makes it the
// first time a value is seen; the caller bounds how many values there are (tenants are created by
// system admins). Values are escaped as Prometheus label values.
class LabeledCounters {
 public:
  // `registry` must outlive this object.
  LabeledCounters(MetricsRegistry& registry, std::string name, std::string help, std::string label,
                  std::string fixed_labels = {});

  Counter& For(std::string_view value);

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
  };
  MetricsRegistry& registry_;
  const std::string name_;
  const std::string help_;
  const std::string label_;
  const std::string fixed_labels_;
  std::shared_mutex mu_;
  std::unordered_map<std::string, Counter*, Hash, std::equal_to<>> counters_;
};

}  // namespace cairn
