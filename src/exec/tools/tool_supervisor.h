// ToolSupervisor: keeps one executor per tool.v1 definition running in the ExecutorHost.
//
// - At the first start of each tenant (no "system:builtin-tools" marker of the tenant in the
//   CursorStore) it registers the built-in tools as tool.v1 records at tools/<name> of that tenant
//   — also when executors do not run, so a request written to an API-only server is answered once
//   executors start. Later starts leave the built-ins as the user left them (changed or deleted).
//   A tenant created while the server runs gets them from InstallBuiltins.
// - It keeps one executor per tool.v1 definition running (definition_supervisor.h: starts,
//   reloads and retires them in each executor's own event order).
// - It runs the "unknown tool" responder: a tool.request.v1 that no definition takes (no tool of
//   that name, or one whose selectors do not take requests) gets an error response with code
//   unknown_tool, so every request is answered. The responder follows the definitions in the same
//   event order as the requests.
// - Without executors (`run_executors` false) it only gives every definition (and the responder)
//   its starting cursor, so what is written meanwhile is processed when executors start.
#pragma once

#include <memory>

#include "exec/definition_supervisor.h"
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

  // Runs the definitions of every tenant in `tenants` (and those written later, in any tenant).
  // With `run_executors` false, definitions only get their cursors (see above); with
  // `builtin_tools` false nothing is registered (a later start with it true registers them).
  Status Start(bool run_executors, bool builtin_tools, const std::vector<std::string>& tenants);
  // Registers the built-in tools in `tenant` unless they were registered there before (its marker).
  Status InstallBuiltins(const std::string& tenant);
  // Stops following definitions (the host keeps running its executors until it stops). Idempotent.
  void Stop();

 private:
  // The executor answering requests for tools that do not exist, knowing the stored definitions
  // of `tenants` that it has not seen in its event stream yet.
  Result<std::shared_ptr<Executor>> NewResponder(const std::vector<std::string>& tenants);

  store::CursorStore& cursors_;
  ExecutorHost& host_;
  BuiltinToolDeps deps_;
  model::Limits limits_;
  std::unique_ptr<DefinitionSupervisor> definitions_;
};

}  // namespace cairn::exec
