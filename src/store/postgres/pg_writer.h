// PgWriter: the one writer of a process on a PostgreSQL store, with group commit.
//
// Writes are closures run on one thread that owns the write connection, as with SQLite's
// GroupCommitWriter: the thread takes every write queued since its last commit (up to a batch
// bound), runs each inside its own SAVEPOINT so a failing write rolls back alone, and commits the
// batch once. Across processes, each batch first locks the event log's counter row (SELECT ...
// FOR UPDATE on `event_counter`): batches of all processes commit one at a time, so `seq` is
// given out gap-free in commit order and a reader that has seen seq N has seen every event
// before it. A batch that appended events notifies the other processes at its commit
// (pg_notifier.h). A lost connection fails the batch (kUnavailable) and is replaced before the next.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/metrics.h"
#include "base/status.h"
#include "store/postgres/pg_connection.h"
#include "store/write_queue.h"

namespace cairn::store::postgres {

class PgWriter {
 public:
  using WriteFn = std::function<Status(PgConnection&)>;

  struct Options {
    std::string uri;
    size_t max_batch = 256;    // writes per transaction at most
    size_t max_queue = 10000;  // queued writes beyond this are refused (kResourceExhausted)
    int64_t statement_timeout_ms = 30000;
  };

  // Takes ownership of `conn` (opened on options.uri); starts the writer thread. `metrics` may be null.
  PgWriter(std::unique_ptr<PgConnection> conn, Options options, MetricsRegistry* metrics);
  ~PgWriter();  // Close()s

  // Runs `fn` in the next batch and waits for its commit. Returns fn's Status if it failed (its
  // changes rolled back), an error if the commit failed, kResourceExhausted if the queue is full,
  // and kUnavailable after Close() or while the database cannot be reached.
  Status Submit(WriteFn fn);

  // Queues `fn` like Submit() without waiting: `done` (may be empty) is called on the writer
  // thread with what Submit() would have returned, or at once on the caller's thread when the
  // write is refused (full queue, closed). `fn` and `done` must not wait for other writes.
  void Post(WriteFn fn, std::function<void(Status)> done);

  // Commits what is queued, then stops the thread. Later Submit()s fail with kUnavailable.
  void Close();

  // Runs `listener` on the writer thread after each commit in which at least one write succeeded,
  // with the events the batch appended, in seq order, before the batch's writers are told their
  // results. Returns only when no call of the previous listener is running.
  using CommitListener = CommitListenerSlot::Listener;
  void SetCommitListener(CommitListener listener) { listener_.Set(std::move(listener)); }

  // The server process id of the writer's connection (0 before it connects): the notifications
  // of its commits (PgCommitNotifier) come from it.
  int backend_pid() const { return backend_pid_.load(); }

 private:
  using Pending = WriteQueue<WriteFn>::Pending;
  void CommitBatch(std::deque<Pending>& batch);
  // Opens a new connection when the current one was lost.
  Status EnsureConnected();

  std::unique_ptr<PgConnection> conn_;
  Options options_;
  Histogram* batch_size_ = nullptr;
  Histogram* commit_seconds_ = nullptr;
  WriteQueue<WriteFn> queue_;
  CommitListenerSlot listener_;
  std::atomic<int> backend_pid_{0};
  std::thread thread_;
};

}  // namespace cairn::store::postgres
