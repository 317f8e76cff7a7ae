// WorkflowSupervisor: keeps one WorkflowExecutor per workflow.def.v1 definition running (the
// lifecycle is definition_supervisor.h's: create starts, update reloads, delete retires, each in
// the executor's own event order). Workflow runs wait for their steps' runs, so they go to the
// runtime's waiting pool.
#pragma once

#include <memory>

#include "exec/definition_supervisor.h"
#include "exec/workflows/step_call.h"
#include "model/limits.h"
#include "store/cursor_store.h"

namespace cairn::exec {

// The definition parsed and its CEL compiled: what a workflow.def.v1 write is checked with
// (reserved_schema_store.h) and what the supervisor runs.
Result<std::pair<model::WorkflowDefinition, std::shared_ptr<const class CompiledWorkflow>>> LoadWorkflowDefinition(
    const boost::json::value& context, const model::Limits& limits);

class WorkflowSupervisor {
 public:
  // Everything passed in must outlive the supervisor.
  WorkflowSupervisor(store::CursorStore& cursors, ExecutorHost& host, WorkflowDeps deps, model::Limits limits);
  ~WorkflowSupervisor();  // Stop()s
  WorkflowSupervisor(const WorkflowSupervisor&) = delete;
  WorkflowSupervisor& operator=(const WorkflowSupervisor&) = delete;

  // Runs the workflows of every tenant in `tenants` (and those written later, in any tenant).
  Status Start(bool run_executors, const std::vector<std::string>& tenants);
  void Stop();

 private:
  store::CursorStore& cursors_;
  ExecutorHost& host_;
  WorkflowDeps deps_;
  model::Limits limits_;
  std::unique_ptr<DefinitionSupervisor> definitions_;
};

}  // namespace cairn::exec
