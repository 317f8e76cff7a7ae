#include "exec/execution_record.h"

#include <boost/json/object.hpp>

#include "base/time_format.h"
#include "exec/executor_host.h"

namespace cairn::exec {
namespace json = boost::json;
namespace {

std::vector<std::string> RecordTags(const std::string& actor, const std::string& trigger_id, const std::string& status) {
  return {"execution", "executor:" + actor, "trigger:" + trigger_id, "status:" + status};
}

int64_t IntMember(const json::value& context, std::string_view key) {
  const json::value* v = context.is_object() ? context.as_object().if_contains(key) : nullptr;
  return v && v->is_int64() ? v->as_int64() : 0;
}

}  // namespace

std::string TriggerKey(const model::Event& trigger) {
  std::string key = trigger.breadcrumb_id + "/" + std::to_string(trigger.version);
  return trigger.type == "breadcrumb.deleted" ? key + "/deleted" : key;
}

std::string ExecutionPath(const ExecutorSpec& spec, const model::Event& trigger) {
  return "executions/" + spec.consumer_id + "/" + TriggerKey(trigger);
}

model::Trace ChildTrace(const model::Event& trigger) {
  model::Trace trace;
  trace.trace_id = trigger.trace.trace_id.empty() ? trigger.breadcrumb_id : trigger.trace.trace_id;
  trace.caused_by = trigger.breadcrumb_id;
  trace.depth = trigger.trace.depth + 1;
  return trace;
}

model::BreadcrumbDraft ClaimDraft(const ExecutorSpec& spec, const model::Event& trigger, int64_t now_micros) {
  model::BreadcrumbDraft draft;
  draft.schema_name = std::string(kExecutionSchema);
  draft.title = spec.kind + " " + spec.name + " run";
  draft.tags = RecordTags(spec.actor, trigger.breadcrumb_id, "running");
  draft.path = ExecutionPath(spec, trigger);
  draft.trace = ChildTrace(trigger);
  draft.context = json::object{
      {"executor", spec.actor},
      {"kind", spec.kind},
      {"name", spec.name},
      {"consumer", spec.consumer_id},
      {"definition_id", spec.definition_id},
      {"definition_version", spec.definition_version},
      {"trigger_id", trigger.breadcrumb_id},
      {"trigger_version", trigger.version},
      {"trigger_schema", trigger.schema_name ? json::value(*trigger.schema_name) : json::value(nullptr)},
      {"trigger_seq", trigger.seq},
      {"status", "running"},
      {"attempt", 1},
      {"started_at", FormatRfc3339Micros(now_micros)},
      {"started_at_us", now_micros},
  };
  return draft;
}

model::BreadcrumbPatch TakeoverPatch(const json::value& record_context, int64_t now_micros) {
  json::object context = record_context.is_object() ? record_context.as_object() : json::object{};
  context["attempt"] = IntMember(record_context, "attempt") + 1;
  context["started_at"] = FormatRfc3339Micros(now_micros);
  context["started_at_us"] = now_micros;
  model::BreadcrumbPatch patch;
  patch.context.Set(std::move(context));
  return patch;
}

model::BreadcrumbPatch FinishPatch(const json::value& record_context, const std::string& actor, bool failed,
                                   const std::string& error, int64_t now_micros) {
  json::object context = record_context.is_object() ? record_context.as_object() : json::object{};
  std::string status = failed ? "failed" : "completed";
  context["status"] = status;
  context["completed_at"] = FormatRfc3339Micros(now_micros);
  context["duration_ms"] = (now_micros - IntMember(record_context, "started_at_us")) / 1000;
  context["error"] = failed ? json::value(error) : json::value(nullptr);
  std::string trigger_id = context.contains("trigger_id") && context["trigger_id"].is_string()
                               ? std::string(context["trigger_id"].as_string())
                               : "";
  model::BreadcrumbPatch patch;
  patch.context.Set(std::move(context));
  patch.tags.Set(RecordTags(actor, trigger_id, status));
  return patch;
}

std::string ExecutionStatus(const json::value& record_context) {
  const json::value* v = record_context.is_object() ? record_context.as_object().if_contains("status") : nullptr;
  return v && v->is_string() ? std::string(v->as_string()) : "";
}

}  // namespace cairn::exec
