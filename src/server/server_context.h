// State shared by the listener and every HTTP session of one HttpServer (internal header).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <atomic>
#include <condition_variable>
#include <mutex>

#include "base/metrics.h"
#include "bus/event_bus.h"
#include "server/http_server.h"
#include "server/request_metrics.h"
#include "server/sse_frame_cache.h"
#include "server/router.h"

namespace cairn::server {

struct ServerContext {
  ServerContext(const HttpServerOptions& o, const Router& r, MetricsRegistry& m, boost::asio::any_io_executor w,
                boost::asio::any_io_executor catch_up, bus::EventBus* b)
      : options(o), router(r), request_metrics(m, r), workers(std::move(w)), stream_catch_up(std::move(catch_up)),
        bus(b), sse_frames(8192, o.event_context_max_bytes) {}

  const HttpServerOptions& options;
  const Router& router;
  RequestMetrics request_metrics;
  boost::asio::any_io_executor workers;  // the blocking pool for Dispatch::kWorker handlers
  // Event-log reads of streams that fell behind the bus window: a pool of their own, so a crowd of
  // lagging streams cannot starve the writes on `workers`.
  boost::asio::any_io_executor stream_catch_up;
  bus::EventBus* bus;                     // for event streams; may be null
  SseFrameCache sse_frames;
  std::atomic<bool> stopping{false};

  // Requests read but not yet answered; shutdown waits for this to reach zero.
  void BeginRequest() {
    std::lock_guard lock(mu);
    ++in_flight;
  }
  void EndRequest() {
    std::lock_guard lock(mu);
    if (--in_flight == 0) drained.notify_all();
  }

  std::mutex mu;
  std::condition_variable drained;
  int64_t in_flight = 0;
};

}  // namespace cairn::server
