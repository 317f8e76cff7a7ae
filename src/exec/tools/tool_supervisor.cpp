#include "exec/tools/tool_supervisor.h"

#include "base/log.h"
#include "exec/tools/tool_executor.h"
#include "exec/tools/tool_factory.h"
#include "model/tool_definition.h"

namespace cairn::exec {
namespace json = boost::json;

struct ToolSupervisor::LoadedTools {
  std::mutex mu;
  std::map<std::string, std::vector<model::Subscription>> triggers;  // by tool name

  // Whether a running tool executor takes `request`.
  bool Answers(const std::string& name, const model::Event& request) {
    std::lock_guard lock(mu);
    auto it = triggers.find(name);
    if (it == triggers.end()) return false;
    for (const auto& sub : it->second) {
      if (model::TriggerMatches(sub, request)) return true;
    }
    return false;
  }
};

namespace {

std::string ToolNameOf(const model::Event& request) {
  const json::value* tool = request.context.is_object() ? request.context.as_object().if_contains("tool") : nullptr;
  return tool && tool->is_string() ? std::string(tool->as_string()) : "";
}

constexpr const char* kBuiltinMarker = "system:builtin-tools";
constexpr const char* kSystemActor = "system";

// Answers the requests no tool executor takes. Requests for running tools are skipped on the
// consumer thread (Accepts); the rest are checked against the store, in case the definition was
// written just before the request and its executor is starting.
class UnknownToolResponder final : public Executor {
 public:
  UnknownToolResponder(store::Store& store, model::Limits limits, std::shared_ptr<ToolSupervisor::LoadedTools> tools)
      : store_(store), limits_(limits), tools_(std::move(tools)) {}

  bool Accepts(const model::Event& request) override { return !tools_->Answers(ToolNameOf(request), request); }

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
  std::shared_ptr<ToolSupervisor::LoadedTools> tools_;
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
  return spec;
}

}  // namespace

ToolSupervisor::ToolSupervisor(store::CursorStore& cursors, ExecutorHost& host, BuiltinToolDeps deps,
                               model::Limits limits)
    : cursors_(cursors), host_(host), deps_(std::move(deps)), limits_(limits), tools_(std::make_shared<LoadedTools>()) {}

ToolSupervisor::~ToolSupervisor() { Stop(); }

Status ToolSupervisor::RegisterBuiltinsOnce() {
  CAIRN_ASSIGN_OR_RETURN(std::optional<int64_t> marker, cursors_.LoadCursor(kBuiltinMarker));
  if (marker) return Status::Ok();
  for (auto& context : BuiltinToolDefinitions()) {
    std::string name(context.at("name").as_string());
    model::BreadcrumbDraft draft;
    draft.schema_name = std::string(model::kToolSchema);
    draft.title = "tool " + name;
    draft.tags = {"tool", "builtin"};
    draft.path = model::ToolPath(name);
    draft.context = std::move(context);
    auto created = deps_.store.Create(model::WriteContext{"default", kSystemActor}, draft, "");
    if (!created.ok() && created.status().code() != StatusCode::kConflict) return created.status();
  }
  return cursors_.SaveCursor(kBuiltinMarker, 1);
}

Status ToolSupervisor::Start() {
  CAIRN_RETURN_IF_ERROR(RegisterBuiltinsOnce());
  int64_t start_seq = deps_.bus.LastSeq();
  subscription_ = deps_.bus.Subscribe([this] {
    std::lock_guard lock(mu_);
    woken_ = true;
    cv_.notify_all();
  });
  model::BreadcrumbQuery query;
  query.schema_name = std::string(model::kToolSchema);
  query.include_context = true;
  query.order = model::SortOrder::kOldestFirst;
  query.limit = 500;
  while (true) {
    CAIRN_ASSIGN_OR_RETURN(store::Page page, deps_.store.List("default", query));
    for (const auto& crumb : page.items) ApplyDefinition(crumb.id, crumb.version, crumb.owner_id, crumb.context, start_seq);
    if (!page.next_cursor) break;
    query.cursor = page.next_cursor;
  }
  CAIRN_RETURN_IF_ERROR(host_.Upsert(ResponderSpec(), std::make_shared<UnknownToolResponder>(deps_.store, limits_, tools_),
                                     start_seq));
  thread_ = std::thread([this, start_seq] { Loop(start_seq); });
  return Status::Ok();
}

void ToolSupervisor::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  subscription_.reset();
}

void ToolSupervisor::ApplyDefinition(const std::string& id, int64_t version, const std::string& owner_id,
                                     const json::value& context, int64_t start_seq) {
  auto it = loaded_.find(id);
  if (it != loaded_.end() && it->second >= version) return;
  std::string consumer = "exec:" + id;
  auto def = model::ParseToolDefinition(context, limits_);
  Result<std::unique_ptr<Tool>> tool = def.ok() ? MakeTool(*def, deps_) : Result<std::unique_ptr<Tool>>(def.status());
  if (!tool.ok()) {
    CAIRN_LOG_WARN("tool definition {} is not usable: {}", id, tool.status().message());
    host_.Remove(consumer, false);
    Forget(id);
    return;
  }
  ExecutorSpec spec;
  spec.consumer_id = consumer;
  spec.actor = "tool:" + def->name;
  spec.kind = "tool";
  spec.name = def->name;
  spec.owner_id = owner_id;
  spec.definition_id = id;
  spec.definition_version = version;
  spec.subscriptions = def->subscriptions;
  spec.concurrency = static_cast<int>(def->concurrency);
  spec.timeout = std::chrono::milliseconds(def->timeout_ms);
  Status started = host_.Upsert(std::move(spec), std::make_shared<ToolExecutor>(*def, std::move(tool).value()), start_seq);
  if (!started.ok()) {
    CAIRN_LOG_WARN("tool {}: starting its executor failed: {}", def->name, started.message());
    return;
  }
  CAIRN_LOG_INFO("tool {} {} (definition {} v{})", def->name, it == loaded_.end() ? "started" : "reloaded", id, version);
  loaded_[id] = version;
  std::lock_guard lock(tools_->mu);
  if (auto old = names_.find(id); old != names_.end()) tools_->triggers.erase(old->second);
  names_[id] = def->name;
  tools_->triggers[def->name] = def->subscriptions;
}

void ToolSupervisor::Forget(const std::string& id) {
  loaded_.erase(id);
  std::lock_guard lock(tools_->mu);
  if (auto old = names_.find(id); old != names_.end()) {
    tools_->triggers.erase(old->second);
    names_.erase(old);
  }
}

void ToolSupervisor::Loop(int64_t after) {
  while (true) {
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stop_ || woken_; });
      if (stop_) return;
      woken_ = false;
    }
    while (true) {
      auto events = deps_.bus.Read(after, 256);
      if (!events.ok()) {
        CAIRN_LOG_WARN("tool supervisor: reading events failed: {}", events.status().message());
        break;
      }
      if (events->empty()) break;
      for (const auto& event : *events) {
        after = event->seq;
        bool is_tool = event->schema_name && *event->schema_name == model::kToolSchema;
        if (event->type == "breadcrumb.deleted" || (!is_tool && loaded_.count(event->breadcrumb_id))) {
          if (loaded_.count(event->breadcrumb_id)) {
            Forget(event->breadcrumb_id);
            host_.Remove("exec:" + event->breadcrumb_id, true);
            CAIRN_LOG_INFO("tool definition {} removed", event->breadcrumb_id);
          }
        } else if (is_tool) {
          ApplyDefinition(event->breadcrumb_id, event->version, event->owner_id, event->context, event->seq);
        }
      }
    }
  }
}

}  // namespace cairn::exec
