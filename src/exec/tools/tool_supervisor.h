// ToolSupervisor: keeps one executor per tool.v1 definition running in the ExecutorHost.
//
// - At first start (no "system:builtin-tools" marker in the CursorStore) it registers the
//   built-in tools as tool.v1 records at tools/<name>; later starts leave them as the user left
//   them (changed or deleted).
// - It starts an executor for every stored definition, then follows tool.v1 events: a create or
//   update starts or reloads the executor at once, a delete stops it and forgets its cursor. A
//   new executor starts after the event that created its definition (it never answers older
//   requests); a known one resumes at its durable cursor.
// - It runs the "unknown tool" responder: a tool.request.v1 that no definition answers (no
//   tool of that name, or one whose selectors do not take requests) gets an error response
//   with code unknown_tool, so every request is answered.
#pragma once

#include <condition_variable>
#include <map>
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

  Status Start();

  // The running tool executors by name (shared with the unknown-tool responder).
  struct LoadedTools;
  // Stops following definitions (the host keeps running its executors until it stops). Idempotent.
  void Stop();

 private:
  Status RegisterBuiltinsOnce();
  void ApplyDefinition(const std::string& id, int64_t version, const std::string& owner_id,
                       const boost::json::value& context, int64_t start_seq);
  void Loop(int64_t after);
  // Drops a definition from loaded_ and the name registry (its executor is removed by the caller).
  void Forget(const std::string& id);

  store::CursorStore& cursors_;
  ExecutorHost& host_;
  BuiltinToolDeps deps_;
  model::Limits limits_;
  std::map<std::string, int64_t> loaded_;  // definition id -> version running (loop thread only)
  std::map<std::string, std::string> names_;  // definition id -> tool name (loop thread only)
  std::shared_ptr<LoadedTools> tools_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool woken_ = false;
  std::unique_ptr<bus::Subscription> subscription_;
  std::thread thread_;
};

}  // namespace cairn::exec
