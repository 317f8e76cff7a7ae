// PgCommitNotifier: tells this process that another process on the same database committed
// events. Every PgWriter batch that appends events sends NOTIFY on kEventsChannel in its own
// transaction (PostgreSQL delivers it at commit, to every listening session); the notifier
// LISTENs on a connection of its own and calls `on_commit` for each notification that did not come
// from this process's writer. Once it listens, at first and after its connection was lost and made
// again, it calls `on_commit` once, for what it may have missed before. `on_commit` must only signal (the bus then reads
// the log).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "store/postgres/pg_connection.h"

namespace cairn::store::postgres {

inline constexpr const char* kEventsChannel = "cairn_events";

class PgCommitNotifier {
 public:
  // `own_backend_pid` returns the server process id of this process's writer connection (its
  // notifications are skipped: the writer hands its events over directly).
  PgCommitNotifier(std::string uri, std::function<int()> own_backend_pid, std::function<void()> on_commit);
  ~PgCommitNotifier();  // Stop()s

  // Starts listening on a thread of its own (it connects there, retrying each second).
  void Start();
  void Stop();

 private:
  void Run();
  // Listens on `conn` until it breaks or Stop; false when stopped.
  bool Listen(PgConnection& conn);

  std::string uri_;
  std::function<int()> own_backend_pid_;
  std::function<void()> on_commit_;
  std::atomic<bool> stopping_{false};
  int wake_pipe_[2] = {-1, -1};  // Stop writes a byte so the poll on the connection returns
  std::thread thread_;
};

}  // namespace cairn::store::postgres
