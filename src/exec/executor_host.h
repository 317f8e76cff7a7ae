// ExecutorHost: runs executors on the committed event stream, the same way for every kind
// (DESIGN.md §5):
//
//   event -> trigger subscription matches (same owner, not written by the executor itself)
//         -> claim (store/claim_store.h): a small row per (executor, trigger id, version); a
//            repeated claim whose execution record exists means "done already"
//         -> guard: trace depth of the trigger == max_depth answers with an error, unrun; a
//            trigger deeper still (caused by such an answer) is dropped, so loops end
//         -> assemble the context (context_assembler.h) -> Executor::Run under a timeout
//         -> one transaction: the response (idempotency key per trigger) + the finished
//            agent.execution.v1 record (execution_record.h) at executions/<id>, the id derived
//            from (executor, trigger), so a trigger is never answered twice; the claim is
//            released afterwards (with the cursor saves). While it runs, the run is in runs().
//            A tool request written by a run makes the tool's run its child (lineage).
//
// Exactly once: an executor consumes the bus with a durable cursor (CursorStore, named by
// consumer_id). The cursor only passes an event once its claim is committed; runs claimed but
// unfinished when the process died are found by their claims when the executor starts and are
// run again (attempt + 1). A trigger with an execution record is never run or answered again.
// Across processes (one PostgreSQL store, several workers: docs/deploy.md) the consumers are
// sharded: with HostOptions::shards each consumer belongs to the shard ShardOf(consumer_id)
// (base/shard.h), and runs only while this host holds that shard (TakeShard). A shard is held by
// one process at a time (store/postgres/pg_shard_leases.h); giving one up (ReleaseShard) stops its
// consumers and waits for their runs in flight before the next holder may start them
// (ShardReleased), which then resumes from the stored cursors and claims, as after a restart.
//
// Paused runs: a run may end paused (RunResult::paused: a sub-agent waiting for its user). Its
// record says `paused`, it writes no response, gives up its worker and keeps its claim; it runs
// again — the same execution, attempt + 1, resuming from its snapshots — when a tool.response.v1
// or agent.response.v1 answers one of the request ids it awaits (read on the consumer's stream,
// or found stored when it paused), when its tree is cancelled (it starts cancelled), and after a
// restart (its claim). The end then updates the paused record.
//
// Concurrency: each executor's consumer is a member of the host's ConsumerPool
// (bus/consumer_pool.h): a few threads read the bus for every executor, so a thousand definitions
// add no threads. Each executor runs at most spec.concurrency triggers at once (at its limit its
// consumer holds the trigger and returns; a finishing run wakes it, so a busy executor holds back
// only its own stream); the runs are jobs on the runtime's pools (runtime.h), shared with session
// runs. Stop() cancels the host's runs in flight
// and writes nothing for them: they run again after restart.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/metrics.h"
#include "bus/event_bus.h"
#include "exec/context_assembler.h"
#include "exec/execution_record.h"
#include "exec/executor.h"
#include "exec/job_group.h"
#include "exec/run_registry.h"
#include "exec/runtime.h"
#include "search/searcher.h"
#include "store/claim_store.h"
#include "store/cursor_store.h"
#include "store/store.h"

namespace cairn::exec {

struct HostOptions {
  int64_t max_depth = 16;    // a trigger whose trace.depth reaches this is refused
  int max_concurrency = 64;  // cap on any executor's own concurrency
  size_t read_batch = 256;   // events read from the bus at a time
  std::chrono::milliseconds cursor_save_interval{250};
  // Threads that read the bus for every executor (their runs go to the runtime's pools): fixed,
  // however many executors there are.
  int consumer_threads = 2;
  const search::Searcher* searcher = nullptr;  // for fetch: search|vector subscriptions; may be null
  // A run's context holds only what the principal that wrote its trigger may read; null: everything.
  ReaderFor reader_for = nullptr;
  // 0: every consumer runs here. Else consumers are spread over this many shards and run only
  // while their shard is taken (TakeShard); every process sharing the store must use the same count.
  int shards = 0;
  // How long a released shard's runs in flight may take to end before they are interrupted (they
  // write nothing and run again in the shard's next holder, from their snapshots).
  std::chrono::milliseconds handover_grace{10000};
};

// The executor a dormant consumer starts with when its shard is taken, built from its definition
// as stored now (a definition changed meanwhile starts as changed, as after a restart). nullopt:
// there is nothing to run any more (the definition is gone or not usable).
using ExecutorRefresh =
    std::function<Result<std::optional<std::pair<ExecutorSpec, std::shared_ptr<Executor>>>>()>;

class ExecutorHost {
 public:
  // Everything passed in must outlive the host. `metrics` may be null. Executors that wait on
  // others (ExecutorSpec::waits_on_executors) run on the runtime's waiting pool.
  ExecutorHost(store::Store& store, store::CursorStore& cursors, store::ClaimStore& claims, bus::EventBus& bus,
               const Clock& clock, Runtime& runtime, HostOptions options, MetricsRegistry* metrics);
  ~ExecutorHost();  // Stop()s
  ExecutorHost(const ExecutorHost&) = delete;
  ExecutorHost& operator=(const ExecutorHost&) = delete;

  // Called in a step of the consumer with each event about the executor's own definition
  // (spec.definition_id), before the events after it: a reload done from here (Upsert) applies
  // from the next event on, so a request written after a definition changed is never run by the
  // old one. Returning false stops the consumer there (the definition is gone); it must not call
  // Remove for its own consumer (Remove waits for the step it would be called from).
  using DefinitionFollower = std::function<bool(const model::Event&)>;

  // Starts the executor, or reloads it when one with the same consumer_id runs (later triggers
  // use the new spec and executor; runs in flight finish with the old). A new consumer resumes
  // at its stored cursor, or starts after `start_seq` when it has none. Sharded, a consumer whose
  // shard is not held here is kept dormant (replacing an earlier dormant one) and starts when the
  // shard is taken, from `refresh` when given; it touches neither cursor nor claims meanwhile
  // (only Remove with forget_cursor deletes them).
  Status Upsert(ExecutorSpec spec, std::shared_ptr<Executor> executor, int64_t start_seq,
                DefinitionFollower follow = {}, ExecutorRefresh refresh = {});

  // Stops the executor's consumer (runs in flight finish), or forgets it when dormant. With
  // `forget_cursor`, its stored cursor is deleted too (the definition is gone).
  void Remove(const std::string& consumer_id, bool forget_cursor);

  // Whether `consumer_id` runs here (started and not dormant).
  bool Runs(const std::string& consumer_id);

  // Sharded only. Starts the shard's dormant consumers (each from its refresh, when it has one; one
  // whose definition is gone or unusable catches up to that change and retires there when it has a
  // cursor, else is dropped); from now on its consumers start at Upsert.
  void TakeShard(int shard);
  // Stops the shard's consumers (from now on they stay dormant): waits for a step of theirs in
  // progress (and saves their cursors), not for their runs in flight. ShardReleased tells when those
  // ended.
  void ReleaseShard(int shard);
  // True once nothing of a released shard runs here any more: another process may take the shard.
  // Its cursors are then saved and its finished claims released (a save that fails is logged; the
  // claims stay, so the next holder skips those runs). Runs still in flight after
  // HostOptions::handover_grace are interrupted (ExecutorHost's shutdown rule: nothing written, the
  // claim kept). Polled; not blocking.
  bool ShardReleased(int shard);
  // Sharded only. Starts again what could not start when its shard was taken (a store error).
  // Called periodically.
  void Tick();
  // The shards held (TakeShard, not released).
  size_t ShardsHeld();

  // Stops every consumer, cancels the host's runs in flight (nothing is written for them) and
  // returns when none runs. Idempotent.
  void Stop();

  std::vector<std::string> ConsumerIds();

  // Cancels the runs in flight whose trigger is breadcrumb `trigger_id` (a tool request whose
  // requester gave up): their cancel flag is set and they answer as they do when cancelled (the
  // record says `cancelled`). A trigger whose run has not started yet is remembered (the latest
  // 1,024) and its run starts cancelled. Returns how many runs in flight were told.
  size_t CancelRunsOf(const std::string& trigger_id);

  // CancelTree of runs() for a cancel made through another process of a cluster (an execution's
  // record now says cancelled), on a worker thread: safe to call from the bus's thread.
  void CancelTreeSoon(const std::string& owner_id, const std::string& execution_id);

  // The runtime's registry of the runs in flight in this process (the host's, session runs):
  // cancel a tree, see what runs now.
  RunRegistry& runs();

 private:
  class Consumer;
  struct Shared;
  // The paused runs of a cancelled tree or trigger run again (RunRegistry::PausedWaker).
  size_t WakePaused(const std::string& owner_id, const std::string& execution_id, const std::string& trigger_id);

  // A consumer that does not run here (its shard is not held), as Upsert was given it.
  struct Dormant {
    ExecutorSpec spec;
    std::shared_ptr<Executor> executor;
    int64_t start_seq = 0;
    DefinitionFollower follow;
    ExecutorRefresh refresh;
  };
  bool HeldLocked(const std::string& consumer_id) const;  // mu_
  Status StartLocked(Dormant entry);                        // mu_

  std::shared_ptr<Shared> shared_;
  std::mutex mu_;
  bool stopped_ = false;
  std::map<std::string, std::shared_ptr<Consumer>> consumers_;
  std::map<std::string, Dormant> dormant_;  // sharded: consumers whose shard is not held (mu_)
  std::set<int> held_shards_;               // mu_
  // Released shards whose consumers' runs may still be going on (mu_).
  struct Releasing {
    std::vector<std::shared_ptr<Consumer>> consumers;
    std::chrono::steady_clock::time_point deadline;  // then their runs are interrupted
    bool interrupted = false;
  };
  std::map<int, Releasing> releasing_;
};

}  // namespace cairn::exec
