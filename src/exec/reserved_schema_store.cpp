#include "exec/reserved_schema_store.h"

#include <boost/json/serialize.hpp>

#include "exec/tools/builtin_tools.h"
#include "exec/workflows/workflow_supervisor.h"
#include "model/agent_definition.h"
#include "model/mcp_server_definition.h"
#include "model/tool_definition.h"
#include "model/workflow_definition.h"

namespace cairn::exec {
namespace json = boost::json;

Status ValidateReservedRecord(const std::optional<std::string>& schema_name, const json::value& context,
                              std::optional<std::string>& path, const model::Limits& limits,
                              const net::OutboundPolicy& outbound_policy) {
  if (!schema_name) return Status::Ok();
  if (*schema_name == model::kToolSchema) {
    CAIRN_ASSIGN_OR_RETURN(model::ToolDefinition def, model::ParseToolDefinition(context, limits));
    if (def.runtime == model::ToolRuntime::kBuiltin && !IsBuiltinTool(def.builtin)) {
      return Status::Validation("context.builtin", "there is no built-in tool named '" + def.builtin + "'");
    }
    if (def.runtime == model::ToolRuntime::kHttp) {
      // Refused at once rather than at every call; a name is judged by its address when connecting.
      if (Status allowed = outbound_policy.CheckUrlHost(def.url); !allowed.ok()) {
        return Status::InvalidArgument("context.url: " + allowed.message());
      }
    }
    std::string expected = model::ToolPath(def.name);
    if (path && *path != expected) {
      return Status::Validation("path", "a tool.v1 record lives at '" + expected + "' (or leave path out)");
    }
    path = expected;
    return Status::Ok();
  }
  if (*schema_name == model::kAgentSchema) {
    CAIRN_ASSIGN_OR_RETURN(model::AgentDefinition def, model::ParseAgentDefinition(context, limits));
    std::string expected = model::AgentPath(def.agent_id);
    if (path && *path != expected) {
      return Status::Validation("path", "an agent.def.v1 record lives at '" + expected + "' (or leave path out)");
    }
    path = expected;
    return Status::Ok();
  }
  if (*schema_name == model::kWorkflowSchema) {
    // Parsed, and its CEL compiled: a definition that could not run is never written.
    CAIRN_ASSIGN_OR_RETURN(auto loaded, LoadWorkflowDefinition(context, limits));
    std::string expected = model::WorkflowPath(loaded.first.name);
    if (path && *path != expected) {
      return Status::Validation("path", "a workflow.def.v1 record lives at '" + expected + "' (or leave path out)");
    }
    path = expected;
    return Status::Ok();
  }
  if (*schema_name == model::kMcpServerSchema) {
    CAIRN_ASSIGN_OR_RETURN(model::McpServerDefinition def, model::ParseMcpServerDefinition(context, limits));
    if (def.transport == model::McpTransportKind::kHttp) {
      if (Status allowed = outbound_policy.CheckUrlHost(def.url); !allowed.ok()) {
        return Status::InvalidArgument("context.url: " + allowed.message());
      }
    }
    std::string expected = model::McpServerPath(def.name);
    if (path && *path != expected) {
      return Status::Validation("path", "an mcp.server.v1 record lives at '" + expected + "' (or leave path out)");
    }
    path = expected;
    return Status::Ok();
  }
  if (*schema_name == model::kWorkflowRequestSchema) return model::ValidateWorkflowRequest(context);
  if (*schema_name == model::kToolRequestSchema) {
    CAIRN_RETURN_IF_ERROR(model::ValidateToolRequest(context));
    // A request id names one request: answers are matched to requests by it, so a second request
    // reusing it (to have its own input answered in the first one's place) is refused as a taken
    // path.
    const json::value* request_id = context.as_object().if_contains("request_id");
    if (request_id && request_id->is_string()) {
      std::string expected = "tool-requests/" + std::string(request_id->get_string());
      if (path && *path != expected) {
        return Status::Validation("path", "a tool.request.v1 with a request_id lives at '" + expected + "' (or leave path out)");
      }
      path = expected;
    }
    return Status::Ok();
  }
  if (*schema_name == model::kToolResponseSchema) {
    const json::object* o = context.if_object();
    const json::value* request_id = o ? o->if_contains("request_id") : nullptr;
    const json::value* status = o ? o->if_contains("status") : nullptr;
    if (!request_id || !request_id->is_string()) return Status::Validation("context.request_id", "must be a string");
    if (!status || (*status != "success" && *status != "error")) {
      return Status::Validation("context.status", "must be success or error");
    }
  }
  return Status::Ok();
}

namespace {

// Records of runs and sessions: written by cairn's own writers only (WriteContext::system).
bool IsSystemRecordSchema(const std::optional<std::string>& schema) {
  return schema && (*schema == model::kExecutionSchema || *schema == model::kAgentSnapshotSchema ||
                    *schema == model::kSessionSchema || *schema == model::kSessionMessageSchema ||
                    *schema == model::kWorkflowStepSchema || *schema == model::kAgentTaskSchema);
}

Status CheckSystemWriter(const model::WriteContext& ctx, const std::optional<std::string>& schema) {
  if (ctx.system || !IsSystemRecordSchema(schema)) return Status::Ok();
  return Status::Validation("schema_name", *schema + " records are written by cairn itself (use the sessions API)");
}

// Paths where cairn keeps the records of runs and its own reports. A run's record path is known
// from public events: a client record taking it first would make the run's answer fail to commit,
// and after a restart pass for the run's record, so the request would never be answered.
Status CheckReservedPath(const model::WriteContext& ctx, const std::optional<std::string>& path) {
  if (ctx.system || !path) return Status::Ok();
  for (std::string_view prefix : {"executions/", "session-executions/", "system/"}) {
    if (path->starts_with(prefix)) {
      return Status::Validation("path", "paths under '" + std::string(prefix) + "' are kept for cairn's own records");
    }
  }
  return Status::Ok();
}

bool IsDefinitionSchema(const std::optional<std::string>& schema) {
  return schema && (*schema == model::kToolSchema || *schema == model::kAgentSchema || *schema == model::kWorkflowSchema);
}

bool IsAnswerSchema(const std::optional<std::string>& schema) {
  return schema && (*schema == model::kToolResponseSchema || *schema == model::kAgentResponseSchema ||
                    *schema == model::kWorkflowResultSchema);
}

// Executors' writes: what models, tools and workflow steps produce.
bool IsExecutorActor(const std::string& actor) {
  return actor.starts_with("agent:") || actor.starts_with("tool:") || actor.starts_with("workflow:");
}

// Records that carry their writer's run lineage (execution_record.h AddRequesterLineage): the run
// they cause becomes a child of the writer's.
bool CarriesLineage(const std::optional<std::string>& schema) {
  return schema && (*schema == model::kToolRequestSchema || *schema == model::kWorkflowRequestSchema ||
                    *schema == model::kUserMessageSchema);
}

// An answer counts only from the executor that claimed the request, and only cairn's executors
// claim: a client (or a tool acting as its caller) cannot answer for them.
Status CheckAnswerWriter(const model::WriteContext& ctx, const std::optional<std::string>& schema) {
  if (ctx.system || !IsAnswerSchema(schema)) return Status::Ok();
  return Status::Conflict(*schema + " records are answers, written only by the executor that claimed the request")
      .WithReason("answer_not_claimed");
}

// The definitions cairn installs itself (built-in tools, the default agent) are the same on every
// install and may be replaced by a new version of cairn: they are not edited in place.
Status CheckNotBuiltin(const model::Breadcrumb& current) {
  if (!IsDefinitionSchema(current.schema_name) || current.created_by != "system") return Status::Ok();
  std::string what = current.path.value_or(current.id);
  return Status::Conflict(what + " is a built-in definition and cannot be changed or deleted; "
                          "create a copy under another name to customise it")
      .WithReason("builtin_definition");
}

// A request that no executor will answer must not be accepted and left hanging: the tool's own
// executor ignores what it wrote itself, and the depth guard drops triggers deeper than its limit.
// The lineage fields make the caused run a child of the writer's run (cancelled with it): only a
// run writes them, about itself.
Status CheckAnswerable(const model::WriteContext& ctx, const model::BreadcrumbDraft& draft, int64_t max_depth) {
  if (!CarriesLineage(draft.schema_name)) return Status::Ok();
  const json::object* o = draft.context.if_object();
  bool executor = IsExecutorActor(ctx.actor);
  if (!executor && !ctx.system && o && (o->contains("execution_id") || o->contains("root_execution_id"))) {
    return Status::Validation("context.execution_id",
                              "is written by the executor run that makes the request, not by " + ctx.actor);
  }
  if (*draft.schema_name == model::kUserMessageSchema) return Status::Ok();
  const char* asked_field = *draft.schema_name == model::kToolRequestSchema ? "tool" : "workflow";
  const json::value* asked = o ? o->if_contains(asked_field) : nullptr;
  if (asked && asked->is_string() && ctx.actor == std::string(asked_field) + ":" + std::string(asked->get_string())) {
    return Status::InvalidArgument("a " + std::string(asked_field) + " cannot request itself: this request is written as " +
                                   ctx.actor + ", whose own writes it never answers");
  }
  // A tool runs as the request's requested_by. An executor (a model's or a tool's write) may only
  // ask as itself: naming a user would let it act as one, e.g. define a process tool.
  const json::value* requested_by = o ? o->if_contains("requested_by") : nullptr;
  if (executor && !ctx.system && requested_by && *requested_by != json::value(ctx.actor)) {
    return Status::InvalidArgument("an executor (" + ctx.actor + ") can only make requests as itself, not as " +
                                   json::serialize(*requested_by));
  }
  if (draft.trace && draft.trace->depth > max_depth) {
    return Status::InvalidArgument("trace.depth " + std::to_string(draft.trace->depth) + " is beyond the executors' depth limit (" +
                                   std::to_string(max_depth) + "): this request would never be answered");
  }
  return Status::Ok();
}

// Executors act on what models and tools produce: they must not define tools (a process tool
// runs a command) or agents. Definitions come from users and the system only.
Status CheckDefinitionWriter(const model::WriteContext& ctx, const std::optional<std::string>& schema) {
  if (!IsDefinitionSchema(schema)) return Status::Ok();
  if (!ctx.may_define) return Status::PermissionDenied(*schema + " records are definitions: writing one needs role developer");
  if (IsExecutorActor(ctx.actor)) {
    return Status::Validation("schema_name", *schema + " records cannot be written by an executor (" + ctx.actor + ")");
  }
  return Status::Ok();
}

}  // namespace

ReservedSchemaStore::ReservedSchemaStore(std::unique_ptr<store::Store> inner, ReservedSchemaOptions options)
    : inner_(std::move(inner)), options_(std::move(options)) {
  if (!options_.outbound_policy) options_.outbound_policy = std::make_shared<const net::OutboundPolicy>();
}

Status ReservedSchemaStore::CheckDraft(const model::WriteContext& ctx, model::BreadcrumbDraft& draft) {
  CAIRN_RETURN_IF_ERROR(CheckSystemWriter(ctx, draft.schema_name));
  CAIRN_RETURN_IF_ERROR(CheckDefinitionWriter(ctx, draft.schema_name));
  CAIRN_RETURN_IF_ERROR(CheckAnswerWriter(ctx, draft.schema_name));
  CAIRN_RETURN_IF_ERROR(CheckReservedPath(ctx, draft.path));
  CAIRN_RETURN_IF_ERROR(
      ValidateReservedRecord(draft.schema_name, draft.context, draft.path, options_.limits, *options_.outbound_policy));
  return CheckAnswerable(ctx, draft, options_.executor_max_depth);
}

Status ReservedSchemaStore::CheckPatch(const std::string& owner_id, const std::string& id, model::BreadcrumbPatch& patch) {
  if (!patch.schema_name.set && !patch.context.set && !patch.path.set) return Status::Ok();
  CAIRN_ASSIGN_OR_RETURN(auto current, inner_->GetShared(owner_id, id));
  std::optional<std::string> schema = patch.schema_name.set ? patch.schema_name.value : current->schema_name;
  const json::value& context = patch.context.set ? patch.context.value : current->context;
  std::optional<std::string> path = patch.path.set ? patch.path.value : current->path;
  std::optional<std::string> before = path;
  CAIRN_RETURN_IF_ERROR(ValidateReservedRecord(schema, context, path, options_.limits, *options_.outbound_policy));
  if (path != before) patch.path.Set(path);
  return Status::Ok();
}

Result<store::CreateResult> ReservedSchemaStore::Create(const model::WriteContext& ctx,
                                                        const model::BreadcrumbDraft& draft,
                                                        const std::string& idempotency_key) {
  if (!draft.schema_name) {
    CAIRN_RETURN_IF_ERROR(CheckReservedPath(ctx, draft.path));
    return inner_->Create(ctx, draft, idempotency_key);
  }
  model::BreadcrumbDraft checked = draft;
  CAIRN_RETURN_IF_ERROR(CheckDraft(ctx, checked));
  return inner_->Create(ctx, checked, idempotency_key);
}

void ReservedSchemaStore::CreateAsync(const model::WriteContext& ctx, model::BreadcrumbDraft draft,
                                      std::string idempotency_key, CreateDone done) {
  Status checked = draft.schema_name ? CheckDraft(ctx, draft) : CheckReservedPath(ctx, draft.path);
  if (!checked.ok()) return done(std::move(checked));
  inner_->CreateAsync(ctx, std::move(draft), std::move(idempotency_key), std::move(done));
}

Status ReservedSchemaStore::CheckExecutorPatch(const model::WriteContext& ctx, const std::string& id,
                                               const model::BreadcrumbPatch& patch, bool deleting) {
  if (ctx.system && !IsExecutorActor(ctx.actor)) return Status::Ok();
  if (patch.schema_name.set) {
    CAIRN_RETURN_IF_ERROR(CheckSystemWriter(ctx, patch.schema_name.value));
    CAIRN_RETURN_IF_ERROR(CheckDefinitionWriter(ctx, patch.schema_name.value));
    CAIRN_RETURN_IF_ERROR(CheckAnswerWriter(ctx, patch.schema_name.value));
  }
  auto current = inner_->GetShared(ctx.owner_id, id);
  if (!current.ok()) {
    // Not found: the write itself answers 404. Unreadable (kInternal, a row an older version
    // wrote): a delete is the one way out for it, so only deletes go on.
    StatusCode code = current.status().code();
    return code == StatusCode::kNotFound || (deleting && code == StatusCode::kInternal) ? Status::Ok() : current.status();
  }
  CAIRN_RETURN_IF_ERROR(CheckSystemWriter(ctx, (*current)->schema_name));
  CAIRN_RETURN_IF_ERROR(CheckDefinitionWriter(ctx, (*current)->schema_name));
  CAIRN_RETURN_IF_ERROR(CheckAnswerWriter(ctx, (*current)->schema_name));
  if (!ctx.system) CAIRN_RETURN_IF_ERROR(CheckNotBuiltin(**current));
  return Status::Ok();
}

Result<model::Breadcrumb> ReservedSchemaStore::Get(const std::string& owner_id, const std::string& id) {
  return inner_->Get(owner_id, id);
}

Result<std::shared_ptr<const model::Breadcrumb>> ReservedSchemaStore::GetShared(const std::string& owner_id,
                                                                                const std::string& id) {
  return inner_->GetShared(owner_id, id);
}

Result<model::Breadcrumb> ReservedSchemaStore::Update(const model::WriteContext& ctx, const std::string& id,
                                                      const model::BreadcrumbPatch& patch,
                                                      std::optional<int64_t> expected_version) {
  model::BreadcrumbPatch checked = patch;
  if (patch.path.set) CAIRN_RETURN_IF_ERROR(CheckReservedPath(ctx, patch.path.value));
  CAIRN_RETURN_IF_ERROR(CheckExecutorPatch(ctx, id, checked));
  CAIRN_RETURN_IF_ERROR(CheckPatch(ctx.owner_id, id, checked));
  return inner_->Update(ctx, id, checked, expected_version);
}

Status ReservedSchemaStore::Delete(const model::WriteContext& ctx, const std::string& id,
                                   std::optional<int64_t> expected_version) {
  CAIRN_RETURN_IF_ERROR(CheckExecutorPatch(ctx, id, model::BreadcrumbPatch{}, true));
  return inner_->Delete(ctx, id, expected_version);
}

Result<std::vector<store::WriteOutcome>> ReservedSchemaStore::Apply(const model::WriteContext& ctx,
                                                                    const std::vector<store::WriteOp>& ops) {
  std::vector<store::WriteOp> checked = ops;
  for (size_t i = 0; i < checked.size(); ++i) {
    store::WriteOp& op = checked[i];
    Status status = Status::Ok();
    if (op.kind == store::WriteOp::Kind::kCreate) {
      status = CheckDraft(ctx, op.draft);
    } else if (op.kind == store::WriteOp::Kind::kUpdate) {
      status = op.patch.path.set ? CheckReservedPath(ctx, op.patch.path.value) : Status::Ok();
      if (status.ok()) status = CheckExecutorPatch(ctx, op.id, op.patch);
      if (status.ok()) status = CheckPatch(ctx.owner_id, op.id, op.patch);
    } else {
      status = CheckExecutorPatch(ctx, op.id, op.patch, true);
    }
    if (!status.ok()) {
      return status.Prefixed("write " + std::to_string(i) + " of the batch: ");
    }
  }
  return inner_->Apply(ctx, checked);
}

Result<store::Page> ReservedSchemaStore::List(const std::string& owner_id, const model::BreadcrumbQuery& query) {
  return inner_->List(owner_id, query);
}

Result<std::vector<model::BreadcrumbVersion>> ReservedSchemaStore::History(const std::string& owner_id,
                                                                           const std::string& id) {
  return inner_->History(owner_id, id);
}

Result<int64_t> ReservedSchemaStore::SweepExpired() { return inner_->SweepExpired(); }
Result<store::StoreStats> ReservedSchemaStore::Stats() { return inner_->Stats(); }
void ReservedSchemaStore::Close() { inner_->Close(); }

}  // namespace cairn::exec
