#include "exec/tools/tool_supervisor.h"

#include <limits>

#include "exec/tools/tool_executor.h"
#include "exec/tools/tool_factory.h"
#include "model/tool_definition.h"
#include "store/record_pages.h"

namespace cairn::exec {
namespace json = boost::json;

namespace {

std::string ToolNameOf(const model::Event& request) {
  const json::value* tool = request.context.is_object() ? request.context.as_object().if_contains("tool") : nullptr;
  return tool && tool->is_string() ? std::string(tool->as_string()) : "";
}

constexpr const char* kBuiltinMarker = "system:builtin-tools";
constexpr const char* kSystemActor = "system";

// Answers the requests no tool executor takes. It follows the tool definitions in its own event
// stream (Observe), so it judges each request by the definitions written before it, and skips
// requests a tool takes on the consumer thread (Accepts). What it does dispatch is checked once
// more against the store (its view at start is the store's, not the log's).
class UnknownToolResponder final : public Executor {
 public:
  UnknownToolResponder(store::Store& store, model::Limits limits) : store_(store), limits_(limits) {}

  // Before the consumer starts: a definition as stored (the caller passes only those written
  // before the responder's resume point; later ones arrive through Observe, in order).
  void Know(const std::string& id, const std::string& owner_id, const json::value& context) {
    auto def = model::ParseToolDefinition(context, limits_);
    if (def.ok()) definitions_[id] = {owner_id, def->subscriptions};
  }

  bool Observes() const override { return true; }
  void Observe(const model::Event& event) override {
    bool is_tool = event.schema_name && *event.schema_name == model::kToolSchema;
    if (!is_tool || event.type == "breadcrumb.deleted") {
      definitions_.erase(event.breadcrumb_id);
    } else {
      Know(event.breadcrumb_id, event.owner_id, event.context);
    }
  }

  // Any tool of the request's tenant whose trigger selectors take the request answers it (a tool's
  // own selectors may take requests addressed to another name), so the responder stays silent.
  bool Accepts(const model::Event& request) override {
    for (const auto& [id, known] : definitions_) {
      const auto& [owner_id, triggers] = known;
      if (owner_id != request.owner_id) continue;
      for (const auto& sub : triggers) {
        if (model::TriggerMatches(sub, request)) return false;
      }
    }
    return true;
  }

  RunResult Run(const RunRequest& request) override {
    const model::Event& event = request.trigger_event;
    std::string name = ToolNameOf(event);
    model::BreadcrumbQuery query;
    query.path = model::ToolPath(name);
    query.schema_name = std::string(model::kToolSchema);
    query.include_context = true;
    query.limit = 1;
    auto found = store_.List(event.owner_id, query);
    if (found.ok() && !found->items.empty() && found->items.front().created_at <= event.at) {
      auto def = model::ParseToolDefinition(found->items.front().context, limits_);
      if (def.ok()) {
        for (const auto& sub : def->subscriptions) {
          if (model::TriggerMatches(sub, event)) {
            RunResult none;
            none.respond = false;  // its executor answers
            return none;
          }
        }
      }
    }
    return ToolResponse(name, RequestIdOf(event),
                        Status::NotFound("there is no tool named '" + name +
                                         "' that takes requests (list the tools: GET /breadcrumbs?schema_name=tool.v1)"),
                        0, "unknown_tool");
  }

  RunResult Refuse(const RunRequest& request, const std::string& code, const std::string& message) override {
    return ToolResponse(ToolNameOf(request.trigger_event), RequestIdOf(request.trigger_event), Status::Internal(message),
                        0, code);
  }

 private:
  store::Store& store_;
  model::Limits limits_;
  // (Tenant, trigger subscriptions) by definition id; the consumer thread's only, once it started.
  std::map<std::string, std::pair<std::string, std::vector<model::Subscription>>> definitions_;
};

ExecutorSpec ResponderSpec() {
  ExecutorSpec spec;
  spec.consumer_id = "system:unknown-tools";
  spec.actor = "system:tools";
  spec.kind = "system";
  spec.name = "unknown-tools";
  model::Subscription trigger;
  trigger.selector.schema_name = std::string(model::kToolRequestSchema);
  trigger.selector.types = {"breadcrumb.created"};
  trigger.key = std::string(model::kToolRequestSchema);
  spec.subscriptions = {trigger};
  spec.concurrency = 8;
  spec.timeout = std::chrono::milliseconds(10000);
  spec.record_executions = false;
  spec.every_tenant = true;  // a request for an unknown tool is answered in every tenant
  return spec;
}

}  // namespace

ToolSupervisor::ToolSupervisor(store::CursorStore& cursors, ExecutorHost& host, BuiltinToolDeps deps,
                               model::Limits limits)
    : cursors_(cursors), host_(host), deps_(std::move(deps)), limits_(limits) {}

ToolSupervisor::~ToolSupervisor() { Stop(); }

Status ToolSupervisor::InstallBuiltins(const std::string& tenant) {
  std::string marker_id = TenantMarker(kBuiltinMarker, tenant);
  CAIRN_ASSIGN_OR_RETURN(std::optional<int64_t> marker, cursors_.LoadCursor(marker_id));
  if (marker) return Status::Ok();
  for (auto& context : BuiltinToolDefinitions()) {
    std::string name(context.at("name").as_string());
    model::BreadcrumbDraft draft;
    draft.schema_name = std::string(model::kToolSchema);
    draft.title = "tool " + name;
    draft.tags = {"tool", "builtin"};
    draft.path = model::ToolPath(name);
    draft.context = std::move(context);
    auto created = deps_.store.Create(model::WriteContext{tenant, kSystemActor}, draft, "");
    if (!created.ok() && created.status().code() != StatusCode::kConflict) return created.status();
  }
  return cursors_.SaveCursor(marker_id, 1);
}

Result<std::shared_ptr<Executor>> ToolSupervisor::NewResponder(const std::vector<std::string>& tenants) {
  auto responder = std::make_shared<UnknownToolResponder>(deps_.store, limits_);
  // The responder resumes at its cursor and learns the definitions written after it from the log,
  // in order; from the store it may only take those that existed at its resume point. (Missing
  // one is harmless: a request it would leave to a tool is checked against the store before it
  // answers. Knowing one deleted since would leave requests unanswered.)
  int64_t known_until = std::numeric_limits<int64_t>::max();
  CAIRN_ASSIGN_OR_RETURN(std::optional<int64_t> cursor, cursors_.LoadCursor(ResponderSpec().consumer_id));
  if (cursor && *cursor < deps_.bus.LastSeq()) {
    auto at_cursor = deps_.bus.Read(*cursor, 1);  // the first event it has not judged
    if (at_cursor.ok() && !at_cursor->empty()) known_until = at_cursor->front()->at;
  }
  for (const std::string& tenant : tenants) {
    model::BreadcrumbQuery query;
    query.schema_name = std::string(model::kToolSchema);
    query.include_context = true;
    query.order = model::SortOrder::kOldestFirst;
    query.limit = 500;
    CAIRN_RETURN_IF_ERROR(store::ForEachRecord(deps_.store, tenant, query, [&](const model::Breadcrumb& crumb) {
      if (crumb.created_at < known_until) responder->Know(crumb.id, crumb.owner_id, crumb.context);
    }));
  }
  return std::shared_ptr<Executor>(std::move(responder));
}

Status ToolSupervisor::Start(bool run_executors, bool builtin_tools, const std::vector<std::string>& tenants) {
  if (builtin_tools) {
    for (const std::string& tenant : tenants) CAIRN_RETURN_IF_ERROR(InstallBuiltins(tenant));
  }
  int64_t start_seq = deps_.bus.LastSeq();
  DefinitionKind kind;
  kind.schema_name = std::string(model::kToolSchema);
  kind.label = "tool";
  kind.build = [this](const std::string&, const json::value& context) -> Result<DefinitionKind::Built> {
    CAIRN_ASSIGN_OR_RETURN(model::ToolDefinition def, model::ParseToolDefinition(context, limits_));
    CAIRN_ASSIGN_OR_RETURN(std::unique_ptr<Tool> tool, MakeTool(def, deps_));
    ExecutorSpec spec;
    spec.actor = "tool:" + def.name;
    spec.kind = "tool";
    spec.name = def.name;
    spec.subscriptions = def.subscriptions;
    spec.concurrency = static_cast<int>(def.concurrency);
    spec.timeout = std::chrono::milliseconds(def.timeout_ms);
    return DefinitionKind::Built{std::move(spec), std::make_shared<ToolExecutor>(def, std::move(tool))};
  };
  definitions_ = std::make_unique<DefinitionSupervisor>(deps_.store, deps_.bus, cursors_, host_, std::move(kind));
  // Known before the definitions start: their executors may write requests at once.
  std::shared_ptr<Executor> responder;
  if (run_executors) {
    CAIRN_ASSIGN_OR_RETURN(responder, NewResponder(tenants));
  }
  CAIRN_RETURN_IF_ERROR(definitions_->Start(run_executors, start_seq, tenants));
  if (!run_executors) return definitions_->EnsureCursor(ResponderSpec().consumer_id, start_seq);
  // Sharded (ExecutorHost::TakeShard), a dormant responder starts anew from the store.
  ExecutorRefresh refresh = [this, tenants]() -> Result<std::optional<DefinitionKind::Built>> {
    CAIRN_ASSIGN_OR_RETURN(std::shared_ptr<Executor> fresh, NewResponder(tenants));
    return std::optional<DefinitionKind::Built>(DefinitionKind::Built{ResponderSpec(), std::move(fresh)});
  };
  return host_.Upsert(ResponderSpec(), std::move(responder), start_seq, {}, std::move(refresh));
}

void ToolSupervisor::Stop() {
  if (definitions_) definitions_->Stop();
}

}  // namespace cairn::exec
