// SessionWorker: runs the executions of sessions (docs/sessions.md "Executions").
//
// A pool of threads takes sessions that have work: per session one execution at a time, oldest
// first. An execution runs the session's agent directly (its agent.def.v1, whatever its trigger
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
// continue after the next start).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/uuid.h"
#include "exec/agents/agent_executor.h"
#include "exec/executor_host.h"
#include "exec/watchdog.h"
#include "model/limits.h"
#include "store/store.h"

namespace cairn::sessions {

class SessionWorker {
 public:
  // Everything passed in must outlive the worker. Runs are registered in `host`'s RunRegistry
  // (so cancelling one cancels the tool runs it caused), or in the worker's own when `host` is
  // null.
  SessionWorker(store::Store& store, exec::AgentDeps deps, exec::ExecutorHost* host, const Clock& clock,
                model::Limits limits, int workers);
  ~SessionWorker();  // Stop()s
  SessionWorker(const SessionWorker&) = delete;
  SessionWorker& operator=(const SessionWorker&) = delete;

  // Starts the threads and schedules the sessions that have unfinished executions.
  Status Start();
  // The session may have work (new message, an answer).
  void Schedule(const std::string& owner_id, const std::string& session_id);
  // Stops a running execution and its descendants (it ends cancelled). False when it does not
  // run here.
  bool Cancel(const std::string& owner_id, const std::string& execution_id);
  void Stop();

 private:
  struct Running;
  class Observer;
  void Loop();
  void RunSession(const std::string& owner_id, const std::string& session_id);
  // Runs one execution to its end (or pause); false when the session should not go on now (the
  // worker is stopping, or the execution could not be started for a reason that would repeat).
  bool RunExecution(const std::string& owner_id, const model::Breadcrumb& execution);

  store::Store& store_;
  exec::AgentDeps deps_;
  exec::RunRegistry own_runs_;
  exec::RunRegistry& runs_;
  const Clock& clock_;
  model::Limits limits_;
  int worker_count_;
  UuidV7Generator ids_;
  exec::Watchdog watchdog_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::atomic<bool> stopping_{false};  // stop_, readable without mu_ (write retries)
  std::deque<std::pair<std::string, std::string>> queue_;  // (owner, session) with work
  std::set<std::pair<std::string, std::string>> queued_, busy_;
  std::map<std::string, std::shared_ptr<Running>> running_;  // execution id -> its run
  std::vector<std::thread> threads_;
};

}  // namespace cairn::sessions
