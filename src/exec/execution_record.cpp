#include "exec/execution_record.h"

#include <boost/json/object.hpp>

#include "base/time_format.h"
#include "exec/executor_host.h"

namespace cairn::exec {
namespace json = boost::json;

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

model::BreadcrumbDraft ExecutionDraft(const ExecutorSpec& spec, const model::Event& trigger, const RunTimes& times,
                                      bool failed, const std::string& error) {
  std::string status = failed ? "failed" : "completed";
  model::BreadcrumbDraft draft;
  draft.schema_name = std::string(kExecutionSchema);
  draft.title = spec.kind + " " + spec.name + " run";
  draft.tags = {"execution", "executor:" + spec.actor, "trigger:" + trigger.breadcrumb_id, "status:" + status};
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
      {"status", status},
      {"attempt", times.attempt},
      {"started_at", FormatRfc3339Micros(times.started_micros)},
      {"completed_at", FormatRfc3339Micros(times.completed_micros)},
      {"duration_ms", (times.completed_micros - times.started_micros) / 1000},
      {"error", failed ? json::value(error) : json::value(nullptr)},
  };
  return draft;
}

std::string ExecutionStatus(const json::value& record_context) {
  const json::value* v = record_context.is_object() ? record_context.as_object().if_contains("status") : nullptr;
  return v && v->is_string() ? std::string(v->as_string()) : "";
}

}  // namespace cairn::exec
