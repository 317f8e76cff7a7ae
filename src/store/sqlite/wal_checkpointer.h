// WalCheckpointer: copies the write-ahead log back into the database file on a thread of its own,
// so the single writer does not pay for checkpoints inside its commits.
//
// SQLite's automatic checkpoint runs in the connection that commits, right after the commit: with
// one writer that is the writer thread, which then copies up to a thousand pages and (at --sync
// full) fsyncs the database file while every queued write waits. It was 12.7 % of the server's
// CPU on the write path (docs/performance.md). Here the writer's connection has no automatic
// checkpoint; its WAL hook (Attach) tells the checkpointer how long the log is after each commit,
// and once `start_pages` frames have been appended since what was last copied, the checkpointer
// runs a PASSIVE checkpoint on a connection of its own: that never blocks the writer or a reader,
// and copies every frame no reader still needs.
//
// The log starts again from its beginning only at a write transaction that finds every frame
// copied, which a checkpoint running beside continuous writes never leaves. So at `inline_pages`
// the hook checkpoints in the commit itself, as SQLite would have done all along: it copies only
// what the thread has not yet (less than `start_pages`), and the next write restarts the log,
// which therefore stays below about `inline_pages`. Durability does not change: a commit is
// durable in the log before any checkpoint, and kill -9 in the middle of one loses nothing (the
// log is replayed).
#pragma once

#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "base/metrics.h"
#include "base/status.h"
#include "store/sqlite/connection.h"

namespace cairn::store::sqlite {

class WalCheckpointer {
 public:
  struct Options {
    int64_t start_pages = 1000;   // frames not yet copied that wake the thread (SQLite's threshold)
    int64_t inline_pages = 4000;  // the writer checkpoints itself from here on (16 MiB of 4 KiB pages)
  };

  // Opens its own connection to `path` (with `synchronous`, which decides whether a checkpoint
  // fsyncs the database file) and starts its thread. `metrics` may be null.
  static Result<std::unique_ptr<WalCheckpointer>> Start(const std::string& path, const std::string& synchronous,
                                                        Options options, MetricsRegistry* metrics);
  ~WalCheckpointer();  // Stop()s

  // Turns off `writer`'s automatic checkpoint and installs the hook that hands checkpoints to this
  // object. Call before `writer` commits anything; `writer` must be closed (or detached with
  // Detach) before this object is destroyed.
  void Attach(Connection& writer);
  // Gives `writer` its automatic checkpoint back (SQLite's default).
  static void Detach(Connection& writer);

  // Ends the thread after the checkpoint in progress, if any. Idempotent.
  void Stop();

  // Checkpoints run by the thread, and in commits because the log reached `inline_pages`.
  int64_t background_checkpoints() const { return background_.load(); }
  int64_t inline_checkpoints() const { return inline_.load(); }
  // Whether `count` background checkpoints have ended, waiting up to `timeout`; for tests.
  bool WaitForCheckpoints(int64_t count, std::chrono::milliseconds timeout);

 private:
  WalCheckpointer(std::unique_ptr<Connection> conn, Options options, MetricsRegistry* metrics);
  // The WAL hook: on the writer's thread, after each commit, with the log's length in pages.
  static int OnCommit(void* self, sqlite3* db, const char* schema, int pages);
  void Run();

  std::unique_ptr<Connection> conn_;
  const Options options_;
  Counter* background_counter_ = nullptr;
  Counter* inline_counter_ = nullptr;
  Histogram* seconds_ = nullptr;
  std::atomic<int64_t> background_{0};
  std::atomic<int64_t> inline_{0};
  // Frames of the log the last checkpoint copied; a log shorter than that has started again.
  std::atomic<int64_t> copied_{0};
  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable done_;
  bool wanted_ = false;  // a commit left the log at start_pages or more
  bool stopping_ = false;
  int64_t finished_ = 0;  // background checkpoints ended (guarded by mu_, for WaitForCheckpoints)
  std::thread thread_;
};

}  // namespace cairn::store::sqlite
