#include "exec/tools/tool_executor.h"

#include <chrono>

#include "model/json_schema.h"

namespace cairn::exec {
namespace json = boost::json;
namespace {

bool IsToolRequest(const model::Event& trigger) {
  return trigger.schema_name && *trigger.schema_name == model::kToolRequestSchema && trigger.context.is_object();
}

std::string StringMember(const json::value& context, std::string_view key) {
  const json::value* v = context.is_object() ? context.as_object().if_contains(key) : nullptr;
  return v && v->is_string() ? std::string(v->as_string()) : "";
}

}  // namespace

std::string RequestIdOf(const model::Event& trigger) {
  std::string id = IsToolRequest(trigger) ? StringMember(trigger.context, "request_id") : "";
  return id.empty() ? trigger.breadcrumb_id : id;
}

RunResult ToolResponse(const std::string& tool, const std::string& request_id, const Result<json::value>& outcome,
                       int64_t duration_ms, const std::string& error_code) {
  RunResult result;
  model::BreadcrumbDraft& d = result.response;
  d.schema_name = std::string(model::kToolResponseSchema);
  d.title = tool + " response";
  d.tags = {"tool:response", "request:" + request_id, "tool:" + tool};
  json::object context{{"request_id", request_id}, {"tool", tool}};
  if (outcome.ok()) {
    context["status"] = "success";
    context["output"] = outcome.value();
    result.output = outcome.value();
  } else {
    // The finer reason when the tool gave one (e.g. secret_not_found), else the status code.
    const Status& failure = outcome.status();
    std::string code = !error_code.empty()       ? error_code
                       : !failure.reason().empty() ? failure.reason()
                                                   : std::string(StatusCodeName(failure.code()));
    context["status"] = "error";
    context["error"] = json::object{{"code", code}, {"message", outcome.status().message()}};
    result.failed = true;
    result.error_code = code;
    result.error_message = outcome.status().message();
  }
  context["duration_ms"] = duration_ms;
  d.context = std::move(context);
  return result;
}

ToolExecutor::ToolExecutor(model::ToolDefinition definition, std::unique_ptr<Tool> tool)
    : definition_(std::move(definition)), tool_(std::move(tool)) {}

namespace {

int64_t ElapsedMs(const RunRequest& request) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - request.started)
      .count();
}

}  // namespace

RunResult ToolExecutor::Run(const RunRequest& request) {
  const model::Event& trigger = request.trigger_event;
  json::value input = json::object{};
  std::string caller = trigger.created_by;
  if (IsToolRequest(trigger)) {
    if (const json::value* given = trigger.context.as_object().if_contains("input")) input = *given;
    std::string requested_by = StringMember(trigger.context, "requested_by");
    if (!requested_by.empty()) caller = requested_by;
  } else {
    input = trigger.context;
  }
  if (request.input) input = *request.input;
  std::string request_id = RequestIdOf(trigger);
  auto elapsed = [&] { return ElapsedMs(request); };
  if (Status valid = model::ValidateAgainstSchema(definition_.input_schema, input, "input"); !valid.ok()) {
    return ToolResponse(definition_.name, request_id, valid, elapsed(), "invalid_input");
  }
  std::atomic<int64_t> steps{0};
  ToolCall call{input, request.context, trigger, caller, request.cancelled,
                std::chrono::milliseconds(definition_.timeout_ms), request.execution_id, request.lineage, &steps};
  Result<json::value> outcome = tool_->Invoke(call);
  // A tool refusing its input (a built-in's own checks, a breadcrumb field) is invalid input too.
  bool invalid = !outcome.ok() && outcome.status().code() == StatusCode::kValidation;
  RunResult result = ToolResponse(definition_.name, request_id, outcome, elapsed(), invalid ? "invalid_input" : "");
  result.step_count = steps.load();
  return result;
}

RunResult ToolExecutor::Refuse(const RunRequest& request, const std::string& code, const std::string& message) {
  // After a timeout (the host refuses once the run has returned) this is the real time spent.
  return ToolResponse(definition_.name, RequestIdOf(request.trigger_event), Status::Internal(message),
                      ElapsedMs(request), code);
}

}  // namespace cairn::exec
