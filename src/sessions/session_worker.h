// SessionWorker: runs the executions of sessions (docs/sessions.md "Executions").
//
// Sessions that have work are lanes of a LaneScheduler on the runtime's waiting pool (shared with
// agent runs): per session one execution at a time, oldest first, at most `max_sessions` sessions
// at once. An execution runs the session's agent directly (its agent.def.v1, whatever its trigger
// selectors say) through exec::AgentRun, with the context its subscriptions assemble, the
// session's last 20 user/assistant messages as history and the execution's message as the
// question. Lifecycle writes (each with its info or
// notification message, in one transaction): running + "Execution started"; per step and tool
// call the observer's info messages; at the end completed (assistant message, output, usage, a
// final snapshot, the session's last_* fields and token totals), failed (error {code, message}),
// cancelled, or paused (a user_input question).
//
// Crash recovery: Start() schedules every session with a pending or running execution; a running
// one continues from its newest snapshot (AgentRun), so completed model and tool calls are not
// repeated. Stop() cancels runs in flight and writes nothing for them (they stay running and
// continue after the next start). Deadlines are the runtime's watchdog; runs are registered in
// the runtime's registry, through which a cancel reaches them and their tool runs.
//
// Sharded (several processes share the sessions: docs/deploy.md; EnableShards), a session belongs
// to the shard ShardOf(session id) (base/shard.h) and runs here only while this worker holds that
// shard (TakeShard). A shard given up (ReleaseShard) lets each of its sessions finish the execution
// it is running and starts no other; ShardReleased says when none runs, and the next holder's
// TakeShard finds their unfinished executions, as a restart would.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "base/uuid.h"
#include "exec/agents/agent_executor.h"
#include "exec/job_group.h"
#include "exec/lane_scheduler.h"
#include "exec/runtime.h"
#include "model/limits.h"
#include "store/store.h"

namespace cairn::sessions {

class SessionWorker {
 public:
  // Everything passed in must outlive the worker.
  SessionWorker(store::Store& store, exec::AgentDeps deps, exec::Runtime& runtime, const Clock& clock,
                model::Limits limits, int max_sessions);
  ~SessionWorker();  // Stop()s
  SessionWorker(const SessionWorker&) = delete;
  SessionWorker& operator=(const SessionWorker&) = delete;

  // Before Start: spreads the sessions over `shards` shards, of which this worker runs those it
  // takes; `tenants` lists the tenants whose sessions a shard taken is scanned for.
  void EnableShards(int shards, std::function<std::vector<std::string>()> tenants);
  // Schedules the sessions of `tenants` that have unfinished executions (the recovery scan; when
  // sharded, of the shards held, none at first).
  Status Start(const std::vector<std::string>& tenants);
  // Sharded only. From now on the shard's sessions run here; those with unfinished executions are
  // scheduled at the next Tick (once started).
  void TakeShard(int shard);
  // Sharded only. Schedules the unfinished executions of the shards taken since the last Tick (or
  // whose scan failed then), in one scan. Called periodically, and after a round of TakeShard.
  void Tick();
  // The shard's sessions start no new execution here; those running finish theirs.
  void ReleaseShard(int shard);
  // True once none of a released shard's sessions runs here any more. Polled; not blocking.
  bool ShardReleased(int shard);
  // The shards held now.
  size_t ShardsHeld();
  // The session may have work (new message, an answer). Ignored before Start(), whose scan finds
  // that work: a process that does not run sessions (--role api, a standby waiting for the lease,
  // --run-executors=false) never runs one.
  void Schedule(const std::string& owner_id, const std::string& session_id);
  // Stops a running execution and its descendants (it ends cancelled). False when it does not
  // run here.
  bool Cancel(const std::string& owner_id, const std::string& execution_id);
  // Cancel, from a thread that must only signal (the bus's): it runs as a short job on the
  // runtime's pool. Ignored before Start() (no run of this process can be running then).
  void CancelSoon(const std::string& owner_id, const std::string& execution_id);
  // No execution starts after this; the ones running are cancelled and record nothing (they go
  // on after the next start). Returns when none runs. Idempotent.
  void Stop();

 private:
  class Observer;
  void RunSession(const std::string& owner_id, const std::string& session_id);
  // Schedules the sessions of `tenants` with unfinished executions: those in the shards `only` of
  // `shards`, or all when `shards` is 0.
  Status ScanUnfinished(const std::vector<std::string>& tenants, int shards, const std::set<int>& only);
  // Whether the session runs here (its shard is held); if so it counts as running until Leave.
  bool Enter(const std::string& session_id);
  void Leave(const std::string& session_id);
  // Whether the session's shard is held (always, unsharded).
  bool Holds(const std::string& session_id);
  // RunSession between Enter and Leave.
  void RunHeldSession(const std::string& owner_id, const std::string& session_id);
  // Runs one execution to its end (or pause); false when the session should not go on now (the
  // worker is stopping, or the execution could not be started for a reason that would repeat).
  bool RunExecution(const std::string& owner_id, const model::Breadcrumb& execution);

  store::Store& store_;
  exec::AgentDeps deps_;
  exec::Runtime& runtime_;
  const Clock& clock_;
  model::Limits limits_;
  UuidV7Generator ids_;
  exec::JobGroup jobs_;
  exec::LaneScheduler lanes_;  // (tenant, session id)
  std::atomic<bool> stopping_{false};  // write retries stop with the worker
  std::atomic<bool> started_{false};   // Schedule() runs sessions only after Start()
  // Sharding (EnableShards): the shards held, and the sessions of each running now.
  std::mutex shard_mu_;
  int shards_ = 0;
  std::function<std::vector<std::string>()> tenants_;
  std::set<int> held_shards_;
  std::set<int> unscanned_;  // held, their unfinished executions not yet scheduled
  std::map<int, int> running_by_shard_;
};

}  // namespace cairn::sessions
