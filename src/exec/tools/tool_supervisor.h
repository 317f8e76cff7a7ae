// ToolSupervisor: keeps one executor per tool.v1 definition running in the ExecutorHost.
//
// - At first start (no "system:builtin-tools" marker in the CursorStore) it registers the
//   built-in tools as tool.v1 records at tools/<name> — also when executors do not run, so a
//   request written to an API-only server is answered once executors start. Later starts leave
//   the built-ins as the user left them (changed or deleted).
// - It starts an executor for every stored definition, then follows tool.v1 events: a create or
//   create starts the executor at once; a running executor follows its own definition in its own
//   event stream (ExecutorHost::DefinitionFollower): an update reloads it exactly between the
//   requests written before and after it, and a delete retires it there (everything written
//   before the delete is still answered), after which the supervisor removes it and forgets its
//   cursor. A new executor starts after the event that created its definition (it never answers
//   older requests); a known one resumes at its durable cursor.
// - It runs the "unknown tool" responder: a tool.request.v1 that no definition takes (no tool of
//   that name, or one whose selectors do not take requests) gets an error response with code
//   unknown_tool, so every request is answered. The responder follows the definitions in the same
//   event order as the requests.
// - Without executors (`run_executors` false) it only gives every definition (and the responder)
//   its starting cursor, so what is written meanwhile is processed when executors start.
#pragma once

#include <condition_variable>
#include <map>
#include <utility>
#include <vector>
#include <memory>
#include <mutex>
#include <thread>

#include "exec/executor_host.h"
#include "exec/tools/builtin_tools.h"
#include "store/cursor_store.h"

namespace cairn::exec {

class ToolSupervisor {
 public:
  // Everything passed in must outlive the supervisor; `deps.store` is the store definitions
  // are read from and built-ins written to.
  ToolSupervisor(store::CursorStore& cursors, ExecutorHost& host, BuiltinToolDeps deps, model::Limits limits);
  ~ToolSupervisor();  // Stop()s
  ToolSupervisor(const ToolSupervisor&) = delete;
  ToolSupervisor& operator=(const ToolSupervisor&) = delete;

  // With `run_executors` false, definitions only get their cursors (see above); with
  // `builtin_tools` false nothing is registered (a later start with it true registers them).
  Status Start(bool run_executors, bool builtin_tools = true);
  // Stops following definitions (the host keeps running its executors until it stops). Idempotent.
  void Stop();

 private:
  Status RegisterBuiltinsOnce();
  // Starts or reloads the executor of a definition (without executors: gives it a cursor at
  // `start_seq` if it has none). False when the definition cannot be run.
  bool ApplyDefinition(const std::string& id, int64_t version, const std::string& owner_id,
                       const boost::json::value& context, int64_t start_seq);
  // The DefinitionFollower of a tool's executor.
  bool Follow(const model::Event& event);
  Status EnsureCursor(const std::string& consumer, int64_t start_seq);
  void Loop(int64_t after);
  // Removes the consumers that retired at their definition's deletion (or became unusable).
  void ReapRetired();

  store::CursorStore& cursors_;
  ExecutorHost& host_;
  BuiltinToolDeps deps_;
  model::Limits limits_;
  bool run_executors_ = true;
  std::mutex apply_mu_;                    // ApplyDefinition from the loop and from followers
  std::map<std::string, int64_t> loaded_;  // definition id -> version applied (apply_mu_)
  std::vector<std::pair<std::string, bool>> retired_;  // (definition id, deleted) to remove (apply_mu_)
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool woken_ = false;
  std::unique_ptr<bus::Subscription> subscription_;
  std::thread thread_;
};

}  // namespace cairn::exec
