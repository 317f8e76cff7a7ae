#include "exec/agents/agent_supervisor.h"

#include <boost/json/parse.hpp>

#include "model/reserved.h"

namespace cairn::exec {
namespace json = boost::json;
namespace {

constexpr const char* kDefaultAgentMarker = "system:default-agent";

}  // namespace

json::object DefaultAgentDefinition() {
  return json::parse(R"({
    "agent_id": "default-chat-assistant",
    "description": "Answers user.message.v1 breadcrumbs, with the session's last 20 messages as history.",
    "system_prompt": "You are a helpful assistant running inside cairn. Answer concisely. Use the tools you are given when they help; say so when you cannot do something.",
    "subscriptions": {"selectors": [
      {"schema_name": "user.message.v1", "types": ["breadcrumb.created"],
       "context_match": [{"path": "$.agent_id", "op": "exists", "value": false}]},
      {"schema_name": "user.message.v1", "types": ["breadcrumb.created"],
       "context_match": [{"path": "$.agent_id", "op": "eq", "value": "default-chat-assistant"}]},
      {"role": "context", "key": "history", "fetch": {"method": "recent", "limit": 20},
       "same_tag_prefix": "session:"}
    ]},
    "tools": ["echo", "sleep", "breadcrumb_get", "breadcrumb_query", "wait_for", "user_input"]
  })").as_object();
}

AgentSupervisor::AgentSupervisor(store::CursorStore& cursors, ExecutorHost& host, AgentDeps deps, model::Limits limits)
    : cursors_(cursors), host_(host), deps_(std::move(deps)), limits_(limits) {}

AgentSupervisor::~AgentSupervisor() { Stop(); }

Status AgentSupervisor::InstallDefaultAgent(const std::string& tenant) {
  std::string marker_id = TenantMarker(kDefaultAgentMarker, tenant);
  CAIRN_ASSIGN_OR_RETURN(std::optional<int64_t> marker, cursors_.LoadCursor(marker_id));
  if (marker) return Status::Ok();
  model::BreadcrumbDraft draft;
  draft.schema_name = std::string(model::kAgentSchema);
  draft.title = "agent " + std::string(kDefaultAgentId);
  draft.tags = {"agent", "builtin"};
  draft.path = model::AgentPath(std::string(kDefaultAgentId));
  draft.context = DefaultAgentDefinition();
  auto created = deps_.store.Create(model::WriteContext{tenant, "system"}, draft, "");
  if (!created.ok() && created.status().code() != StatusCode::kConflict) return created.status();
  return cursors_.SaveCursor(marker_id, 1);
}

Status AgentSupervisor::Start(bool run_executors, bool default_agent, const std::vector<std::string>& tenants) {
  if (default_agent) {
    for (const std::string& tenant : tenants) CAIRN_RETURN_IF_ERROR(InstallDefaultAgent(tenant));
  }
  int64_t start_seq = deps_.bus.LastSeq();
  DefinitionKind kind;
  kind.schema_name = std::string(model::kAgentSchema);
  kind.label = "agent";
  kind.build = [this](const std::string&, const json::value& context) -> Result<DefinitionKind::Built> {
    CAIRN_ASSIGN_OR_RETURN(model::AgentDefinition def, model::ParseAgentDefinition(context, limits_));
    ExecutorSpec spec;
    spec.actor = "agent:" + def.agent_id;
    spec.kind = "agent";
    spec.name = def.agent_id;
    spec.subscriptions = def.subscriptions;
    spec.concurrency = static_cast<int>(def.concurrency);
    spec.timeout = std::chrono::milliseconds(def.timeout_ms);
    spec.waits_on_executors = true;
    spec.context_budget_tokens = def.context_budget_tokens.value_or(0);
    spec.allow_secret_context = def.allow_secret_context;
    return DefinitionKind::Built{std::move(spec), std::make_shared<AgentExecutor>(std::move(def), deps_)};
  };
  definitions_ = std::make_unique<DefinitionSupervisor>(deps_.store, deps_.bus, cursors_, host_, std::move(kind));
  return definitions_->Start(run_executors, start_seq, tenants);
}

void AgentSupervisor::Stop() {
  if (definitions_) definitions_->Stop();
}

}  // namespace cairn::exec
