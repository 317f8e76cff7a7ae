#include "exec/agents/agent_executor.h"

#include <cstdio>

#include "exec/agents/agent_run.h"

namespace cairn::exec {
namespace json = boost::json;
namespace {

uint64_t Fnv1a(std::string_view text, uint64_t hash) {
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  return hash;
}

// The request the response answers: the trigger's context.request_id, else the trigger's id.
std::string RequestIdOf(const model::Event& trigger) {
  const json::value* id = trigger.context.is_object() ? trigger.context.as_object().if_contains("request_id") : nullptr;
  return id && id->is_string() && !id->as_string().empty() ? std::string(id->as_string()) : trigger.breadcrumb_id;
}

json::object UsageJson(const llm::Usage& usage) {
  return json::object{{"prompt", usage.prompt}, {"completion", usage.completion}, {"total", usage.total}};
}

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

RunResult ResponseFor(const model::AgentDefinition& def, const model::Event& trigger, const std::string& execution_id,
                      const AgentOutcome& outcome) {
  RunResult result;
  std::string request_id = RequestIdOf(trigger);
  model::BreadcrumbDraft& d = result.response;
  d.tags = ResponseTags(def, trigger, request_id);
  const AgentState& state = outcome.state;
  if (outcome.kind == AgentOutcome::Kind::kAnswer && def.output) {
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
      result.error_message = outcome.code + ": " + outcome.message;
    } else {
      context["message"] = outcome.message;
    }
    if (!outcome.stop_reason.empty()) context["stop_reason"] = outcome.stop_reason;
    d.context = std::move(context);
  }
  result.execution_fields = json::object{{"execution_id", execution_id},
                                         {"agent_id", def.agent_id},
                                         {"model", outcome.model},
                                         {"steps", state.step},
                                         {"usage", UsageJson(state.usage)},
                                         {"last_snapshot_id", state.last_snapshot_id}};
  if (!outcome.stop_reason.empty()) result.execution_fields["stop_reason"] = outcome.stop_reason;
  return result;
}

}  // namespace

std::string AgentExecutionId(const std::string& owner_id, const std::string& execution_path) {
  std::string key = owner_id + "\n" + execution_path;
  char out[33];
  std::snprintf(out, sizeof out, "%016llx%016llx", static_cast<unsigned long long>(Fnv1a(key, 14695981039346656037ULL)),
                static_cast<unsigned long long>(Fnv1a(key, 0x9e3779b97f4a7c15ULL)));
  return out;
}

AgentExecutor::AgentExecutor(model::AgentDefinition definition, AgentDeps deps)
    : definition_(std::move(definition)), deps_(std::move(deps)) {}

RunResult AgentExecutor::Run(const RunRequest& request) {
  AgentRun run(definition_, deps_, request);
  AgentOutcome outcome = run.Execute();
  return ResponseFor(definition_, request.trigger_event, run.execution_id(), outcome);
}

RunResult AgentExecutor::Refuse(const RunRequest& request, const std::string& code, const std::string& message) {
  AgentOutcome outcome;
  outcome.kind = AgentOutcome::Kind::kError;
  outcome.code = code;
  outcome.message = message;
  outcome.model = definition_.model;
  std::string execution_id = AgentExecutionId(request.trigger_event.owner_id, request.execution_path);
  return ResponseFor(definition_, request.trigger_event, execution_id, outcome);
}

}  // namespace cairn::exec
