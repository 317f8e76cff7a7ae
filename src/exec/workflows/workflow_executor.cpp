#include "exec/workflows/workflow_executor.h"

#include "exec/workflows/workflow_run.h"
#include "model/json_schema.h"

namespace cairn::exec {
namespace json = boost::json;
namespace {

bool IsRequest(const model::Event& trigger) {
  return trigger.schema_name && *trigger.schema_name == model::kWorkflowRequestSchema && trigger.context.is_object();
}

std::string RequestIdOf(const model::Event& trigger) {
  const json::value* id = IsRequest(trigger) ? trigger.context.as_object().if_contains("request_id") : nullptr;
  return id && id->is_string() && !id->as_string().empty() ? std::string(id->as_string()) : trigger.breadcrumb_id;
}

json::value InputOf(const RunRequest& request) {
  if (request.input) return *request.input;
  if (!IsRequest(request.trigger_event)) return request.trigger;
  const json::value* input = request.trigger_event.context.as_object().if_contains("input");
  return input && !input->is_null() ? *input : json::value(json::object());
}

}  // namespace

WorkflowExecutor::WorkflowExecutor(model::WorkflowDefinition definition, std::shared_ptr<const CompiledWorkflow> compiled,
                                   WorkflowDeps deps)
    : definition_(std::move(definition)), compiled_(std::move(compiled)), deps_(deps) {}

RunResult WorkflowExecutor::Answer(const RunRequest& request, bool success, const json::value& output,
                                   const std::string& code, const std::string& message) const {
  RunResult result;
  std::string request_id = RequestIdOf(request.trigger_event);
  model::BreadcrumbDraft& d = result.response;
  d.schema_name = std::string(model::kWorkflowResultSchema);
  d.title = definition_.name + " result";
  d.tags = {"workflow:result", "workflow:" + definition_.name, "request:" + request_id};
  json::object context{{"request_id", request_id},
                       {"workflow", definition_.name},
                       {"execution_id", request.execution_id},
                       {"status", success ? "success" : "error"}};
  if (success) {
    context["output"] = output;
    result.output = output;
  } else {
    context["error"] = json::object{{"code", code}, {"message", message}};
    result.failed = true;
    result.error_code = code;
    result.error_message = message;
  }
  d.context = std::move(context);
  return result;
}

RunResult WorkflowExecutor::Run(const RunRequest& request) {
  json::value input = InputOf(request);
  if (definition_.input_schema) {
    if (Status valid = model::ValidateAgainstSchema(*definition_.input_schema, input); !valid.ok()) {
      return Answer(request, false, nullptr, "invalid_input", valid.field() + ": " + valid.message());
    }
  }
  WorkflowRun run(definition_, *compiled_, deps_, request, std::move(input));
  WorkflowOutcome outcome = run.Execute();
  RunResult result;
  switch (outcome.kind) {
    case WorkflowOutcome::Kind::kCompleted:
      result = Answer(request, true, outcome.output, "", "");
      break;
    case WorkflowOutcome::Kind::kFailed:
      result = Answer(request, false, nullptr, outcome.code, outcome.message);
      break;
    case WorkflowOutcome::Kind::kCancelled:
      result = Answer(request, false, nullptr, "cancelled", outcome.message);
      result.cancelled = true;
      break;
  }
  result.step_count = outcome.units_ended;
  return result;
}

RunResult WorkflowExecutor::Refuse(const RunRequest& request, const std::string& code, const std::string& message) {
  return Answer(request, false, nullptr, code, message);
}

}  // namespace cairn::exec
