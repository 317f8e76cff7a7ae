#include "server/request_metrics.h"

namespace cairn::server {
namespace {

constexpr const char* kRequests = "cairn_http_requests_total";
constexpr const char* kRequestsHelp = "HTTP requests by method, route and status";
constexpr const char* kLatency = "cairn_http_request_seconds";
constexpr const char* kLatencyHelp = "HTTP request latency by route, from the end of the header to the response";

}  // namespace

RequestMetrics::RequestMetrics(MetricsRegistry& metrics, const Router& router)
    : metrics_(metrics),
      by_tenant_(metrics, "cairn_tenant_http_requests_total", "HTTP requests that passed authentication, by tenant", "tenant") {
  for (const Route& route : router.routes()) {
    auto entry = std::make_unique<Entry>();
    entry->labels = "method=\"" + route.method + "\",route=\"" + route.pattern + "\"";
    entry->latency = &metrics_.GetHistogram(kLatency, kLatencyHelp, entry->labels);
    entries_[&route] = std::move(entry);
  }
  unmatched_.labels = "method=\"\",route=\"unmatched\"";
  unmatched_.latency = &metrics_.GetHistogram(kLatency, kLatencyHelp, unmatched_.labels);
}

RequestMetrics::Entry& RequestMetrics::EntryFor(const Route* route) {
  auto it = route ? entries_.find(route) : entries_.end();
  return it == entries_.end() ? unmatched_ : *it->second;
}

void RequestMetrics::Record(const Route* route, int status, double seconds) {
  Entry& entry = EntryFor(route);
  entry.latency->Observe(seconds);
  size_t slot = status >= 0 && status < static_cast<int>(entry.by_status.size()) ? static_cast<size_t>(status) : 0;
  Counter* counter = entry.by_status[slot].load(std::memory_order_acquire);
  if (!counter) {  // first time for this status: the registry returns the same counter to racers
    counter = &metrics_.GetCounter(kRequests, kRequestsHelp, entry.labels + ",status=\"" + std::to_string(status) + "\"");
    entry.by_status[slot].store(counter, std::memory_order_release);
  }
  counter->Increment();
}

}  // namespace cairn::server
