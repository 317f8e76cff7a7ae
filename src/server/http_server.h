// HttpServer: the asynchronous HTTP/1.1 server (Boost.Beast).
//
// A fixed pool of I/O threads runs one session per connection (keep-alive, one request at a time,
// bounded header and body sizes, an idle timeout). Handlers marked Dispatch::kWorker run on a
// separate blocking pool so a write waiting for its group commit never stalls an I/O thread.
//
// Shutdown (Stop(), or SIGTERM/SIGINT while in Run()): stop accepting, let in-flight requests
// finish for up to `shutdown_grace_ms`, then close every connection and return from Run(), once
// the writes still queued by requests (worker-pool handlers, and Dispatch::kAsync answers, which
// hold their connections) have finished: the store's writer completes them.
//
// Exhaustion: beyond `max_connections` open connections a new one gets a small 503 JSON error
// (`Connection: close`) without its request being read, and is closed
// (cairn_http_connections_refused_total). Accepts never take the process's last file descriptors
// (the listener keeps a few back for the server's own work); when accepting fails (out of
// descriptors) the listener backs off 100 ms between attempts and logs once per 10 s with a count
// (cairn_http_accept_failures_total); open connections are served meanwhile, and it recovers by
// itself once descriptors are free.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "server/request_auth.h"
#include "base/metrics.h"
#include "base/status.h"
#include "bus/ephemeral_hub.h"
#include "bus/event_bus.h"
#include "server/router.h"

namespace cairn::server {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8081;  // 0 picks a free port
  int io_threads = 0;    // 0: hardware threads
  int worker_threads = 32;
  size_t max_body_bytes = 2 * 1024 * 1024;
  size_t max_header_bytes = 16 * 1024;
  // Open connections (event streams included) beyond which a new one is answered 503 and closed.
  int64_t max_connections = 10'000;
  int64_t idle_timeout_ms = 60'000;
  int64_t shutdown_grace_ms = 10'000;
  int64_t sse_heartbeat_ms = 15'000;
  size_t sse_max_queued_frames = 1024;
  int64_t sse_stall_timeout_ms = 30'000;
  size_t event_context_max_bytes = 64 * 1024;
  // Authentication and rate limits of every request (server/request_auth.h); all off by default.
  RequestGuards guards;
};

class HttpServer {
 public:
  // `router`, `metrics`, `bus` and `ephemeral` must outlive the server. `bus` may be null when no
  // route streams events. `ephemeral` (may be null: streams then carry stored events only) is the
  // hub whose events (agent.token) go to the event streams that select them; whoever publishes to
  // it must stop before the server is destroyed.
  HttpServer(HttpServerOptions options, const Router& router, MetricsRegistry& metrics, bus::EventBus* bus,
             bus::EphemeralHub* ephemeral = nullptr);
  ~HttpServer();

  // Binds and listens. Returns the bound port (useful with port 0). Call once, before Run().
  Result<uint16_t> Listen();

  // Serves until Stop() or SIGTERM/SIGINT, then shuts down gracefully. Blocks.
  void Run();

  // Asks Run() to shut down. Thread-safe; idempotent.
  void Stop();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cairn::server
