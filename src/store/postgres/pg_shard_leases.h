// PgShardLeases: spreads the shards of one kind of work over the processes of a cluster that do it
// (the executors of `cairn serve --work executors` on a PostgreSQL store: docs/deploy.md), each
// shard held by one process at a time.
//
// Every lock is a PostgreSQL session advisory lock on a connection of the leases' own, as PgLease
// does: a process that dies (kill -9 included) releases all its shards the moment that connection
// ends. Each process also holds one member lock (one of `max_members` slots), so that every process
// counts the members in pg_locks and holds its fair share, ceil(shards / members). Each `period`:
//  - a shard being given up is unlocked once `released(shard)` says nothing of it runs here;
//  - shards above the share are given up: `release(shard)` is called (it stops the shard's work
//    from going further, without waiting for its runs in flight), and the lock stays held until
//    `released` is true;
//  - free shards are taken up to the share, `take(shard)` called after each lock;
//  - `tick` is called: what the shards taken in this round need at once (a scan for all of them),
//    and what could not start when its shard was taken, tried again.
// So a process that joins gets its share as the others give theirs up, and the shards of a process
// that died are taken within a period. The callbacks run on the leases' thread, one at a time.
//
// `legacy_key`, when set, is the key of a lease under which a process of an older version did the
// whole of this work: the leases hold it shared before taking any shard, so an older process (which
// locks it exclusively) and these never do the work together.
//
// A holder whose connection breaks can no longer tell whether another process took its shards over,
// so it must stop the work at once: `on_lost` is called (from the leases' thread), and the leases do
// nothing more.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "base/status.h"
#include "store/postgres/pg_connection.h"

namespace cairn::store::postgres {

class PgShardLeases {
 public:
  struct Options {
    std::string uri;
    int64_t shard_key = 0;   // shard n is the advisory lock shard_key + n
    int64_t member_key = 0;  // member slot n is the advisory lock member_key + n
    int shards = 64;
    int max_members = 64;
    std::chrono::milliseconds period{1000};
    int64_t legacy_key = 0;
    std::string purpose = "the background work";  // what the shards are of, for the log
  };
  struct Callbacks {
    std::function<void(int shard)> take;
    std::function<void(int shard)> release;
    std::function<bool(int shard)> released;
    std::function<void()> tick;  // may be null
    std::function<void()> on_lost;
  };

  explicit PgShardLeases(Options options);
  ~PgShardLeases();  // Stop()s
  PgShardLeases(const PgShardLeases&) = delete;
  PgShardLeases& operator=(const PgShardLeases&) = delete;

  // Starts taking shards on a thread of its own; returns at once. A database it cannot reach is
  // tried again each period, with a warning. Call once.
  void Start(Callbacks callbacks);
  // Ends the thread (no callback runs after this returns) but keeps every lock: the caller stops the
  // shards' work, then calls Stop. Idempotent.
  void Halt();
  // Halt, then releases every lock (closes the connection). Idempotent.
  void Stop();

  // The shards held now, those being given up included.
  size_t held() const { return held_count_.load(); }
  // The members counted at the last period (0 before the first).
  int members() const { return members_.load(); }

 private:
  void Loop();
  // One period's work; an error means the connection cannot be trusted.
  Status Balance();
  Status Unlock(int64_t key);
  // The locks among first_key .. first_key + count - 1 that some session of the database holds, as
  // offsets from first_key.
  Result<std::set<int>> Locked(int64_t first_key, int count);
  bool Pause(std::chrono::milliseconds period);

  Options options_;
  Callbacks callbacks_;
  std::unique_ptr<PgConnection> conn_;  // the leases' thread's only, until Stop
  int member_slot_ = -1;
  bool legacy_held_ = false;   // Options::legacy_key, shared
  bool legacy_logged_ = false;
  std::set<int> held_;       // locked and working
  std::set<int> releasing_;  // locked, given up, waiting for `released`
  int next_try_ = 0;         // where the next search for a free shard starts
  size_t logged_held_ = 0;
  std::atomic<size_t> held_count_{0};
  std::atomic<int> members_{0};
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace cairn::store::postgres
