#include "exec/execution_record.h"

#include <boost/json/serialize.hpp>
#include <cstdio>

#include "base/json_util.h"
#include "base/time_format.h"
#include "model/tool_definition.h"

namespace cairn::exec {
namespace json = boost::json;
namespace {

constexpr size_t kMaxLineageIdBytes = 128;
constexpr int64_t kMaxLineageDepth = 1000;

uint64_t Fnv1a(std::string_view text, uint64_t hash) {
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  return hash;
}

json::value OrNull(const std::string& text) { return text.empty() ? json::value(nullptr) : json::value(text); }
json::value TimeOrNull(int64_t micros) {
  return micros == 0 ? json::value(nullptr) : json::value(FormatRfc3339Micros(micros));
}

}  // namespace

std::string TriggerKey(const model::Event& trigger) {
  std::string key = trigger.breadcrumb_id + "/" + std::to_string(trigger.version);
  return trigger.type == "breadcrumb.deleted" ? key + "/deleted" : key;
}

std::string StableExecutionId(const std::string& owner_id, const std::string& consumer_id,
                              const std::string& trigger_key) {
  // The key of the path records had before they were all at executions/<id>.
  std::string key = owner_id + "\nexecutions/" + consumer_id + "/" + trigger_key;
  char out[33];
  std::snprintf(out, sizeof out, "%016llx%016llx", static_cast<unsigned long long>(Fnv1a(key, 14695981039346656037ULL)),
                static_cast<unsigned long long>(Fnv1a(key, 0x9e3779b97f4a7c15ULL)));
  return out;
}

std::string ExecutionIdFor(const ExecutorSpec& spec, const model::Event& trigger) {
  return StableExecutionId(spec.owner_id, spec.consumer_id, TriggerKey(trigger));
}

std::string ExecutionRecordPath(const std::string& execution_id) { return "executions/" + execution_id; }

model::Trace ChildTrace(const model::Event& trigger) {
  model::Trace trace;
  trace.trace_id = trigger.trace.trace_id.empty() ? trigger.breadcrumb_id : trigger.trace.trace_id;
  trace.caused_by = trigger.breadcrumb_id;
  trace.depth = trigger.trace.depth + 1;
  return trace;
}

void AddRequesterLineage(json::object& request_context, const std::string& execution_id, const Lineage& own) {
  request_context["execution_id"] = execution_id;
  request_context["root_execution_id"] = own.root_execution_id.empty() ? execution_id : own.root_execution_id;
  request_context["execution_depth"] = own.depth;
  if (!own.session_id.empty()) request_context["session_id"] = own.session_id;
}

Lineage LineageOf(const model::Event& trigger, const std::string& execution_id) {
  Lineage root{"", execution_id, 0, ""};
  // Records that carry their writer's lineage (only executors may write it: reserved_schema_store.h).
  bool carries = trigger.schema_name && (*trigger.schema_name == model::kToolRequestSchema ||
                                         *trigger.schema_name == model::kWorkflowRequestSchema ||
                                         *trigger.schema_name == model::kUserMessageSchema);
  if (!carries || !trigger.context.is_object()) return root;
  const json::object& c = trigger.context.as_object();
  auto id_ok = [](const std::string& id) { return !id.empty() && id.size() <= kMaxLineageIdBytes; };
  std::string parent = StringMember(c, "execution_id");
  std::string top = StringMember(c, "root_execution_id");
  const json::value* depth = c.if_contains("execution_depth");
  if (!id_ok(parent) || !id_ok(top) || !depth || !depth->is_int64() || depth->as_int64() < 0 ||
      depth->as_int64() >= kMaxLineageDepth) {
    return root;
  }
  std::string session = StringMember(c, "session_id");
  return Lineage{parent, top, depth->as_int64() + 1, id_ok(session) ? session : ""};
}

json::object TokenUsageJson(const TokenUsage& usage) {
  return json::object{{"input", usage.input}, {"output", usage.output}, {"total", usage.total}};
}

json::object ExecutionContext(const ExecutionRecord& r) {
  json::value trigger = nullptr;
  if (r.trigger) {
    trigger = json::object{
        {"breadcrumb_id", r.trigger->breadcrumb_id},
        {"seq", r.trigger->seq},
        {"schema_name", r.trigger->schema_name ? json::value(*r.trigger->schema_name) : json::value(nullptr)}};
  }
  json::value error = nullptr;
  if (!r.error_code.empty() || !r.error_message.empty()) {
    error = json::object{{"code", r.error_code.empty() ? "error" : r.error_code}, {"message", r.error_message}};
  }
  json::value duration = nullptr;
  if (r.started_micros != 0 && r.completed_micros != 0) duration = (r.completed_micros - r.started_micros) / 1000;
  json::object context{
      {"id", r.id},
      {"kind", r.kind},
      {"executor", r.executor},
      {"definition", json::object{{"id", OrNull(r.definition_id)}, {"version", r.definition_version}}},
      {"status", r.status},
      {"trigger", std::move(trigger)},
      {"session_id", OrNull(r.lineage.session_id)},
      {"parent_execution_id", OrNull(r.lineage.parent_execution_id)},
      {"root_execution_id", r.lineage.root_execution_id.empty() ? r.id : r.lineage.root_execution_id},
      {"depth", r.lineage.depth},
      {"attempt", r.attempt},
      {"input", r.input},
      {"output", r.output},
      {"error", std::move(error)},
      {"step_count", r.step_count},
      {"token_usage", TokenUsageJson(r.token_usage)},
      {"last_snapshot_id", OrNull(r.last_snapshot_id)},
      {"metadata", r.metadata},
      {"created_at", TimeOrNull(r.created_micros)},
      {"started_at", TimeOrNull(r.started_micros)},
      {"completed_at", TimeOrNull(r.completed_micros)},
      {"duration_ms", std::move(duration)},
  };
  if (!r.awaiting_input.is_null()) context["awaiting_input"] = r.awaiting_input;
  return context;
}

std::vector<std::string> ExecutionTags(const json::object& context) {
  std::vector<std::string> tags{"execution", "kind:" + StringMember(context, "kind"),
                                "executor:" + StringMember(context, "executor"),
                                "status:" + StringMember(context, "status"),
                                "root:" + StringMember(context, "root_execution_id")};
  if (std::string parent = StringMember(context, "parent_execution_id"); !parent.empty()) tags.push_back("parent:" + parent);
  if (const json::value* trigger = context.if_contains("trigger"); trigger && trigger->is_object()) {
    tags.push_back("trigger:" + StringMember(trigger->as_object(), "breadcrumb_id"));
  }
  if (std::string session = StringMember(context, "session_id"); !session.empty()) tags.push_back("session:" + session);
  return tags;
}

model::BreadcrumbDraft ExecutionDraft(const ExecutionRecord& record) {
  model::BreadcrumbDraft draft;
  draft.schema_name = std::string(kExecutionSchema);
  draft.title = record.kind + " " + record.executor + " run";
  draft.path = ExecutionRecordPath(record.id);
  if (record.trigger) draft.trace = ChildTrace(*record.trigger);
  json::object context = ExecutionContext(record);
  draft.tags = ExecutionTags(context);
  draft.context = std::move(context);
  return draft;
}

std::string ExecutionStatus(const json::value& record_context) {
  return record_context.is_object() ? StringMember(record_context.as_object(), "status") : "";
}

bool IsActiveStatus(std::string_view s) { return s == "pending" || s == "running" || s == "paused"; }

bool CanMoveExecution(std::string_view from, std::string_view to) {
  if (from == "pending") return to == "running" || to == "cancelled" || to == "failed";
  if (from == "running") {
    return to == "running" || to == "paused" || to == "completed" || to == "failed" || to == "cancelled";
  }
  if (from == "paused") return to == "running" || to == "cancelled" || to == "failed";
  return false;  // completed, failed and cancelled are final
}

json::value BoundedCopy(const json::value& value, size_t max_bytes) {
  std::string text = json::serialize(value);
  if (text.size() <= max_bytes) return value;
  return json::object{{"omitted_bytes", static_cast<int64_t>(text.size())}};
}

}  // namespace cairn::exec
