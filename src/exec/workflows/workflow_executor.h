// WorkflowExecutor: a workflow as an Executor (docs/workflows.md). The host runs it like any
// executor — claims, lineage, timeout, cancel, the execution record and the answer in one
// transaction — and the run is a WorkflowRun.
//
// Its input: a workflow.request.v1 trigger's `input` (an empty object when absent); any other
// trigger (a subscription of the definition) gives the trigger record itself ({id, title, tags,
// path, context, ...}). The input must satisfy the definition's input_schema (else the run fails
// with `invalid_input`). Its answer: workflow.result.v1 {request_id, workflow, execution_id,
// status: success|error, output | error {code, message}}, tagged workflow:result,
// workflow:<name>, request:<request id>.
#pragma once

#include <memory>

#include "exec/executor.h"
#include "exec/workflows/compiled_workflow.h"
#include "exec/workflows/step_call.h"
#include "model/workflow_definition.h"

namespace cairn::exec {

class WorkflowExecutor final : public Executor {
 public:
  WorkflowExecutor(model::WorkflowDefinition definition, std::shared_ptr<const CompiledWorkflow> compiled,
                   WorkflowDeps deps);

  RunResult Run(const RunRequest& request) override;
  RunResult Refuse(const RunRequest& request, const std::string& code, const std::string& message) override;

 private:
  RunResult Answer(const RunRequest& request, bool success, const boost::json::value& output, const std::string& code,
                   const std::string& message) const;

  model::WorkflowDefinition definition_;
  std::shared_ptr<const CompiledWorkflow> compiled_;
  WorkflowDeps deps_;
};

}  // namespace cairn::exec
