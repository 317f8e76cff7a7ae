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
#include <string>
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

  std::string RenderPrometheus() const;

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

}  // namespace cairn
