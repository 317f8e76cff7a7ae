#include "model/workflow_definition.h"

#include <map>
#include <set>

#include "model/definition_fields.h"
#include "model/json_schema.h"

namespace cairn::model {
namespace json = boost::json;
namespace {

constexpr int64_t kMaxStepTimeoutMs = 3'600'000;
constexpr int64_t kMaxRunTimeoutMs = 86'400'000;

bool IsStepId(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!letter(id[0])) return false;
  for (char c : id) {
    if (!letter(c) && !(c >= '0' && c <= '9')) return false;
  }
  return true;
}

Result<std::string> RequireExpression(const json::value& value, const std::string& field) {
  CAIRN_ASSIGN_OR_RETURN(std::string text, RequireString(value, field, kMaxExpressionBytes));
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return Status::Validation(field, "must be a CEL expression");
  if (text.find("${{") != std::string::npos) {
    return Status::Validation(field, "is a CEL expression itself: write it without ${{ }}");
  }
  return text;
}

// Every string of a template splits into parts (SplitTemplate), so a broken one is refused here.
Status CheckTemplate(const json::value& value, const std::string& field, size_t depth = 0) {
  if (depth > 32) return Status::Validation(field, "is nested too deeply (at most 32 levels)");
  if (value.is_string()) return SplitTemplate(value.as_string(), field).status();
  if (value.is_array()) {
    const json::array& items = value.as_array();
    for (size_t i = 0; i < items.size(); ++i) {
      CAIRN_RETURN_IF_ERROR(CheckTemplate(items[i], field + "[" + std::to_string(i) + "]", depth + 1));
    }
  } else if (value.is_object()) {
    for (const auto& [key, member] : value.as_object()) {
      CAIRN_RETURN_IF_ERROR(CheckTemplate(member, field + "." + std::string(key), depth + 1));
    }
  }
  return Status::Ok();
}

Result<StepRetry> ParseRetry(const json::value& value, const std::string& field) {
  if (!value.is_object()) return Status::Validation(field, "must be an object {max_attempts, backoff_ms, max_backoff_ms}");
  StepRetry retry;
  for (const auto& [key, member] : value.as_object()) {
    std::string at = field + "." + std::string(key);
    if (key == "max_attempts") {
      CAIRN_ASSIGN_OR_RETURN(retry.max_attempts, RequireInt(member, at, 1, 10));
    } else if (key == "backoff_ms") {
      CAIRN_ASSIGN_OR_RETURN(retry.backoff_ms, RequireInt(member, at, 0, 600'000));
    } else if (key == "max_backoff_ms") {
      CAIRN_ASSIGN_OR_RETURN(retry.max_backoff_ms, RequireInt(member, at, 0, 3'600'000));
    } else {
      return Status::Validation(at, "unknown field (max_attempts, backoff_ms, max_backoff_ms)");
    }
  }
  if (retry.max_backoff_ms < retry.backoff_ms) return Status::Validation(field + ".max_backoff_ms", "must be at least backoff_ms");
  return retry;
}

Result<WorkflowStep> ParseStep(const json::value& value, const std::string& field) {
  if (!value.is_object()) return Status::Validation(field, "must be an object {id, tool | agent | workflow, ...}");
  WorkflowStep step;
  int targets = 0;
  bool has_id = false;
  for (const auto& [key, member] : value.as_object()) {
    std::string at = field + "." + std::string(key);
    if (key == "id") {
      CAIRN_ASSIGN_OR_RETURN(step.id, RequireString(member, at, 64));
      if (!IsStepId(step.id)) return Status::Validation(at, "must be 1 to 64 of A-Z a-z 0-9 _, not starting with a digit");
      has_id = true;
    } else if (key == "tool" || key == "agent" || key == "workflow") {
      CAIRN_ASSIGN_OR_RETURN(step.target, RequireString(member, at, 64));
      if (!IsValidDefinitionName(step.target)) return Status::Validation(at, "must be a name (1 to 64 of A-Z a-z 0-9 _ -)");
      step.kind = key == "tool" ? StepKind::kTool : key == "agent" ? StepKind::kAgent : StepKind::kWorkflow;
      ++targets;
    } else if (key == "input") {
      CAIRN_RETURN_IF_ERROR(CheckTemplate(member, at));
      step.input = member;
    } else if (key == "needs") {
      CAIRN_ASSIGN_OR_RETURN(step.needs, RequireStrings(member, at, false));
    } else if (key == "when") {
      CAIRN_ASSIGN_OR_RETURN(step.when, RequireExpression(member, at));
    } else if (key == "for_each") {
      CAIRN_ASSIGN_OR_RETURN(step.for_each, RequireExpression(member, at));
    } else if (key == "concurrency") {
      CAIRN_ASSIGN_OR_RETURN(step.concurrency, RequireInt(member, at, 1, 32));
    } else if (key == "retry") {
      CAIRN_ASSIGN_OR_RETURN(step.retry, ParseRetry(member, at));
    } else if (key == "timeout_ms") {
      CAIRN_ASSIGN_OR_RETURN(step.timeout_ms, RequireInt(member, at, 1, kMaxStepTimeoutMs));
    } else if (key == "on_error") {
      if (!member.is_string() || (member.as_string() != "fail" && member.as_string() != "continue")) {
        return Status::Validation(at, "must be \"fail\" or \"continue\"");
      }
      step.continue_on_error = member.as_string() == "continue";
    } else {
      return Status::Validation(at, "unknown field (id, tool, agent, workflow, input, needs, when, for_each, concurrency, "
                                    "retry, timeout_ms, on_error)");
    }
  }
  if (!has_id) return Status::Validation(field + ".id", "is required");
  if (targets != 1) return Status::Validation(field, "must name exactly one of tool, agent or workflow");
  return step;
}

// Orders `steps` so that each follows its needs; refuses unknown needs and cycles.
Status OrderSteps(std::vector<WorkflowStep>& steps) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (!index.emplace(steps[i].id, i).second) {
      return Status::Validation("context.steps[" + std::to_string(i) + "].id", "repeats the step id " + steps[i].id);
    }
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    for (size_t n = 0; n < steps[i].needs.size(); ++n) {
      const std::string& need = steps[i].needs[n];
      std::string at = "context.steps[" + std::to_string(i) + "].needs[" + std::to_string(n) + "]";
      if (!index.count(need)) return Status::Validation(at, "names no step: " + need);
      if (need == steps[i].id) return Status::Validation(at, "a step cannot need itself");
    }
  }
  std::vector<WorkflowStep> ordered;
  std::set<std::string> placed;
  std::vector<bool> done(steps.size(), false);
  while (ordered.size() < steps.size()) {
    bool progressed = false;
    for (size_t i = 0; i < steps.size(); ++i) {
      if (done[i]) continue;
      bool ready = true;
      for (const auto& need : steps[i].needs) ready = ready && placed.count(need);
      if (!ready) continue;
      done[i] = true;
      placed.insert(steps[i].id);
      ordered.push_back(steps[i]);
      progressed = true;
    }
    if (!progressed) {
      std::string cycle;
      for (size_t i = 0; i < steps.size(); ++i) {
        if (!done[i]) cycle += (cycle.empty() ? "" : ", ") + steps[i].id;
      }
      return Status::Validation("context.steps", "the needs form a cycle among: " + cycle);
    }
  }
  steps = std::move(ordered);
  return Status::Ok();
}

}  // namespace

std::string_view StepKindName(StepKind kind) {
  switch (kind) {
    case StepKind::kTool: return "tool";
    case StepKind::kAgent: return "agent";
    case StepKind::kWorkflow: return "workflow";
  }
  return "tool";
}

std::string WorkflowPath(const std::string& name) { return "workflows/" + name; }

Subscription WorkflowRequestTrigger(const std::string& name) {
  Subscription sub;
  sub.selector.schema_name = std::string(kWorkflowRequestSchema);
  sub.selector.context_match.push_back(ContextRule{"$.workflow", RuleOp::kEq, json::value(name)});
  sub.selector.types = {"breadcrumb.created"};
  sub.role = SubscriptionRole::kTrigger;
  sub.key = std::string(kWorkflowRequestSchema);
  return sub;
}

Result<std::vector<TemplatePart>> SplitTemplate(std::string_view text, const std::string& field) {
  std::vector<TemplatePart> parts;
  size_t at = 0;
  while (at < text.size()) {
    size_t open = text.find("${{", at);
    if (open == std::string_view::npos) {
      parts.push_back({false, std::string(text.substr(at))});
      break;
    }
    if (open > at) parts.push_back({false, std::string(text.substr(at, open - at))});
    size_t close = text.find("}}", open + 3);
    if (close == std::string_view::npos) {
      return Status::Validation(field, "has a ${{ without its }} (at byte " + std::to_string(open) + ")");
    }
    std::string_view inner = text.substr(open + 3, close - open - 3);
    size_t first = inner.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) {
      return Status::Validation(field, "has an empty ${{ }} (at byte " + std::to_string(open) + ")");
    }
    size_t last = inner.find_last_not_of(" \t\r\n");
    if (last - first + 1 > kMaxExpressionBytes) {
      return Status::Validation(field, "has an expression longer than " + std::to_string(kMaxExpressionBytes) + " bytes");
    }
    parts.push_back({true, std::string(inner.substr(first, last - first + 1))});
    at = close + 2;
  }
  return parts;
}

Result<WorkflowDefinition> ParseWorkflowDefinition(const json::value& context, const Limits& limits) {
  if (!context.is_object()) return Status::Validation("context", "a workflow.def.v1 context must be an object");
  WorkflowDefinition def;
  bool has_name = false, has_steps = false;
  for (const auto& [key, value] : context.as_object()) {
    std::string field = "context." + std::string(key);
    if (key == "name") {
      CAIRN_ASSIGN_OR_RETURN(def.name, RequireString(value, field, 64));
      if (!IsValidDefinitionName(def.name)) return Status::Validation(field, "must be 1 to 64 of A-Z a-z 0-9 _ -");
      has_name = true;
    } else if (key == "description") {
      CAIRN_ASSIGN_OR_RETURN(def.description, RequireString(value, field, 16 * 1024));
    } else if (key == "input_schema") {
      CAIRN_RETURN_IF_ERROR(ValidateSchemaDefinition(value, field));
      def.input_schema = value;
    } else if (key == "steps") {
      if (!value.is_array() || value.as_array().empty() || value.as_array().size() > kMaxWorkflowSteps) {
        return Status::Validation(field, "must be an array of 1 to " + std::to_string(kMaxWorkflowSteps) + " steps");
      }
      for (size_t i = 0; i < value.as_array().size(); ++i) {
        CAIRN_ASSIGN_OR_RETURN(WorkflowStep step, ParseStep(value.as_array()[i], field + "[" + std::to_string(i) + "]"));
        step.position = i;
        def.steps.push_back(std::move(step));
      }
      has_steps = true;
    } else if (key == "output") {
      CAIRN_RETURN_IF_ERROR(CheckTemplate(value, field));
      def.output = value;
    } else if (key == "subscriptions") {
      if (!value.is_object()) return Status::Validation(field, "must be an object {\"selectors\": [...]}");
      for (const auto& [sub_key, sub_value] : value.as_object()) {
        if (sub_key != "selectors") return Status::Validation(field + "." + std::string(sub_key), "unknown field (selectors)");
        CAIRN_ASSIGN_OR_RETURN(def.subscriptions, ParseSubscriptions(sub_value, field + ".selectors", limits));
      }
    } else if (key == "concurrency") {
      CAIRN_ASSIGN_OR_RETURN(def.concurrency, RequireInt(value, field, 1, 64));
    } else if (key == "timeout_ms") {
      CAIRN_ASSIGN_OR_RETURN(def.timeout_ms, RequireInt(value, field, 1, kMaxRunTimeoutMs));
    } else {
      return Status::Validation(field, "unknown field (name, description, input_schema, steps, output, subscriptions, "
                                       "concurrency, timeout_ms)");
    }
  }
  if (!has_name) return Status::Validation("context.name", "is required");
  if (!has_steps) return Status::Validation("context.steps", "is required");
  CAIRN_RETURN_IF_ERROR(OrderSteps(def.steps));
  for (const auto& sub : def.subscriptions) {
    if (sub.key == kWorkflowRequestSchema) {
      return Status::Validation("context.subscriptions.selectors",
                                "the key " + sub.key + " is the workflow's own request trigger; name the entry otherwise");
    }
  }
  def.subscriptions.insert(def.subscriptions.begin(), WorkflowRequestTrigger(def.name));
  return def;
}

Status ValidateWorkflowRequest(const json::value& context) {
  if (!context.is_object()) return Status::Validation("context", "a workflow.request.v1 context must be an object");
  bool has_workflow = false;
  for (const auto& [key, value] : context.as_object()) {
    std::string field = "context." + std::string(key);
    if (key == "workflow") {
      if (!value.is_string() || !IsValidDefinitionName(value.as_string())) {
        return Status::Validation(field, "must be a workflow name (1 to 64 of A-Z a-z 0-9 _ -)");
      }
      has_workflow = true;
    } else if (key == "input") {
      // any JSON; the workflow's input_schema judges it when the run starts
    } else if (auto checked = CheckRequestField(key, value, field)) {
      CAIRN_RETURN_IF_ERROR(*checked);
    } else {
      return Status::Validation(field, "unknown field (workflow, input, request_id, requested_by, execution_id, "
                                       "root_execution_id, execution_depth, session_id)");
    }
  }
  if (!has_workflow) return Status::Validation("context.workflow", "is required");
  return Status::Ok();
}

}  // namespace cairn::model
