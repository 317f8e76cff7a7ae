#include "exec/agents/agent_executor.h"

#include "exec/agents/agent_run.h"
#include "exec/agents/delegation.h"

#include <algorithm>
#include <boost/json/serialize.hpp>

namespace cairn::exec {
namespace json = boost::json;
namespace {

// The request the response answers: the trigger's context.request_id, else the trigger's id.
std::string RequestIdOf(const model::Event& trigger) {
  const json::value* id = trigger.context.is_object() ? trigger.context.as_object().if_contains("request_id") : nullptr;
  return id && id->is_string() && !id->as_string().empty() ? std::string(id->as_string()) : trigger.breadcrumb_id;
}

json::object UsageJson(const llm::Usage& usage) {
  return json::object{{"prompt", usage.prompt}, {"completion", usage.completion}, {"total", usage.total}};
}

json::value OrNull(const std::string& text) { return text.empty() ? json::value(nullptr) : json::value(text); }

std::vector<std::string> ResponseTags(const model::AgentDefinition& def, const model::Event& trigger,
                                      const std::string& request_id) {
  std::vector<std::string> tags;
  for (const auto& tag : trigger.tags) {
    if (tag.rfind("session:", 0) == 0) tags.push_back(tag);
  }
  tags.push_back("agent:response");
  tags.push_back("agent:" + def.agent_id);
  tags.push_back("request:" + request_id);
  return tags;
}

// A task handed out by `delegate` (delegation.h tags its message): its answer is always an
// agent.response.v1, which the delegating run waits for.
bool Delegated(const model::Event& trigger) {
  return std::find(trigger.tags.begin(), trigger.tags.end(), "delegated") != trigger.tags.end();
}

RunResult ResponseFor(const model::AgentDefinition& def, const model::Event& trigger, const std::string& execution_id,
                      const AgentOutcome& outcome) {
  RunResult result;
  std::string request_id = RequestIdOf(trigger);
  model::BreadcrumbDraft& d = result.response;
  d.tags = ResponseTags(def, trigger, request_id);
  const AgentState& state = outcome.state;
  if (outcome.kind == AgentOutcome::Kind::kAnswer && def.output && !Delegated(trigger)) {
    d.schema_name = def.output->schema_name;
    d.title = def.agent_id + " output";
    for (const auto& tag : def.output->tags) d.tags.push_back(tag);
    d.context = outcome.output;
  } else {
    d.schema_name = std::string(model::kAgentResponseSchema);
    d.title = def.agent_id + " response";
    json::object context{{"status", outcome.kind == AgentOutcome::Kind::kError ? "error" : "success"},
                         {"agent_id", def.agent_id},
                         {"model", outcome.model},
                         {"request_id", request_id},
                         {"execution_id", execution_id},
                         {"steps", state.step},
                         {"usage", UsageJson(state.usage)}};
    if (outcome.kind == AgentOutcome::Kind::kError) {
      context["error"] = json::object{{"code", outcome.code}, {"message", outcome.message}};
      result.failed = true;
      result.error_code = outcome.code;
      result.error_message = outcome.message;
    } else if (outcome.kind == AgentOutcome::Kind::kAnswer && def.output) {
      // A delegated structured answer: the validated object, and as the message its JSON.
      context["message"] = json::serialize(outcome.output);
      context["output"] = outcome.output;
    } else {
      context["message"] = outcome.message;
    }
    if (!outcome.stop_reason.empty()) context["stop_reason"] = outcome.stop_reason;
    d.context = std::move(context);
  }
  result.step_count = state.step;
  result.token_usage = TokenUsage{state.usage.prompt, state.usage.completion, state.usage.total};
  result.last_snapshot_id = state.last_snapshot_id;
  if (outcome.kind != AgentOutcome::Kind::kError) {
    result.output = outcome.output.is_null() ? json::value(json::object{{"content", outcome.message}}) : outcome.output;
  }
  result.metadata = json::object{{"model", OrNull(outcome.model)}};
  if (!outcome.stop_reason.empty()) result.metadata["stop_reason"] = outcome.stop_reason;
  return result;
}

// A paused run (its question, or a sub-agent's, waits for the user): no response yet; its task
// record says `waiting` with the question, in the transaction of its paused record.
RunResult PausedResult(const AgentDeps& deps, const RunRequest& request, const AgentOutcome& outcome) {
  RunResult result;
  result.respond = false;
  result.paused = true;
  result.awaiting = outcome.awaiting;
  result.awaiting_input = outcome.awaiting_input;
  result.step_count = outcome.state.step;
  result.token_usage = TokenUsage{outcome.state.usage.prompt, outcome.state.usage.completion, outcome.state.usage.total};
  result.last_snapshot_id = outcome.state.last_snapshot_id;
  result.metadata = json::object{{"model", OrNull(outcome.model)}};
  auto task = TaskWaitingUpdate(deps.store, request.trigger_event.owner_id, request.lineage, RequestIdOf(request.trigger_event),
                                request.execution_id, outcome.awaiting_input);
  if (task.ok() && *task) result.also.push_back(std::move(**task));
  return result;
}

}  // namespace

AgentExecutor::AgentExecutor(model::AgentDefinition definition, AgentDeps deps)
    : definition_(std::move(definition)), deps_(std::move(deps)) {}

RunResult AgentExecutor::Run(const RunRequest& request) {
  AgentRunOptions options;
  // A sub-agent of a session's tree may ask the user: the session is told and routes the answer.
  options.user_input = Delegated(request.trigger_event) && !request.lineage.parent_execution_id.empty() &&
                       !request.lineage.session_id.empty();
  AgentRun run(definition_, deps_, request, options);
  AgentOutcome outcome = run.Execute();
  if (outcome.kind == AgentOutcome::Kind::kPaused) return PausedResult(deps_, request, outcome);
  return ResponseFor(definition_, request.trigger_event, run.execution_id(), outcome);
}

RunResult AgentExecutor::Refuse(const RunRequest& request, const std::string& code, const std::string& message) {
  AgentOutcome outcome;
  outcome.kind = AgentOutcome::Kind::kError;
  outcome.code = code;
  outcome.message = message;
  outcome.model = definition_.model;
  return ResponseFor(definition_, request.trigger_event, request.execution_id, outcome);
}

}  // namespace cairn::exec
