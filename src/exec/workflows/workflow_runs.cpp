#include "exec/workflows/workflow_runs.h"

#include "base/uuid.h"
#include "exec/definition_supervisor.h"
#include "exec/execution_record.h"
#include "model/definition_fields.h"
#include "model/json_schema.h"
#include "model/workflow_definition.h"

namespace cairn::exec {
namespace json = boost::json;

Result<StartedWorkflowRun> StartWorkflowRun(store::Store& store, const model::WriteContext& ctx, const std::string& name,
                                            const json::value& input, const model::Limits& limits) {
  if (!model::IsValidDefinitionName(name)) return Status::NotFound("no workflow is named " + name);
  model::BreadcrumbQuery query;
  query.schema_name = std::string(model::kWorkflowSchema);
  query.path = model::WorkflowPath(name);
  query.include_context = true;
  query.limit = 1;
  CAIRN_ASSIGN_OR_RETURN(store::Page found, store.List(ctx.owner_id, query));
  if (found.items.empty()) {
    return Status::NotFound("no workflow is named " + name + " (define it as a workflow.def.v1 record at " +
                            model::WorkflowPath(name) + ")");
  }
  const model::Breadcrumb& definition = found.items.front();
  auto def = model::ParseWorkflowDefinition(definition.context, limits);
  if (!def.ok()) return Status::Conflict("the workflow " + name + " is not usable: " + def.status().message());
  if (def->input_schema) CAIRN_RETURN_IF_ERROR(model::ValidateAgainstSchema(*def->input_schema, input));

  static UuidV7Generator ids(SystemClock::Instance());
  std::string request_id = ids.Next();
  model::BreadcrumbDraft draft;
  draft.schema_name = std::string(model::kWorkflowRequestSchema);
  draft.title = name + " run";
  draft.tags = {"workflow:request", "workflow:" + name, "request:" + request_id};
  draft.context = json::object{{"workflow", name}, {"input", input}, {"request_id", request_id}, {"requested_by", ctx.actor}};
  CAIRN_ASSIGN_OR_RETURN(store::CreateResult created, store.Create(ctx, draft, ""));
  model::Event trigger;
  trigger.type = "breadcrumb.created";
  trigger.breadcrumb_id = created.breadcrumb.id;
  trigger.version = created.breadcrumb.version;
  std::string execution_id = StableExecutionId(ctx.owner_id, DefinitionConsumerId(definition.id), TriggerKey(trigger));
  return StartedWorkflowRun{std::move(execution_id), std::move(request_id), name};
}

}  // namespace cairn::exec
