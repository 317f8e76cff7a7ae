#include "model/agent_definition.h"

#include <boost/json/object.hpp>

#include "model/breadcrumb_codec.h"
#include "model/definition_fields.h"
#include "model/json_schema.h"
#include "model/secret_ref.h"

namespace cairn::model {
namespace json = boost::json;
namespace {

constexpr int64_t kMaxTimeoutMs = 3'600'000;

Subscription DefaultTrigger(const std::string& agent_id) {
  Subscription sub;
  sub.selector.schema_name = std::string(kUserMessageSchema);
  sub.selector.context_match.push_back(ContextRule{"$.agent_id", RuleOp::kEq, json::value(agent_id)});
  sub.selector.types = {"breadcrumb.created"};
  sub.key = std::string(kUserMessageSchema);
  return sub;
}

Result<AgentOutput> ParseOutput(const json::value& value, const std::string& field, const Limits& limits) {
  if (!value.is_object()) return Status::Validation(field, "must be an object {schema_name, tags, schema}");
  AgentOutput out;
  out.schema = json::object{{"type", "object"}};
  bool has_schema_name = false;
  for (const auto& [key, item] : value.as_object()) {
    std::string at = field + "." + std::string(key);
    if (key == "schema_name") {
      CAIRN_ASSIGN_OR_RETURN(out.schema_name, RequireString(item, at, limits.max_schema_name_bytes));
      CAIRN_RETURN_IF_ERROR(ValidateSchemaName(at, out.schema_name, limits));
      // The model's JSON must not become a tool request, a definition or a session record.
      if (out.schema_name.rfind("tool.", 0) == 0 || out.schema_name.rfind("agent.", 0) == 0 ||
          out.schema_name == kUserMessageSchema) {
        return Status::Validation(at, "'" + out.schema_name + "' is reserved; name a schema of your own");
      }
      has_schema_name = !out.schema_name.empty();
    } else if (key == "tags") {
      CAIRN_ASSIGN_OR_RETURN(out.tags, RequireStrings(item, at, false));
    } else if (key == "schema") {
      CAIRN_RETURN_IF_ERROR(ValidateSchemaDefinition(item, at));
      out.schema = item;
    } else {
      return Status::Validation(at, "unknown field (schema_name, tags, schema)");
    }
  }
  if (!has_schema_name) return Status::Validation(field + ".schema_name", "is required");
  return out;
}

Status ParseField(AgentDefinition& def, std::string_view key, const json::value& value, const std::string& field,
                  const Limits& limits, bool& has_selectors) {
  if (key == "description") {
    CAIRN_ASSIGN_OR_RETURN(def.description, RequireString(value, field, 16 * 1024));
  } else if (key == "model") {
    CAIRN_ASSIGN_OR_RETURN(def.model, RequireString(value, field, 256));
  } else if (key == "temperature") {
    if (!value.is_number() || value.to_number<double>() < 0 || value.to_number<double>() > 2) {
      return Status::Validation(field, "must be a number from 0 to 2");
    }
    def.temperature = value.to_number<double>();
  } else if (key == "system_prompt") {
    CAIRN_ASSIGN_OR_RETURN(def.system_prompt, RequireString(value, field, 64 * 1024));
  } else if (key == "subscriptions") {
    if (!value.is_object()) return Status::Validation(field, "must be an object {\"selectors\": [...]}");
    for (const auto& [sub_key, sub_value] : value.as_object()) {
      if (sub_key != "selectors") return Status::Validation(field + "." + std::string(sub_key), "unknown field (selectors)");
      CAIRN_ASSIGN_OR_RETURN(def.subscriptions, ParseSubscriptions(sub_value, field + ".selectors", limits));
      has_selectors = !def.subscriptions.empty();
    }
  } else if (key == "tools") {
    CAIRN_ASSIGN_OR_RETURN(def.tools, RequireStrings(value, field, false));
    for (size_t i = 0; i < def.tools.size(); ++i) {
      if (!IsValidDefinitionName(def.tools[i])) {
        return Status::Validation(field + "[" + std::to_string(i) + "]", "must be a tool name (1 to 64 of A-Z a-z 0-9 _ -)");
      }
    }
  } else if (key == "max_iterations") {
    CAIRN_ASSIGN_OR_RETURN(def.max_iterations, RequireInt(value, field, 1, 100));
  } else if (key == "max_tokens") {
    CAIRN_ASSIGN_OR_RETURN(def.max_tokens, RequireInt(value, field, 1, 1'000'000));
  } else if (key == "max_tokens_per_execution") {
    CAIRN_ASSIGN_OR_RETURN(def.max_tokens_per_execution, RequireInt(value, field, 1, 100'000'000));
  } else if (key == "stream") {
    if (!value.is_bool()) return Status::Validation(field, "must be true or false");
    def.stream = value.as_bool();
  } else if (key == "output") {
    CAIRN_ASSIGN_OR_RETURN(def.output, ParseOutput(value, field, limits));
  } else if (key == "timeout_ms") {
    CAIRN_ASSIGN_OR_RETURN(def.timeout_ms, RequireInt(value, field, 1, kMaxTimeoutMs));
  } else if (key == "tool_timeout_ms") {
    CAIRN_ASSIGN_OR_RETURN(def.tool_timeout_ms, RequireInt(value, field, 1, kMaxTimeoutMs));
  } else if (key == "concurrency") {
    CAIRN_ASSIGN_OR_RETURN(def.concurrency, RequireInt(value, field, 1, 64));
  } else if (key == "agents") {
    CAIRN_ASSIGN_OR_RETURN(def.agents, RequireStrings(value, field, false));
    for (size_t i = 0; i < def.agents.size(); ++i) {
      if (!IsValidDefinitionName(def.agents[i])) {
        return Status::Validation(field + "[" + std::to_string(i) + "]", "must be an agent id (1 to 64 of A-Z a-z 0-9 _ -)");
      }
    }
  } else if (key == "max_delegation_depth") {
    CAIRN_ASSIGN_OR_RETURN(def.max_delegation_depth, RequireInt(value, field, 1, 10));
  } else if (key == "max_children") {
    CAIRN_ASSIGN_OR_RETURN(def.max_children, RequireInt(value, field, 1, 256));
  } else if (key == "allow_secret_context") {
    if (!value.is_bool()) return Status::Validation(field, "must be true or false");
    def.allow_secret_context = value.as_bool();
  } else if (key == "context_budget_tokens") {
    CAIRN_ASSIGN_OR_RETURN(def.context_budget_tokens, RequireInt(value, field, 1, 10'000'000));
  } else if (key == "api_key") {
    // Only a reference: a key written into a definition would be stored and shown in plain text.
    CAIRN_ASSIGN_OR_RETURN(SecretOrValue reference, ParseSecretReference(value, field));
    def.api_key_secret = std::move(reference.secret_name);
  } else {
    return Status::Validation(field, "unknown field");
  }
  return Status::Ok();
}

}  // namespace

std::string AgentPath(const std::string& agent_id) { return "agents/" + agent_id; }

Result<AgentDefinition> ParseAgentDefinition(const json::value& context, const Limits& limits) {
  if (!context.is_object()) return Status::Validation("context", "an agent.def.v1 context must be an object");
  AgentDefinition def;
  bool has_id = false, has_selectors = false;
  for (const auto& [key, value] : context.as_object()) {
    std::string field = "context." + std::string(key);
    if (key == "agent_id") {
      CAIRN_ASSIGN_OR_RETURN(def.agent_id, RequireString(value, field, 64));
      if (!IsValidDefinitionName(def.agent_id)) return Status::Validation(field, "must be 1 to 64 of A-Z a-z 0-9 _ -");
      has_id = true;
    } else {
      CAIRN_RETURN_IF_ERROR(ParseField(def, key, value, field, limits, has_selectors));
    }
  }
  if (!has_id) return Status::Validation("context.agent_id", "is required");
  for (const auto& agent : def.agents) {
    // Its own writes never trigger an executor: a task to itself would never run.
    if (agent == def.agent_id) return Status::Validation("context.agents", "an agent cannot delegate to itself");
  }
  CAIRN_ASSIGN_OR_RETURN(def.subscriptions,
                         DefinitionSubscriptions(std::move(def.subscriptions), has_selectors, DefaultTrigger(def.agent_id)));
  return def;
}

}  // namespace cairn::model
