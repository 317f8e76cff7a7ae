#include "exec/execution_migration.h"

#include "base/json_util.h"
#include "base/log.h"
#include "base/time_format.h"
#include "exec/execution_record.h"

namespace cairn::exec {
namespace json = boost::json;
namespace {

constexpr size_t kBatch = 200;

int64_t Int(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_int64() ? v->as_int64() : 0;
}

json::value Get(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v ? *v : json::value(nullptr);
}

// "code: message" as the old records wrote it.
json::value SplitError(const std::string& text) {
  if (text.empty()) return nullptr;
  size_t colon = text.find(": ");
  bool coded = colon != std::string::npos && colon > 0 && text.find(' ') >= colon;
  return json::object{{"code", coded ? text.substr(0, colon) : "error"}, {"message", coded ? text.substr(colon + 2) : text}};
}

json::value DurationMs(const json::object& o) {
  auto started = ParseRfc3339Micros(StringMember(o, "started_at"));
  auto completed = ParseRfc3339Micros(StringMember(o, "completed_at"));
  if (!started || !completed) return nullptr;
  return (*completed - *started) / 1000;
}

// A bus-triggered run's record, reshaped; nullopt when it is not one.
std::optional<json::object> FromHostRecord(const model::Breadcrumb& crumb, const json::object& old) {
  const std::string prefix = "executions/";
  if (!crumb.path || crumb.path->rfind(prefix, 0) != 0 || StringMember(old, "consumer").empty()) return std::nullopt;
  std::string rest = crumb.path->substr(prefix.size());  // <consumer>/<trigger key>
  size_t slash = rest.find('/');
  if (slash == std::string::npos) return std::nullopt;
  std::string id = StableExecutionId(crumb.owner_id, rest.substr(0, slash), rest.substr(slash + 1));
  json::object usage = old.contains("usage") && old.at("usage").is_object() ? old.at("usage").as_object() : json::object{};
  json::object metadata;
  if (old.contains("model")) metadata["model"] = old.at("model");
  if (old.contains("stop_reason")) metadata["stop_reason"] = old.at("stop_reason");
  return json::object{
      {"id", id},
      {"kind", Get(old, "kind")},
      {"executor", Get(old, "name")},
      {"definition", json::object{{"id", Get(old, "definition_id")}, {"version", Int(old, "definition_version")}}},
      {"status", Get(old, "status")},
      {"trigger", json::object{{"breadcrumb_id", Get(old, "trigger_id")},
                               {"seq", Int(old, "trigger_seq")},
                               {"schema_name", Get(old, "trigger_schema")}}},
      {"session_id", nullptr},
      {"parent_execution_id", nullptr},
      {"root_execution_id", id},
      {"depth", 0},
      {"attempt", Int(old, "attempt") == 0 ? 1 : Int(old, "attempt")},
      {"input", nullptr},
      {"output", nullptr},
      {"error", SplitError(StringMember(old, "error"))},
      {"step_count", Int(old, "steps")},
      {"token_usage", json::object{{"input", Int(usage, "prompt")}, {"output", Int(usage, "completion")},
                                   {"total", Int(usage, "total")}}},
      {"last_snapshot_id", StringMember(old, "last_snapshot_id").empty() ? json::value(nullptr) : Get(old, "last_snapshot_id")},
      {"metadata", std::move(metadata)},
      {"created_at", Get(old, "started_at")},
      {"started_at", Get(old, "started_at")},
      {"completed_at", Get(old, "completed_at")},
      {"duration_ms", Get(old, "duration_ms")},
  };
}

// A session run's record, reshaped; nullopt when it is not one.
std::optional<json::object> FromSessionRecord(const model::Breadcrumb& crumb, const json::object& old) {
  if (!crumb.path || crumb.path->rfind("session-executions/", 0) != 0 || StringMember(old, "id").empty()) return std::nullopt;
  std::string id = StringMember(old, "id");
  json::value error = nullptr;
  if (!StringMember(old, "error_message").empty()) error = json::object{{"code", "error"}, {"message", StringMember(old, "error_message")}};
  return json::object{
      {"id", id},
      {"kind", "agent"},
      {"executor", Get(old, "agent_type")},
      {"definition", json::object{{"id", nullptr}, {"version", 0}}},
      {"status", Get(old, "status")},
      {"trigger", nullptr},
      {"session_id", Get(old, "session_id")},
      {"parent_execution_id", nullptr},
      {"root_execution_id", id},
      {"depth", 0},
      {"attempt", 1},
      {"input", Get(old, "input")},
      {"output", Get(old, "output")},
      {"error", std::move(error)},
      {"step_count", Int(old, "step_count")},
      {"token_usage", Get(old, "token_usage")},
      {"last_snapshot_id", Get(old, "last_snapshot_id")},
      {"metadata", old.contains("metadata") && old.at("metadata").is_object() ? old.at("metadata") : json::object{}},
      {"created_at", FormatRfc3339Micros(crumb.created_at)},
      {"started_at", Get(old, "started_at")},
      {"completed_at", Get(old, "completed_at")},
      {"duration_ms", DurationMs(old)},
      {"user_id", Get(old, "user_id")},
      {"snapshot_policy", Get(old, "snapshot_policy")},
      {"awaiting_input", Get(old, "awaiting_input")},
  };
}

}  // namespace

Result<int64_t> MigrateExecutionRecords(store::Store& store, store::CursorStore& cursors, const std::string& owner_id) {
  const std::string mark = "migration:execution-records:" + owner_id;
  CAIRN_ASSIGN_OR_RETURN(std::optional<int64_t> done, cursors.LoadCursor(mark));
  if (done) return int64_t{0};
  model::BreadcrumbQuery query;
  query.schema_name = std::string(kExecutionSchema);
  query.context_match.push_back(model::ContextRule{"$.root_execution_id", model::RuleOp::kExists, json::value(false)});
  query.include_context = true;
  query.order = model::SortOrder::kOldestFirst;
  query.limit = kBatch;
  model::WriteContext ctx{owner_id, "system:migration", true};
  int64_t moved = 0;
  std::optional<std::string> cursor;
  while (true) {
    query.cursor = cursor;
    CAIRN_ASSIGN_OR_RETURN(store::Page page, store.List(owner_id, query));
    std::vector<store::WriteOp> ops;
    for (const auto& crumb : page.items) {
      if (!crumb.context.is_object()) continue;
      const json::object& old = crumb.context.as_object();
      std::optional<json::object> reshaped = FromHostRecord(crumb, old);
      bool session = false;
      if (!reshaped) session = (reshaped = FromSessionRecord(crumb, old)).has_value();
      if (!reshaped) {
        CAIRN_LOG_WARN("execution record {} at {} has an unknown shape; left as it is", crumb.id, crumb.path.value_or(""));
        continue;
      }
      std::vector<std::string> tags = ExecutionTags(*reshaped);
      if (session) {
        tags.push_back("session-execution");
        if (IsActiveStatus(StringMember(*reshaped, "status"))) tags.push_back("active:" + StringMember(*reshaped, "session_id"));
      }
      model::BreadcrumbPatch patch;
      patch.path.Set(ExecutionRecordPath(StringMember(*reshaped, "id")));
      patch.tags.Set(std::move(tags));
      patch.context.Set(std::move(*reshaped));
      ops.push_back(store::WriteOp::Update(crumb.id, std::move(patch), crumb.version));
    }
    if (!ops.empty()) {
      CAIRN_RETURN_IF_ERROR(store.Apply(ctx, ops).status());
      moved += static_cast<int64_t>(ops.size());
    }
    if (!page.next_cursor) break;
    cursor = page.next_cursor;  // keyset: moved records no longer match, the rest stay in order
  }
  CAIRN_RETURN_IF_ERROR(cursors.SaveCursor(mark, 1));
  return moved;
}

}  // namespace cairn::exec
