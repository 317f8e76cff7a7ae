#include "exec/tools/tool_supervisor.h"

#include <limits>

#include "base/log.h"
#include "exec/tools/tool_executor.h"
#include "exec/tools/tool_factory.h"
#include "model/tool_definition.h"

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
  void Know(const std::string& id, const json::value& context) {
    auto def = model::ParseToolDefinition(context, limits_);
    if (def.ok()) definitions_[id] = def->subscriptions;
  }

  void Observe(const model::Event& event) override {
    bool is_tool = event.schema_name && *event.schema_name == model::kToolSchema;
    if (!is_tool || event.type == "breadcrumb.deleted") {
      definitions_.erase(event.breadcrumb_id);
    } else {
      Know(event.breadcrumb_id, event.context);
    }
  }

  // Any tool whose trigger selectors take the request answers it (a tool's own selectors may take
  // requests addressed to another name), so the responder stays silent.
  bool Accepts(const model::Event& request) override {
    for (const auto& [id, triggers] : definitions_) {
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
  // Trigger subscriptions by definition id; the consumer thread's only, once it started.
  std::map<std::string, std::vector<model::Subscription>> definitions_;
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
    : cursors_(cursors), host_(host), deps_(std::move(deps)), limits_(limits) {}

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

Status ToolSupervisor::EnsureCursor(const std::string& consumer, int64_t start_seq) {
  CAIRN_ASSIGN_OR_RETURN(std::optional<int64_t> stored, cursors_.LoadCursor(consumer));
  return stored ? Status::Ok() : cursors_.SaveCursor(consumer, start_seq);
}

Status ToolSupervisor::Start(bool run_executors, bool builtin_tools) {
  run_executors_ = run_executors;
  if (builtin_tools) CAIRN_RETURN_IF_ERROR(RegisterBuiltinsOnce());
  int64_t start_seq = deps_.bus.LastSeq();
  subscription_ = deps_.bus.Subscribe([this] {
    std::lock_guard lock(mu_);
    woken_ = true;
    cv_.notify_all();
  });
  auto responder = std::make_shared<UnknownToolResponder>(deps_.store, limits_);
  ExecutorSpec responder_spec = ResponderSpec();
  // The responder resumes at its cursor and learns the definitions written after it from the log,
  // in order; from the store it may only take those that existed at its resume point.
  int64_t known_until = std::numeric_limits<int64_t>::max();
  CAIRN_ASSIGN_OR_RETURN(std::optional<int64_t> responder_cursor, cursors_.LoadCursor(responder_spec.consumer_id));
  if (responder_cursor && *responder_cursor < start_seq) {
    auto at_cursor = deps_.bus.Read(*responder_cursor, 1);  // the first event it has not judged
    if (at_cursor.ok() && !at_cursor->empty()) known_until = at_cursor->front()->at;
  }
  model::BreadcrumbQuery query;
  query.schema_name = std::string(model::kToolSchema);
  query.include_context = true;
  query.order = model::SortOrder::kOldestFirst;
  query.limit = 500;
  while (true) {
    CAIRN_ASSIGN_OR_RETURN(store::Page page, deps_.store.List("default", query));
    for (const auto& crumb : page.items) {
      ApplyDefinition(crumb.id, crumb.version, crumb.owner_id, crumb.context, start_seq);
      if (crumb.created_at < known_until) responder->Know(crumb.id, crumb.context);
    }
    if (!page.next_cursor) break;
    query.cursor = page.next_cursor;
  }
  if (run_executors_) {
    CAIRN_RETURN_IF_ERROR(host_.Upsert(std::move(responder_spec), std::move(responder), start_seq));
  } else {
    CAIRN_RETURN_IF_ERROR(EnsureCursor(responder_spec.consumer_id, start_seq));
  }
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

bool ToolSupervisor::ApplyDefinition(const std::string& id, int64_t version, const std::string& owner_id,
                                     const json::value& context, int64_t start_seq) {
  std::lock_guard lock(apply_mu_);
  auto it = loaded_.find(id);
  if (it != loaded_.end() && it->second >= version) return true;
  std::string consumer = "exec:" + id;
  if (!run_executors_) {
    if (Status ensured = EnsureCursor(consumer, start_seq); !ensured.ok()) {
      CAIRN_LOG_WARN("tool definition {}: saving its first cursor failed: {}", id, ensured.message());
      return true;
    }
    loaded_[id] = version;
    return true;
  }
  auto def = model::ParseToolDefinition(context, limits_);
  Result<std::unique_ptr<Tool>> tool = def.ok() ? MakeTool(*def, deps_) : Result<std::unique_ptr<Tool>>(def.status());
  if (!tool.ok()) {
    CAIRN_LOG_WARN("tool definition {} is not usable: {}", id, tool.status().message());
    return false;
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
  Status started = host_.Upsert(std::move(spec), std::make_shared<ToolExecutor>(*def, std::move(tool).value()),
                                start_seq, [this](const model::Event& event) { return Follow(event); });
  if (!started.ok()) {
    CAIRN_LOG_WARN("tool {}: starting its executor failed: {}", def->name, started.message());
    return true;
  }
  CAIRN_LOG_INFO("tool {} {} (definition {} v{})", def->name, it == loaded_.end() ? "started" : "reloaded", id, version);
  loaded_[id] = version;
  return true;
}

bool ToolSupervisor::Follow(const model::Event& event) {
  bool is_tool = event.schema_name && *event.schema_name == model::kToolSchema;
  bool gone = !is_tool || event.type == "breadcrumb.deleted";
  // The consumer reached its definition's change in its own event order: everything before it was
  // handled with the old definition, everything after it is handled with the new one.
  if (!gone && ApplyDefinition(event.breadcrumb_id, event.version, event.owner_id, event.context, event.seq)) {
    return true;
  }
  {
    std::lock_guard lock(apply_mu_);
    retired_.emplace_back(event.breadcrumb_id, gone);
  }
  {
    std::lock_guard lock(mu_);
    woken_ = true;  // the loop removes the retired consumer (it cannot remove itself)
  }
  cv_.notify_all();
  return false;
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
        bool gone = !is_tool || event->type == "breadcrumb.deleted";
        bool known;
        {
          std::lock_guard lock(apply_mu_);
          known = loaded_.count(event->breadcrumb_id) > 0;
        }
        // A running executor follows its own definition (Follow); the loop only starts new ones.
        if (!gone && !known) {
          ApplyDefinition(event->breadcrumb_id, event->version, event->owner_id, event->context, event->seq);
        } else if (gone && known && !run_executors_) {
          {
            std::lock_guard lock(apply_mu_);
            loaded_.erase(event->breadcrumb_id);
          }
          if (Status deleted = cursors_.DeleteCursor("exec:" + event->breadcrumb_id); !deleted.ok()) {
            CAIRN_LOG_WARN("tool definition {}: deleting its cursor failed", event->breadcrumb_id);
          }
        }
      }
    }
    ReapRetired();
  }
}

void ToolSupervisor::ReapRetired() {
  std::vector<std::pair<std::string, bool>> retired;
  {
    std::lock_guard lock(apply_mu_);
    retired.swap(retired_);
    for (const auto& [id, gone] : retired) loaded_.erase(id);
  }
  for (const auto& [id, gone] : retired) {
    host_.Remove("exec:" + id, /*forget_cursor=*/gone);
    CAIRN_LOG_INFO("tool definition {} {}", id, gone ? "removed" : "stopped (not usable)");
  }
}

}  // namespace cairn::exec
