// State shared by the listener and every HTTP session of one HttpServer (internal header).
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "base/metrics.h"
#include "bus/ephemeral_hub.h"
#include "bus/event_bus.h"
#include "exec/worker_pool.h"
#include "server/http_server.h"
#include "server/request_metrics.h"
#include "server/sse_frame_cache.h"
#include "server/router.h"

namespace cairn::server {

// One open connection, counted while its owner holds it: the HttpSession, then whatever takes its
// socket over (the SseStream of an event stream, or the lingering close after a last answer).
// Released when the owner is destroyed, which is when the socket is closed. Move-only.
class ConnectionSlot {
 public:
  ConnectionSlot() = default;  // counts nothing (a connection refused over the limit)
  // Counts the connection in `count` (the server's) and, when given, `thread_count` (its I/O
  // thread's).
  explicit ConnectionSlot(std::shared_ptr<std::atomic<int64_t>> count,
                          std::shared_ptr<std::atomic<int64_t>> thread_count = nullptr)
      : count_(std::move(count)), thread_count_(std::move(thread_count)) {
    count_->fetch_add(1);
    if (thread_count_) thread_count_->fetch_add(1);
  }
  ConnectionSlot(ConnectionSlot&& other) noexcept = default;
  ConnectionSlot& operator=(ConnectionSlot&& other) noexcept {
    Release();
    count_ = std::move(other.count_);
    thread_count_ = std::move(other.thread_count_);
    return *this;
  }
  ConnectionSlot(const ConnectionSlot&) = delete;
  ConnectionSlot& operator=(const ConnectionSlot&) = delete;
  ~ConnectionSlot() { Release(); }

 private:
  void Release() {
    if (count_) count_->fetch_sub(1);
    if (thread_count_) thread_count_->fetch_sub(1);
    count_.reset();
    thread_count_.reset();
  }
  std::shared_ptr<std::atomic<int64_t>> count_;
  std::shared_ptr<std::atomic<int64_t>> thread_count_;
};

struct ServerContext {
  ServerContext(const HttpServerOptions& o, const Router& r, MetricsRegistry& m, exec::WorkerPool& w,
                exec::WorkerPool& catch_up, bus::EventBus* b, bus::EphemeralHub* e = nullptr)
      : options(o), router(r), request_metrics(m, r), workers(w), stream_catch_up(catch_up),
        bus(b), ephemeral(e), sse_frames(8192, o.event_context_max_bytes),
        sse_ephemeral_dropped(m.GetCounter("cairn_sse_ephemeral_dropped_total",
                                           "Ephemeral events (agent.token) not sent: the stream's queue was full")),
        connections_refused(m.GetCounter("cairn_http_connections_refused_total",
                                         "Connections answered 503 and closed: --max-connections were open")),
        accept_failures(m.GetCounter("cairn_http_accept_failures_total",
                                     "Accepts that failed or were put off for want of file descriptors; the listener backs off")) {
    // The gauge holds the counter itself: the registry may outlive this context.
    m.AddGauge("cairn_http_open_connections", "Open HTTP connections, event streams included",
               [count = open_connections] { return static_cast<double>(count->load()); });
  }

  const HttpServerOptions& options;
  const Router& router;
  RequestMetrics request_metrics;
  exec::WorkerPool& workers;  // the blocking pool for Dispatch::kWorker handlers
  // Event-log reads of streams that fell behind the bus window: a pool of their own, so a crowd of
  // lagging streams cannot starve the writes on `workers`.
  exec::WorkerPool& stream_catch_up;
  bus::EventBus* bus;                     // for event streams; may be null
  bus::EphemeralHub* ephemeral;           // ephemeral events for streams that select them; may be null
  SseFrameCache sse_frames;
  Counter& sse_ephemeral_dropped;
  Counter& connections_refused;
  Counter& accept_failures;
  std::atomic<bool> stopping{false};
  // Open connections (ConnectionSlot); shared with the open-connections gauge.
  std::shared_ptr<std::atomic<int64_t>> open_connections = std::make_shared<std::atomic<int64_t>>(0);

  // Requests read but not yet answered; shutdown waits for this to reach zero.
  void BeginRequest() {
    std::lock_guard lock(mu);
    ++in_flight;
  }
  void EndRequest() {
    std::lock_guard lock(mu);
    if (--in_flight == 0) drained.notify_all();
  }

  // Answers of kAsync requests not yet handed to their connection; shutdown waits for this to
  // reach zero before the connections' I/O context goes, since each answer holds its connection.
  void BeginAsyncAnswer() {
    std::lock_guard lock(mu);
    ++async_answers;
  }
  void EndAsyncAnswer() {
    std::lock_guard lock(mu);
    if (--async_answers == 0) drained.notify_all();
  }

  std::mutex mu;
  std::condition_variable drained;
  int64_t in_flight = 0;
  int64_t async_answers = 0;
};

}  // namespace cairn::server
