// PgLease: a database-wide lease held by one process at a time, for work that must run in one
// process of a cluster only (the executors, session workers, webhook delivery and the sweep of
// `cairn serve`: docs/deploy.md).
//
// The lease is a PostgreSQL session advisory lock on a connection of the lease's own: the server
// releases it the moment that connection ends, so a process that dies (kill -9 included) hands it
// over at once, and its successor resumes the work from what the store holds (cursors, claims,
// snapshots). A holder whose connection breaks can no longer tell whether another process took
// over, so it must stop that work at once: `on_lost` is called (from the lease's thread).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "base/status.h"
#include "store/postgres/pg_connection.h"

namespace cairn::store::postgres {

class PgLease {
 public:
  struct Options {
    std::string uri;
    int64_t key = 0;  // the advisory lock's key: one lease per key and database
    std::chrono::milliseconds retry{1000};  // how often a waiting process tries again
    std::chrono::milliseconds check{1000};  // how often the holder checks its connection
    std::string purpose = "the background work";  // what the lease guards, for the log
  };
  explicit PgLease(Options options);
  ~PgLease();  // Stop()s; the lease is released with the connection

  // Blocks until this process holds the lease (kOk) or Stop() was called (kUnavailable); a
  // database it cannot reach meanwhile is tried again each `retry`, with a warning. Then watches
  // the connection on a thread of its own and calls `on_lost` once if it breaks. Call once.
  Status Acquire(std::function<void()> on_lost);
  // Ends a wait in Acquire (which then returns kUnavailable) and the watching, without touching
  // the connection: safe from any thread, also while Acquire runs.
  void RequestStop();
  // RequestStop, then waits for the watcher and releases the lease (closes the connection).
  // Idempotent; call it from the thread that called Acquire, or once Acquire has returned.
  void Stop();
  bool held() const { return held_.load(); }

 private:
  Result<bool> TryLock();
  void Watch(std::function<void()> on_lost);
  // Waits `period` or until Stop; returns false once stopped.
  bool Pause(std::chrono::milliseconds period);

  Options options_;
  std::unique_ptr<PgConnection> conn_;
  std::atomic<bool> held_{false};
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread watcher_;
};

}  // namespace cairn::store::postgres
