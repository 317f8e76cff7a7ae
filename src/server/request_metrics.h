// RequestMetrics: per-route request counters (by status) and latency histograms, resolved once
// per route so the hot path takes no lock and builds no label strings.
#pragma once

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "base/metrics.h"
#include "server/router.h"

namespace cairn::server {

class RequestMetrics {
 public:
  // `metrics` and every route of `router` must outlive this object.
  RequestMetrics(MetricsRegistry& metrics, const Router& router);

  // Counts one answered request. `route` is null for requests that matched no route (or were
  // refused before routing). Thread-safe and lock-free once a (route, status) pair has been seen.
  void Record(const Route* route, int status, double seconds);

  // Counts one request that passed authentication, for the tenant it acts in.
  void RecordTenant(std::string_view tenant) { by_tenant_.For(tenant).Increment(); }

 private:
  struct Entry {
    std::string labels;
    Histogram* latency = nullptr;
    std::array<std::atomic<Counter*>, 600> by_status{};
  };
  Entry& EntryFor(const Route* route);

  MetricsRegistry& metrics_;
  std::map<const Route*, std::unique_ptr<Entry>> entries_;  // fixed after construction
  Entry unmatched_;
  LabeledCounters by_tenant_;
};

}  // namespace cairn::server
