// GroupCommitWriter: the single writer of a SQLite database.
//
// Writes are closures run on one thread that owns the write connection. The thread takes every
// write queued since its last commit (up to a batch bound), runs each inside its own SAVEPOINT so
// a failing write rolls back alone, and commits the batch once: many concurrent requests share one
// fsync. Submit() returns only after the batch holding the write is durable (or failed).
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/metrics.h"
#include "base/status.h"
#include "store/sqlite/connection.h"
#include "store/write_queue.h"

namespace cairn::store::sqlite {

class GroupCommitWriter {
 public:
  using WriteFn = std::function<Status(Connection&)>;

  struct Options {
    size_t max_batch = 256;       // writes per transaction at most
    size_t max_queue = 10000;     // queued writes beyond this are refused (kResourceExhausted)
    // Run after a batch's writes, before COMMIT, outside their savepoints (each one statement),
    // when the query `before_commit_when` returns a row (or is empty); a failure fails the whole
    // batch. The store's deferred full-text indexing (migration 6).
    std::string before_commit_when;
    std::vector<std::string> before_commit;
  };

  // Takes ownership of `conn`; starts the writer thread. `metrics` may be null.
  GroupCommitWriter(std::unique_ptr<Connection> conn, Options options, MetricsRegistry* metrics);
  ~GroupCommitWriter();  // Close()s

  // Runs `fn` in the next batch and waits for its commit. Returns fn's Status if it failed (its
  // changes rolled back), an error if the commit failed, kResourceExhausted if the queue is full,
  // and kUnavailable after Close().
  Status Submit(WriteFn fn);

  // Queues `fn` like Submit() without waiting: `done` (may be empty) is called on the writer
  // thread with what Submit() would have returned, or at once on the caller's thread when the
  // write is refused (full queue, closed). For writes nobody waits for, such as the store's own
  // reports; `fn` and `done` must not wait for other writes.
  void Post(WriteFn fn, std::function<void(Status)> done);

  // Commits what is queued, then stops the thread. Later Submit()s fail with kUnavailable.
  void Close();

  // Runs `listener` on the writer thread after each commit in which at least one write succeeded,
  // with the events the batch appended (Connection::staged_events), in seq order, before the
  // batch's writers are told their results (an acknowledged write's events are published). Returns only
  // when no call of the previous listener is running, so whatever it captured may be destroyed
  // then. `listener` must not call SetCommitListener itself.
  using CommitListener = CommitListenerSlot::Listener;
  void SetCommitListener(CommitListener listener) { listener_.Set(std::move(listener)); }

 private:
  using Pending = WriteQueue<WriteFn>::Pending;
  void CommitBatch(std::deque<Pending>& batch);
  Status BeforeCommit();  // options_.before_commit, when before_commit_when says so

  std::unique_ptr<Connection> conn_;
  Options options_;
  Histogram* batch_size_ = nullptr;
  Histogram* commit_seconds_ = nullptr;
  WriteQueue<WriteFn> queue_;
  CommitListenerSlot listener_;
  std::thread thread_;
};

}  // namespace cairn::store::sqlite
