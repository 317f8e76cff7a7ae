#include "exec/workflows/step_call.h"

#include <boost/json/serialize.hpp>

#include "base/json_util.h"
#include "exec/execution_record.h"
#include "exec/response_waiter.h"
#include "exec/retry.h"

namespace cairn::exec {
namespace json = boost::json;
namespace {

ResponseKind AnswerKind(model::StepKind kind) {
  switch (kind) {
    case model::StepKind::kTool: return kToolResponses;
    case model::StepKind::kWorkflow: return kWorkflowResults;
    case model::StepKind::kAgent: return kAgentResponses;
  }
  return kToolResponses;
}

std::string_view RequestSchema(model::StepKind kind) {
  switch (kind) {
    case model::StepKind::kTool: return model::kToolRequestSchema;
    case model::StepKind::kWorkflow: return model::kWorkflowRequestSchema;
    case model::StepKind::kAgent: return model::kUserMessageSchema;
  }
  return model::kToolRequestSchema;
}

// What an agent step says to the agent: the input when it is text, its `message` when it is an
// object with one, else the input as JSON.
std::string AgentText(const json::value& input) {
  if (input.is_string()) return std::string(input.as_string());
  if (const json::object* o = input.if_object()) {
    if (const json::value* message = o->if_contains("message"); message && message->is_string()) {
      return std::string(message->as_string());
    }
  }
  return json::serialize(input);
}

StepAnswer FromAnswer(model::StepKind kind, const json::object& answer) {
  StepAnswer out;
  if (StringMember(answer, "status") == "success") {
    out.kind = StepAnswer::Kind::kSucceeded;
    if (kind == model::StepKind::kAgent) {
      out.output = json::value(StringMember(answer, "message"));
    } else if (const json::value* output = answer.if_contains("output")) {
      out.output = *output;
    }
    return out;
  }
  out.kind = StepAnswer::Kind::kFailed;
  out.code = "step_error";
  out.message = "the step's answer was an error";
  if (const json::value* error = answer.if_contains("error")) {
    if (error->is_string()) {
      out.message = std::string(error->as_string());
    } else if (error->is_object()) {
      if (std::string code = StringMember(error->as_object(), "code"); !code.empty()) out.code = code;
      if (std::string message = StringMember(error->as_object(), "message"); !message.empty()) out.message = message;
    }
  }
  return out;
}

}  // namespace

std::string StepRequestId(const std::string& execution_id, const std::string& step_id, int64_t index, int64_t attempt) {
  std::string id = execution_id + "-" + step_id;
  if (index >= 0) id += "-" + std::to_string(index);
  return id + "-" + std::to_string(attempt);
}

StepCall::StepCall(WorkflowDeps deps, const std::string& workflow, const RunRequest& run, const model::WorkflowStep& step)
    : deps_(deps), workflow_(workflow), actor_("workflow:" + workflow), run_(run), step_(step) {}

model::BreadcrumbDraft StepCall::Request(const std::string& request_id, const json::value& input) const {
  model::BreadcrumbDraft draft;
  draft.schema_name = std::string(RequestSchema(step_.kind));
  draft.title = step_.id + " (" + workflow_ + ")";
  draft.tags = {"request:" + request_id, "workflow:" + workflow_, "execution:" + run_.execution_id};
  json::object context;
  switch (step_.kind) {
    case model::StepKind::kTool:
      context = {{"tool", step_.target}, {"input", input}, {"request_id", request_id}, {"requested_by", actor_}};
      draft.tags.push_back("tool:request");
      break;
    case model::StepKind::kWorkflow:
      context = {{"workflow", step_.target}, {"input", input}, {"request_id", request_id}, {"requested_by", actor_}};
      draft.tags.push_back("workflow:request");
      break;
    case model::StepKind::kAgent:
      context = {{"agent_id", step_.target}, {"content", AgentText(input)}, {"request_id", request_id}};
      break;
  }
  AddRequesterLineage(context, run_.execution_id, run_.lineage);
  draft.context = std::move(context);
  draft.trace = ChildTrace(run_.trigger_event);
  return draft;
}

std::string StepCall::FindRequest(const std::string& request_id) const {
  model::BreadcrumbQuery query;
  query.schema_name = std::string(RequestSchema(step_.kind));
  query.all_tags = {"request:" + request_id, "workflow:" + workflow_};
  query.limit = 1;
  auto found = deps_.store.List(run_.trigger_event.owner_id, query);
  return found.ok() && !found->items.empty() ? found->items.front().id : "";
}

StepAnswer StepCall::Run(const std::string& request_id, const json::value& input, bool written_before,
                         std::vector<store::WriteOp> also, const std::atomic<bool>& abort,
                         std::vector<std::string>* written_ids) {
  const std::string& owner = run_.trigger_event.owner_id;
  ResponseKind kind = AnswerKind(step_.kind);
  // Before the request exists, so no answer can slip past it.
  ResponseWaiter waiter(deps_.store, deps_.bus, owner, kind);
  std::string request_breadcrumb;
  if (!written_before) {
    std::vector<store::WriteOp> ops = std::move(also);
    ops.push_back(store::WriteOp::Create(Request(request_id, input)));
    model::WriteContext ctx{owner, actor_, true};
    auto written = RetryWhenBusy(abort, [&] { return deps_.store.Apply(ctx, ops); });
    if (!written.ok()) {
      return StepAnswer{StepAnswer::Kind::kFailed, nullptr, "internal", "writing the step's request failed: " + written.status().message()};
    }
    request_breadcrumb = written->back().breadcrumb.id;
    if (written_ids) {
      for (const auto& outcome : *written) written_ids->push_back(outcome.breadcrumb.id);
    }
  }
  StepAnswer answer{StepAnswer::Kind::kCancelled, nullptr, "", ""};
  bool answered = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(step_.timeout_ms);
  auto unanswered = waiter.Wait({{request_id, step_.target}}, written_before, deadline, abort,
                                [&](const std::string&, const json::object& context) {
                                  answer = FromAnswer(step_.kind, context);
                                  answered = true;
                                },
                                &run_.cancelled);
  if (!unanswered.ok()) {
    return StepAnswer{StepAnswer::Kind::kFailed, nullptr, "internal", "waiting for the step's answer failed: " + unanswered.status().message()};
  }
  if (answered) return answer;
  if (abort || run_.cancelled) return StepAnswer{StepAnswer::Kind::kCancelled, nullptr, "cancelled", "the workflow run stopped"};
  // The deadline passed: the child stops too (its answer, if one still comes, is not used).
  if (request_breadcrumb.empty()) request_breadcrumb = FindRequest(request_id);
  if (!request_breadcrumb.empty()) deps_.runtime.runs().CancelTrigger(request_breadcrumb);
  return StepAnswer{StepAnswer::Kind::kFailed, nullptr, "timeout",
                    "step " + step_.id + " got no answer from " + std::string(model::StepKindName(step_.kind)) + " " +
                        step_.target + " within " + std::to_string(step_.timeout_ms) + " ms"};
}

}  // namespace cairn::exec
