#include "exec/workflows/workflow_supervisor.h"

#include "exec/workflows/compiled_workflow.h"
#include "exec/workflows/workflow_executor.h"

namespace cairn::exec {
namespace json = boost::json;

Result<std::pair<model::WorkflowDefinition, std::shared_ptr<const CompiledWorkflow>>> LoadWorkflowDefinition(
    const json::value& context, const model::Limits& limits) {
  CAIRN_ASSIGN_OR_RETURN(model::WorkflowDefinition def, model::ParseWorkflowDefinition(context, limits));
  CAIRN_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledWorkflow> compiled, CompiledWorkflow::Compile(def));
  return std::make_pair(std::move(def), std::move(compiled));
}

WorkflowSupervisor::WorkflowSupervisor(store::CursorStore& cursors, ExecutorHost& host, WorkflowDeps deps,
                                       model::Limits limits)
    : cursors_(cursors), host_(host), deps_(deps), limits_(limits) {}

WorkflowSupervisor::~WorkflowSupervisor() { Stop(); }

Status WorkflowSupervisor::Start(bool run_executors, const std::vector<std::string>& tenants) {
  int64_t start_seq = deps_.bus.LastSeq();
  DefinitionKind kind;
  kind.schema_name = std::string(model::kWorkflowSchema);
  kind.label = "workflow";
  kind.build = [this](const std::string&, const json::value& context) -> Result<DefinitionKind::Built> {
    CAIRN_ASSIGN_OR_RETURN(auto loaded, LoadWorkflowDefinition(context, limits_));
    auto& [def, compiled] = loaded;
    ExecutorSpec spec;
    spec.actor = "workflow:" + def.name;
    spec.kind = "workflow";
    spec.name = def.name;
    spec.subscriptions = def.subscriptions;
    spec.concurrency = static_cast<int>(def.concurrency);
    spec.timeout = std::chrono::milliseconds(def.timeout_ms);
    spec.waits_on_executors = true;
    return DefinitionKind::Built{std::move(spec),
                                 std::make_shared<WorkflowExecutor>(std::move(def), std::move(compiled), deps_)};
  };
  definitions_ = std::make_unique<DefinitionSupervisor>(deps_.store, deps_.bus, cursors_, host_, std::move(kind));
  return definitions_->Start(run_executors, start_seq, tenants);
}

void WorkflowSupervisor::Stop() {
  if (definitions_) definitions_->Stop();
}

}  // namespace cairn::exec
